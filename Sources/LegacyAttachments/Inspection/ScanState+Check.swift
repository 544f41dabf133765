import Glibc

/// Sync Gateway's limits that `--check` measures against.
enum SyncGatewayLimits {
  /// The largest attachment Couchbase Server stores (its document size limit): 20 MiB.
  static let attachmentBytes = 20 * 1024 * 1024
  /// The most attachment metadata a document's sync metadata holds: 1 MiB.
  static let metadataBytes = 1024 * 1024
}

extension ScanState {
  /// `--check`: one finding row per problem of the current document.
  mutating func appendFindings() {
    let findingsBefore = statistics.rows
    for problem in problems {
      appendFinding(
        problem: problem.kind.rawValue, pointer: problem.pointer, detail: problem.message)
    }
    if documentIsObject { appendSizeFindings() }
    if statistics.rows > findingsBefore { statistics.errors += 1 }
  }

  private mutating func appendSizeFindings() {
    let text = documentText
    for index in 0..<blobs.count {
      let blob = blobs[index]
      if let size = numberValue(blob.length, text: text),
        size > Double(SyncGatewayLimits.attachmentBytes)
      {
        appendTooLarge(
          size: blob.length,
          pointer: String(decoding: names.bytes.slice(blob.pointer), as: UTF8.self),
          text: text)
      }
    }
    // Entries an earlier push made mirror blobs already checked above; push replaces them.
    for index in 0..<entries.count where entries[index].isObject && !entries[index].isSynthesized {
      let entry = entries[index]
      if let size = numberValue(entry.length, text: text),
        size > Double(SyncGatewayLimits.attachmentBytes)
      {
        scratch.count = 0
        scratch.append("/_attachments/")
        appendPointerKey(entry.key, text: text)
        appendTooLarge(
          size: entry.length, pointer: String(decoding: scratch.bytes, as: UTF8.self), text: text)
      }
    }
    guard attachmentsCount == 0 || (attachmentsCount == 1 && attachmentsIsObject) else { return }
    let mark = output.count
    appendPushedAttachments(text)
    let metadata = output.count - mark
    output.count = mark
    if metadata > SyncGatewayLimits.metadataBytes {
      appendFinding(
        problem: "metadata-too-large", pointer: "/_attachments",
        detail: "the _attachments that push produces is \(metadata) bytes of JSON; Sync Gateway"
          + " keeps at most \(SyncGatewayLimits.metadataBytes) bytes (1 MiB) of attachment"
          + " metadata per document")
    }
  }

  private mutating func appendTooLarge(size: Span, pointer: String, text: UnsafePointer<UInt8>) {
    let literal = String(
      decoding: UnsafeBufferPointer(start: text + size.start, count: size.count), as: UTF8.self)
    appendFinding(
      problem: "attachment-too-large", pointer: pointer,
      detail: "attachment length is \(literal) bytes; Sync Gateway accepts at most"
        + " \(SyncGatewayLimits.attachmentBytes) bytes (20 MiB)")
  }

  /// The value of a number token, or nil when `span` is absent or not a number.
  private func numberValue(_ span: Span, text: UnsafePointer<UInt8>) -> Double? {
    guard span.isPresent else { return nil }
    let first = text[span.start]
    guard first == UInt8(ascii: "-") || (first >= 48 && first <= 57) else { return nil }
    return Double(
      String(
        decoding: UnsafeBufferPointer(start: text + span.start, count: span.count), as: UTF8.self))
  }

  /// Appends one `--check` row for the current document.
  mutating func appendFinding(problem: String, pointer: String, detail: String) {
    var row = RowWriter()
    row.raw("id", identifier, from: documentText, into: &output)
    row.number("line", documentLine, into: &output)
    row.string("problem", problem, into: &output)
    row.string("pointer", pointer, into: &output)
    row.string("detail", detail, into: &output)
    row.end(into: &output)
    statistics.rows += 1
  }
}
