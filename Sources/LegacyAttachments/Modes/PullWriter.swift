/// `--pull` (SPEC.md, "Pull"): removes the `_attachments` entries that match a blob reference by
/// digest, and `_attachments` itself when that leaves it empty.
///
/// An entry that carries the attachment's bytes (`data`) is removed only when the blob it matches
/// holds the same bytes; otherwise it stays, with a warning, since removing it would lose the only
/// copy. A `data` that is not a string rejects the document.
struct PullWriter: DocumentWriter {
  private let strict: Bool

  init(options: ConversionOptions) {
    strict = options.strict
  }

  func findProblems(
    in document: borrowing ScannedDocument, text: UnsafeBufferPointer<UInt8>,
    into problems: inout [Problem], workspace: inout WriterWorkspace
  ) {
    guard document.attachments.isSingleObject, !document.blobs.isEmpty else { return }
    let entries = document.entries.elements
    guard entries.contains(where: { $0.members.data.isPresent }) else { return }
    let matcher = DigestMatcher(text: text.baseAddress!, blobs: document.blobs.elements)
    for entry in entries where entry.members.data.isPresent && Self.matches(entry, matcher) {
      let name = document.string(entry.key, in: text)
      let offset = entry.keyOffset
      if entry.members.dataKind != .string {
        problems.append(
          Problem(
            kind: .invalidData, severity: .error, offset: offset,
            message: Messages.entryDataNotString(name: name, kind: entry.members.dataKind),
            pointer: ""))
      } else if !Self.blobHoldsSameData(entry, document.blobs.elements, text: text) {
        problems.append(
          Problem(
            kind: .dataKept, severity: strict ? .error : .warning, offset: offset,
            message: Messages.entryDataKept(name: name), pointer: ""))
      }
    }
  }

  func write(
    _ document: borrowing ScannedDocument, text: UnsafeBufferPointer<UInt8>, line: Int,
    to output: inout ByteBuffer, statistics: inout Statistics, workspace: inout WriterWorkspace
  ) {
    let attachments = document.attachments
    guard attachments.isSingleObject, !document.entries.isEmpty, !document.blobs.isEmpty else {
      return output.append(text)
    }
    let matcher = DigestMatcher(text: text.baseAddress!, blobs: document.blobs.elements)
    workspace.removed.removeAll()
    for entry in document.entries.elements where Self.matches(entry, matcher) {
      if entry.members.data.isPresent
        && !Self.blobHoldsSameData(entry, document.blobs.elements, text: text)
      {
        continue
      }
      workspace.removed.push(entry.member)
    }
    let removed = workspace.removed.elements
    statistics.entriesRemoved += removed.count
    guard !removed.isEmpty else { return output.append(text) }
    var splicer = MemberSplicer()
    let base = text.baseAddress!
    if removed.count == document.entries.count {
      output.append(UInt8(ascii: "{"))
      splicer.append(
        base, from: 1, to: text.count - 1, excluding: CollectionOfOne(attachments.member),
        to: &output)
      output.append(UInt8(ascii: "}"))
      return
    }
    let value = attachments.value
    output.append(UnsafeBufferPointer(rebasing: text[..<(value.start + 1)]))
    splicer.append(
      base, from: value.start + 1, to: value.end - 1, excluding: removed, to: &output)
    output.append(UnsafeBufferPointer(rebasing: text[(value.end - 1)...]))
  }

  /// Whether `entry` is an attachment whose digest some blob reference has.
  private static func matches(_ entry: LegacyEntry, _ matcher: DigestMatcher) -> Bool {
    entry.isObject && entry.members.digestIsString && matcher.matches(entry.members.digest)
  }

  /// Whether a blob with the entry's digest carries the same bytes (`data`, compared decoded), so
  /// that removing the entry loses nothing.
  private static func blobHoldsSameData(
    _ entry: LegacyEntry, _ blobs: UnsafeBufferPointer<BlobReference>,
    text: UnsafeBufferPointer<UInt8>
  ) -> Bool {
    guard entry.members.dataKind == .string else { return false }
    return blobs.contains { blob in
      blob.members.digestIsString && blob.members.dataKind == .string
        && blob.members.data.isPresent
        && JSONText.decodedEqual(blob.members.digest, entry.members.digest, in: text)
        && JSONText.decodedEqual(blob.members.data, entry.members.data, in: text)
    }
  }
}
