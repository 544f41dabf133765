internal import CYajl

/// What the scanner asks of its caller after a token.
enum TokenOutcome: BitwiseCopyable {
  /// Go on with the next token.
  case next
  /// A document has just ended: its facts are in ``DocumentScanner/document``.
  case documentEnded
  /// Stop the parse; ``DocumentScanner/interruption`` says why.
  case stop
  /// A run of envelope members (``Role/members``) has ended before the current token, which is
  /// outside the documents: the run's text goes to the handler, then the token (in
  /// ``DocumentScanner/envelopeToken``) to the framer.
  case runEnded
  /// The token is outside the documents: ``DocumentScanner/envelopeToken`` is it, located, for
  /// the framer; ``DocumentScanner/apply(_:)`` takes its verdict.
  case envelope
}

/// Why the scanner stopped a parse by itself.
enum ScanInterruption {
  /// yajl accepted something JSON does not (a form feed or vertical tab as whitespace).
  case lexical(offset: StreamOffset, message: String)
  /// The input is not framed as it must be (with list framing: not one array).
  case framing(offset: StreamOffset, message: String)
}

/// Which names blobs get while they are scanned.
struct NameRequest: BitwiseCopyable {
  /// The naming of each blob's ``BlobReference/name``, or nil when no mode needs one (pull).
  var naming: AttachmentNaming?
  /// Whether each blob also gets its JSON Pointer (list, check).
  var pointers: Bool

  init(options: ConversionOptions) {
    switch options.mode {
    case .push: naming = AttachmentNaming(options.naming)
    case .pull: naming = options.updateBlobs ? AttachmentNaming(.jsonpath) : nil
    case .list: naming = AttachmentNaming(.jsonpath)
    case .check: naming = AttachmentNaming(options.naming)
    case .upgrade: naming = AttachmentNaming(.jsonpath)
    }
    pointers =
      options.mode == .list || options.mode == .check || options.mode == .upgrade
      || options.updateBlobs
  }
}

/// The per-token stage: follows yajl's tokens through a stream of documents and produces the
/// facts of each (``ScannedDocument``).
///
/// It owns the parse position, the open containers and the document's compact text. It reads the
/// input only through the ``InputView`` of the piece being parsed (``view``), by stream offset;
/// it knows nothing of lines, modes, envelopes or output: tokens outside the documents go to the
/// framer (``TokenOutcome/envelope``), which says where documents start. yajl's callbacks (``ScanCallbacks``) call it through
/// a context pointer, so it lives at a fixed address and allocates nothing per token once its
/// buffers have grown to fit.
struct DocumentScanner: ~Copyable {
  /// Whether a top-level array gets the hint to use `--format list` (`lines`, path `.`).
  let suggestsListFormat: Bool
  let nameRequest: NameRequest
  /// What each key means where it is.
  let memberRules: MemberRules
  /// `--upgrade`: the top-level key the new blobs go in (decoded UTF-8).
  let upgradeInto: [UInt8]?
  /// Push with `--blobs`: a blob's inline `data` is left out of its entry's copied members, for
  /// the entry writes it last.
  let movesBlobData: Bool

  // MARK: Parser position (set by the driver before each piece is parsed)

  var handle: yajl_handle? = nil
  /// The input bytes of the piece being parsed (and all before it still held).
  var view: InputView
  /// The piece being parsed.
  var chunkStart = StreamOffset.zero
  var chunkEnd = StreamOffset.zero
  /// End of the last token seen.
  var previousEnd = StreamOffset.zero

  // MARK: The current token

  /// The current token in compact-text coordinates.
  var tokenStart = 0
  var tokenEnd = 0
  /// Where the current token starts in the input.
  var tokenInputStart = StreamOffset.zero

  // MARK: The document being scanned

