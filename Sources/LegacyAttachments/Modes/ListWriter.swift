/// `--list` (docs/inspect.md): one NDJSON row per attachment, blob references and legacy
/// entries alike, in document order.
struct ListWriter: DocumentWriter {
  /// With `--blobs`: rows say whether the store has the file (`stored`).
  let store: BlobStore?

  func findProblems(
    in document: borrowing ScannedDocument, text: UnsafeBufferPointer<UInt8>,
    into problems: inout [Problem], workspace: inout WriterWorkspace
  ) {}

  func write(
    _ document: borrowing ScannedDocument, text: UnsafeBufferPointer<UInt8>, line: Int,
    to output: inout ByteBuffer, statistics: inout ConversionStatistics,
    workspace: inout WriterWorkspace,
    problems: inout [Problem]
  ) -> ConversionIOError? {
    let blobs = document.blobs.elements
    let entries = document.entries.elements
    var blobIndex = 0
    var entryIndex = 0
    while true {
      let nextBlob = blobIndex < blobs.count ? blobs[blobIndex].span.start : Int.max
      var nextEntry = Int.max
      while entryIndex < entries.count && !entries[entryIndex].isObject { entryIndex += 1 }
      if entryIndex < entries.count { nextEntry = entries[entryIndex].member.start }
      if nextBlob == Int.max && nextEntry == Int.max { break }
      var row = RowWriter()
      row.raw("id", document.identifier, from: text, into: &output)
      row.number("line", line, into: &output)
      let members: AttachmentMembers
      if nextBlob < nextEntry {
        let blob = blobs[blobIndex]
        blobIndex += 1
        row.string("kind", "blob", into: &output)
        row.string("name", document.name(blob.name), into: &output)
        row.string("pointer", document.name(blob.pointer), into: &output)
        members = blob.members
      } else {
        let entry = entries[entryIndex]
        entryIndex += 1
        row.string("kind", "legacy", into: &output)
        row.raw("name", entry.key, from: text, into: &output)
        workspace.scratch.count = 0
        appendEntryPointer(entry.key, text: text, to: &workspace.scratch)
        row.string("pointer", workspace.scratch.bytes, into: &output)
        members = entry.members
      }
      row.raw("digest", members.digest, from: text, into: &output)
      row.raw("length", members.length, from: text, into: &output)
      row.raw("content_type", members.contentType, from: text, into: &output)
      if let path = workspace.path { row.string("path", path, into: &output) }
      if let store { appendStored(members, store: store, text: text, row: &row, to: &output) }
      row.end(into: &output)
      statistics.rows += 1
    }
    return nil
  }

  /// `"stored"`: whether the store has the file the digest names (null when it names none).
  private func appendStored(
    _ members: AttachmentMembers, store: BlobStore, text: UnsafeBufferPointer<UInt8>,
    row: inout RowWriter, to output: inout ByteBuffer
  ) {
    row.field("stored", into: &output)
    guard let digest = stringDigest(members, text: text),
      let name = BlobStore.fileName(for: digest)
    else { return output.append("null") }
    output.append(store.exists(name) ? "true" : "false")
  }
}

/// Appends the JSON Pointer of the `_attachments` entry whose key token is `key`:
/// `/_attachments/` and the key with `~` and `/` escaped.
func appendEntryPointer(
  _ key: Span, text: UnsafeBufferPointer<UInt8>, to output: inout ByteBuffer
) {
  output.append("/_attachments")
  let decoded = JSONText.decodeString(UnsafeBufferPointer(rebasing: text[key.start..<key.end]))
  decoded.withUnsafeBufferPointer { PathStyle.pointer.appendKeyStep($0, to: &output) }
}

/// The parsed digest of a blob or entry whose `digest` is a string naming a hash.
func stringDigest(_ members: AttachmentMembers, text: UnsafeBufferPointer<UInt8>)
  -> AttachmentDigest?
{
  guard members.digestIsString, members.digest.isPresent else { return nil }
  let decoded = JSONText.decodeString(
    UnsafeBufferPointer(rebasing: text[members.digest.start..<members.digest.end]))
  return decoded.withUnsafeBufferPointer { AttachmentDigest($0) }
}
