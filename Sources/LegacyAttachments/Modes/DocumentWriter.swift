/// One mode's rules (docs/formats.md: push, pull, list, check): what the mode finds wrong with a document,
/// and what it writes for a document it accepts.
///
/// A writer reads the facts the scanner found (``ScannedDocument``) and the document's compact
/// text; it never sees the input, the parser or the stream. It holds only its options; the
/// buffers it works in are lent to it (``WriterWorkspace``). ``DocumentHandler`` calls
/// ``findProblems(in:text:into:workspace:)`` for every document, then
/// ``write(_:text:line:to:statistics:workspace:)`` for every document no error rejected (with
/// `--check`, for every document that is an object).
protocol DocumentWriter {
  /// Adds the problems this mode's rules find in `document` to `problems`.
  func findProblems(
    in document: borrowing ScannedDocument, text: UnsafeBufferPointer<UInt8>,
    into problems: inout [Problem], workspace: inout WriterWorkspace)

  /// Appends what this mode makes of `document` (which starts on input line `line`) to `output`.
  /// What it finds only while writing (a body that does not match its digest, a missing file)
  /// goes to `problems`: an error there rejects the document, and what was appended is taken
  /// back. A failure of the blob store that ends the run is returned.
  func write(
    _ document: borrowing ScannedDocument, text: UnsafeBufferPointer<UInt8>, line: Int,
    to output: inout ByteBuffer, statistics: inout ConversionStatistics,
    workspace: inout WriterWorkspace,
    problems: inout [Problem]
  ) -> ConversionIOError?
}

/// Scratch memory the writers work in, kept from one document to the next.
struct WriterWorkspace: ~Copyable {
  /// Decoded strings.
  var scratch = ByteBuffer(capacity: 256)
  /// Members to leave out of an object.
  var removed = RawStack<Span>(capacity: 16)
  /// Text built to be measured, not written (`--check`).
  var measured = ByteBuffer(capacity: 1024)
  /// Where bodies are read into from the blob store (grown to 1 MiB when first used).
  var bodyBuffer = ByteBuffer(capacity: 0)
  /// Where the document is in its envelope (`.results[3].doc`), for rows, when the path is not
  /// `.` (``hasDocumentPath``).
  var documentPath = ByteBuffer(capacity: 64)
  var hasDocumentPath = false
  /// What carrying bodies keeps: the files the document being written stored, the compression
  /// level of the run's CouchDB.
  var bodies = BodyWorkspace()
  /// `--upgrade`: the plan `findProblems` made for the document `write` converts next.
  var upgradePlan: UpgradeWriter.Plan? = nil
  /// Pull: what `findProblems` decided for each entry of the document `write` converts next
  /// (``PullWriter/EntryDecisions``), so that no entry is matched against the blobs twice.
  var pullDecisions = PullWriter.EntryDecisions()

  /// ``documentPath`` when the document has one.
  var path: UnsafeBufferPointer<UInt8>? { hasDocumentPath ? documentPath.bytes : nil }
}

/// The writer of a run's mode, chosen once: a switch, so every call is direct.
enum ModeWriter {
  case push(PushWriter)
  case pull(PullWriter)
  case list(ListWriter)
  case check(CheckWriter)
  case upgrade(UpgradeWriter)

  init(options: ConversionOptions, store: BlobStore?) {
    switch options.mode {
    case .push: self = .push(PushWriter(options: options, store: store))
    case .pull: self = .pull(PullWriter(options: options, store: store))
    case .list: self = .list(ListWriter(store: store))
    case .check: self = .check(CheckWriter(options: options, store: store))
    case .upgrade: self = .upgrade(UpgradeWriter(options: options, store: store))
    }
  }

  func findProblems(
    in document: borrowing ScannedDocument, text: UnsafeBufferPointer<UInt8>,
    into problems: inout [Problem], workspace: inout WriterWorkspace
  ) {
    switch self {
    case .push(let writer):
      writer.findProblems(in: document, text: text, into: &problems, workspace: &workspace)
    case .pull(let writer):
      writer.findProblems(in: document, text: text, into: &problems, workspace: &workspace)
    case .list(let writer):
      writer.findProblems(in: document, text: text, into: &problems, workspace: &workspace)
    case .check(let writer):
      writer.findProblems(in: document, text: text, into: &problems, workspace: &workspace)
    case .upgrade(let writer):
      writer.findProblems(in: document, text: text, into: &problems, workspace: &workspace)
    }
  }

  func write(
    _ document: borrowing ScannedDocument, text: UnsafeBufferPointer<UInt8>, line: Int,
    to output: inout ByteBuffer, statistics: inout ConversionStatistics,
    workspace: inout WriterWorkspace,
    problems: inout [Problem]
  ) -> ConversionIOError? {
    switch self {
    case .push(let writer):
      writer.write(
        document, text: text, line: line, to: &output, statistics: &statistics,
        workspace: &workspace, problems: &problems)
    case .pull(let writer):
      writer.write(
        document, text: text, line: line, to: &output, statistics: &statistics,
        workspace: &workspace, problems: &problems)
    case .list(let writer):
      writer.write(
        document, text: text, line: line, to: &output, statistics: &statistics,
        workspace: &workspace, problems: &problems)
    case .check(let writer):
      writer.write(
        document, text: text, line: line, to: &output, statistics: &statistics,
        workspace: &workspace, problems: &problems)
    case .upgrade(let writer):
      writer.write(
        document, text: text, line: line, to: &output, statistics: &statistics,
        workspace: &workspace, problems: &problems)
    }
  }
}

extension ScannedDocument {
  /// The decoded text of the string token `span` of `text`, as a String (for messages).
  func string(_ span: Span, in text: UnsafeBufferPointer<UInt8>) -> String {
    String(
      decoding: JSONText.decodeString(UnsafeBufferPointer(rebasing: text[span.start..<span.end])),
      as: UTF8.self)
  }

  /// A blob's name, as a String (for messages).
  func nameString(of blob: BlobReference) -> String {
    String(decoding: name(blob.name), as: UTF8.self)
  }
}
