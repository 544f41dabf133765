import CYajl

/// A problem found in the document being scanned, kept until the document ends.
struct PendingProblem {
  var kind: Diagnostic.Kind
  var severity: Diagnostic.Severity
  /// Where it is in the input, relative to the document's first byte.
  var inputOffset: Int
  var message: String
  /// The JSON Pointer of the problem's place (for `--check`).
  var pointer: String
}

/// Counters for `--stats`, summed over a run.
public struct Statistics: Sendable, Equatable {
  public var documents = 0
  /// Blob references found (outside `_attachments`).
  public var blobs = 0
  public var entriesAdded = 0
  public var entriesRemoved = 0
  public var warnings = 0
  /// Documents rejected (or, with `--check`, documents with a finding).
  public var errors = 0
  public var bytesIn = 0
  /// Bytes written to the output (counted where they are written).
  public var bytesOut = 0
  /// Rows written by `--list` or `--check`.
  public var rows = 0

  public init() {}

  public mutating func add(_ other: Statistics) {
    documents += other.documents
    blobs += other.blobs
    entriesAdded += other.entriesAdded
    entriesRemoved += other.entriesRemoved
    warnings += other.warnings
    errors += other.errors
    bytesIn += other.bytesIn
    bytesOut += other.bytesOut
    rows += other.rows
  }
}

/// Everything the yajl callbacks read and write while scanning a stream of documents.
///
/// It lives at a fixed address (the callbacks reach it through their context pointer) and is
/// made only of plain values and manually managed buffers, so the per-token path does no
/// reference counting and allocates nothing once the buffers have grown to fit.
struct ScanState {
  let options: ConversionOptions
  /// Container depth at which documents start: 0 for `lines`, 1 inside the `list` array.
  let documentDepth: Int
  /// Whether blob references need names (push, list, check).
  let needsNames: Bool
  let needsPointers: Bool
  /// What each key means where it is.
  let memberRules: MemberRules

  // MARK: Parser position (set by the stream driver before each `yajl_parse`)
  var handle: yajl_handle? = nil
  /// Base of the driver's input buffer; offsets below are relative to it.
  var input: UnsafeMutablePointer<UInt8>
  /// Offset of the chunk being parsed.
  var chunkBase = 0
  /// Offset just past the chunk being parsed.
  var chunkEnd = 0
  /// End of the last token seen.
  var previousEnd = 0

  // MARK: The document being scanned
  var frames = RawStack<Frame>(capacity: 64)
  var inDocument = false
  /// True while the next token is inside a document whose text is still the input itself
  /// (compact so far): the case ``locateToken()`` handles inline.
  var fastPath = false
  /// Input offset of the document's first byte.
  var documentStart = 0
  /// Line and line start (input offset) of the document's first byte.
  var documentLine = 1
  var documentLineStart = 0
  /// Whether the compact text is being copied into `text` (the input had whitespace).
  var copying = false
  var text = ByteBuffer(capacity: 1 << 16)
  /// The current token in output coordinates.
  var tokenStart = 0
  var tokenEnd = 0
  /// The current token's first byte in the input.
  var tokenInputStart = 0
  /// Where the current `_attachments` key starts in the input, relative to the document.
  var attachmentsKeyInput = 0
  var documentIsObject = false
  var problems: [PendingProblem] = []
  var exclusions = RawStack<Span>(capacity: 16)
  var blobExclusions = RawStack<Span>(capacity: 16)
  var blobs = RawStack<BlobReference>(capacity: 16)
  var entries = RawStack<LegacyEntry>(capacity: 16)
  var names = ByteBuffer(capacity: 1024)
  var scratch = ByteBuffer(capacity: 1024)
  var identifier: Span = .none
  var revision: Span = .none
  var attachmentsCount = 0
  var attachmentsMember: Span = .none
  var attachmentsValue: Span = .none
  var attachmentsIsObject = false
  var attachmentsInputStart = 0
  var attachmentsKind: ValueKind = .null

  // MARK: List framing
  var listOpened = false
  var listClosed = false
  var listElementsWritten = 0