  /// The document's open containers (none between documents).
  var frames = RawStack<Frame>(capacity: 64)
  /// Members of the open candidate objects left out of a blob's entry (`@type`, ...).
  var exclusions = RawStack<Span>(capacity: 16)
  private(set) var inDocument = false
  /// True while the next token is inside a document whose compact text is still the input
  /// itself: the case ``locateToken(end:)`` handles inline.
  var fastPath = false
  /// Whether the compact text is being copied into ``text`` (the input had whitespace).
  var copying = false
  var text: ByteBuffer
  /// Where the current `_attachments` key starts in the input, and the current key of one of its
  /// entries.
  var attachmentsKeyOffset = StreamOffset.zero
  var entryKeyOffset = StreamOffset.zero
  /// The facts of the document, complete when ``TokenOutcome/documentEnded`` is returned.
  var document = ScannedDocument()
  var scratch = ByteBuffer(capacity: 256)

  /// The last token outside the documents, for the framer.
  var envelopeToken = EnvelopeToken(
    kind: .close, separator: 0, start: .zero, end: .zero,
    key: UnsafeBufferPointer(start: nil, count: 0))

  /// The member name that ends the run of envelope members being read (``Role/members``).
  var runStop = UnsafeBufferPointer<UInt8>(start: nil, count: 0)

  /// Why the last parse was stopped by the scanner, if it was.
  var interruption: ScanInterruption? = nil

  init(options: ConversionOptions, view: InputView, textCapacity: Int) {
    suggestsListFormat = options.framing == .lines && options.documents.steps.isEmpty
    nameRequest = NameRequest(options: options)
    memberRules = MemberRules(options: options)
    upgradeInto = options.mode == .upgrade ? Array(options.upgradeInto.utf8) : nil
    movesBlobData = options.mode == .push && options.blobs != nil
    self.view = view
    text = ByteBuffer(capacity: textCapacity)
  }

  /// The compact text of the current document (valid until the next token).
  @inline(__always)
  var documentText: UnsafeMutablePointer<UInt8> {
    copying ? text.base : UnsafeMutablePointer(mutating: view.pointer(at: document.start))
  }

  /// The whole compact text of a document that has just ended.
  var finishedText: UnsafeBufferPointer<UInt8> {
    UnsafeBufferPointer(start: documentText, count: tokenEnd)
  }

  /// Whether the innermost container the scanner has open is an array (a run's object
  /// included); nil when it has none open (the framer may have).
  var innermostIsArray: Bool? { frames.isEmpty ? nil : frames[frames.count - 1].isArray }

  /// Where the document being scanned starts in the input, if one is open.
  var openDocumentStart: StreamOffset? { inDocument ? document.start : nil }

  /// Starts a document whose first byte is at `offset`.
  mutating func beginDocument(at offset: StreamOffset) {
    inDocument = true
    document.start = offset
    copying = false
  }

  /// Forgets the current document (after it ended or was abandoned), keeping buffers' memory.
  mutating func resetDocument() {
    closeValue()
    exclusions.removeAll()
    document.reset()
  }

  /// Forgets the open containers and the compact text of the value just handed over.
  private mutating func closeValue() {
    frames.removeAll()
    inDocument = false
    fastPath = false
    copying = false
    text.count = 0
  }

  /// Forgets a run of envelope members that has just been handed over. A run holds only inert
  /// containers, so of the document's facts only its kind and place were set.
  mutating func resetEnvelopeValue() {
    closeValue()
    document.rootKind = .null
    document.textIsInput = true
    document.isEnvelopeValue = false
    document.isMemberRun = false
  }

  /// Prepares for a new input: positions restart at 0, list framing restarts.
  mutating func restart(at offset: StreamOffset = .zero) {
    resetDocument()
    frames.removeAll()
    previousEnd = offset
    chunkStart = offset
    chunkEnd = offset
    tokenInputStart = offset
    interruption = nil
  }

  /// The parser was replaced after an error: no container is open any more.
  mutating func parserReplaced() { frames.removeAll() }
}
