extension ScanState {
  /// `--list`: one row per attachment of the current document, blobs and legacy entries in
  /// document order.
  mutating func appendListRows() {
    let text = documentText
    var blobIndex = 0
    var entryIndex = 0
    while true {
      let nextBlob = blobIndex < blobs.count ? blobs[blobIndex].span.start : Int.max
      var nextEntry = Int.max
      while entryIndex < entries.count && !entries[entryIndex].isObject { entryIndex += 1 }
      if entryIndex < entries.count { nextEntry = entries[entryIndex].member.start }
      if nextBlob == Int.max && nextEntry == Int.max { break }
      var row = RowWriter()
      row.raw("id", identifier, from: text, into: &output)
      row.number("line", documentLine, into: &output)
      if nextBlob < nextEntry {
        let blob = blobs[blobIndex]
        blobIndex += 1
        row.string("kind", "blob", into: &output)
        row.string("name", names.bytes.slice(blob.name), into: &output)
        row.string("pointer", names.bytes.slice(blob.pointer), into: &output)
        appendAttachmentFields(
          &row, digest: blob.digestRaw, length: blob.length, contentType: blob.contentType,
          text: text)
      } else {
        let entry = entries[entryIndex]
        entryIndex += 1
        row.string("kind", "legacy", into: &output)
        row.raw("name", entry.key, from: text, into: &output)
        scratch.count = 0
        scratch.append("/_attachments/")
        appendPointerKey(entry.key, text: text)
        row.string("pointer", scratch.bytes, into: &output)
        appendAttachmentFields(
          &row, digest: entry.digestRaw, length: entry.length, contentType: entry.contentType,
          text: text)
      }
      row.end(into: &output)
      statistics.rows += 1
    }
  }

  private mutating func appendAttachmentFields(
    _ row: inout RowWriter, digest: Span, length: Span, contentType: Span,
    text: UnsafePointer<UInt8>
  ) {
    row.raw("digest", digest, from: text, into: &output)
    row.raw("length", length, from: text, into: &output)
    row.raw("content_type", contentType, from: text, into: &output)
  }

  /// Appends the JSON Pointer form of the key token `key` to `scratch`.
  mutating func appendPointerKey(_ key: Span, text: UnsafePointer<UInt8>) {
    let decoded = JSONText.decodeString(
      UnsafeBufferPointer(start: text + key.start, count: key.count))
    decoded.withUnsafeBufferPointer { JSONText.appendPointerKey($0, to: &scratch) }
  }
}

extension UnsafeBufferPointer<UInt8> {
  /// The bytes of `span` (empty when absent).
  func slice(_ span: Span) -> UnsafeBufferPointer<UInt8> {
    guard span.isPresent else { return UnsafeBufferPointer(start: baseAddress, count: 0) }
    return UnsafeBufferPointer(rebasing: self[span.start..<span.end])
  }
}