  // MARK: Lines
  var lineCursor = 0
  var lineAtCursor = 1
  var lineStartAtCursor = 0

  // MARK: Results, drained by the driver
  var output = ByteBuffer(capacity: 1 << 17)
  var rejects = ByteBuffer(capacity: 1024)
  /// Where each rejected document falls in the output, so that output and rejects can be
  /// written in input order.
  var rejectMarks: [RejectMark] = []
  var diagnostics: [Diagnostic] = []
  var statistics = Statistics()
  /// Set when the run must stop after this document (a bad document without `--keep-going`).
  var stopRequested = false
  /// Set when the input cannot be read on (its framing is broken); the input is abandoned.
  var fatal = false
  /// A malformed-JSON finding of the slow whitespace path (a form feed), for the driver.
  var lexicalProblem: (offset: Int, message: String)? = nil

  init(options: ConversionOptions, input: UnsafeMutablePointer<UInt8>) {
    self.options = options
    self.documentDepth = options.framing == .list ? 1 : 0
    self.needsNames = options.mode != .pull
    self.needsPointers = options.mode == .list || options.mode == .check
    self.memberRules = MemberRules(options: options)
    self.input = input
  }

  func deallocate() {
    memberRules.deallocate()
    frames.deallocate()
    text.deallocate()
    exclusions.deallocate()
    blobExclusions.deallocate()
    blobs.deallocate()
    entries.deallocate()
    names.deallocate()
    scratch.deallocate()
    output.deallocate()
    rejects.deallocate()
  }

  /// The compact text of the current document (valid until the next token).
  @inline(__always)
  var documentText: UnsafeMutablePointer<UInt8> { copying ? text.base : input + documentStart }

  /// Forgets the current document, keeping the buffers' memory.
  mutating func resetDocument() {
    // With list framing the list's own frame stays open.
    frames.truncate(to: min(frames.count, documentDepth))
    inDocument = false
    fastPath = false
    copying = false
    text.count = 0
    documentIsObject = false
    if !problems.isEmpty { problems.removeAll(keepingCapacity: true) }
    exclusions.removeAll()
    blobExclusions.removeAll()
    blobs.removeAll()
    entries.removeAll()
    names.count = 0
    identifier = .none
    revision = .none
    attachmentsCount = 0
    attachmentsMember = .none
    attachmentsValue = .none
    attachmentsIsObject = false
  }

  /// Prepares for a new input (file): positions restart, list framing restarts.
  mutating func resetInput() {
    resetDocument()
    previousEnd = 0
    chunkBase = 0
    chunkEnd = 0
    lineCursor = 0
    lineAtCursor = 1
    lineStartAtCursor = 0
    listClosed = false
    fatal = false
    stopRequested = false
    lexicalProblem = nil
  }

  /// Moves every input offset down by `shift` after the driver discarded that many bytes.
  mutating func shiftInput(by shift: Int) {
    previousEnd -= shift
    documentStart -= shift
    documentLineStart -= shift
    lineCursor -= shift
    lineStartAtCursor -= shift
    chunkBase -= shift
    chunkEnd -= shift
  }
}

/// A rejected document's place: the output written before it, and the end of its text in the
/// rejects.
struct RejectMark: Sendable, Equatable {
  var outputOffset: Int
  var rejectsEnd: Int
}

extension ScanState {
  /// Saves a rejected document's original text (and a newline) for `--rejects`.
  mutating func addReject(_ text: UnsafeBufferPointer<UInt8>) {
    if let base = text.baseAddress { rejects.append(base, count: text.count) }
    rejects.append(UInt8(ascii: "\n"))
    rejectMarks.append(RejectMark(outputOffset: output.count, rejectsEnd: rejects.count))
  }
}

/// The type of a JSON value, as far as the rules care.
enum ValueKind: UInt8, BitwiseCopyable {
  case null, boolean, number, string, object, array

  var article: String {
    switch self {
    case .null: "null"
    case .boolean: "a boolean"
    case .number: "a number"
    case .string: "a string"
    case .object: "an object"
    case .array: "an array"
    }
  }
}
