/// One mode's rules (SPEC.md: push, pull, list, check): what the mode finds wrong with a document,
/// and what it writes for a document it accepts.
///
/// A writer reads the facts the scanner found (``ScannedDocument``) and the document's compact
/// text; it never sees the input, the parser or the stream. ``DocumentHandler`` calls
/// ``findProblems(in:text:into:)`` for every document, then ``write(_:text:line:to:statistics:)``
/// for every document no error rejected (with `--check`, for every document that is an object).
protocol DocumentWriter: AnyObject {
  /// Adds the problems this mode's rules find in `document` to `problems`.
  func findProblems(
    in document: borrowing ScannedDocument, text: UnsafeBufferPointer<UInt8>,
    into problems: inout [Problem])

  /// Appends what this mode makes of `document` (which starts on input line `line`) to `output`.
  func write(
    _ document: borrowing ScannedDocument, text: UnsafeBufferPointer<UInt8>, line: Int,
    to output: inout ByteBuffer, statistics: inout Statistics)
}

/// The writer of `options.mode`.
func makeWriter(for options: ConversionOptions) -> any DocumentWriter {
  switch options.mode {
  case .push: PushWriter(options: options)
  case .pull: PullWriter(options: options)
  case .list: ListWriter()
  case .check: CheckWriter(options: options)
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
