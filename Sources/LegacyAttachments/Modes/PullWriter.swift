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

  /// What pull does with one entry of `_attachments`.
  private enum Fate {
    /// It matches no blob: untouched.
    case unmatched
    /// It matches a blob, and losing it loses nothing.
    case removed
    /// It matches a blob but carries bytes the blob does not: kept, with a warning.
    case keptForItsBytes
    /// It matches a blob and its `data` is not a string: the document is rejected.
    case invalidData
  }

  private static func fate(
    of entry: LegacyEntry, _ matcher: DigestMatcher, blobs: UnsafeBufferPointer<BlobReference>,
    text: UnsafeBufferPointer<UInt8>
  ) -> Fate {
    guard entry.isObject && entry.members.digestIsString && matcher.matches(entry.members.digest)
    else { return .unmatched }
    guard entry.members.data.isPresent else { return .removed }
    guard entry.members.dataKind == .string else { return .invalidData }
    return blobHoldsSameData(entry, blobs, text: text) ? .removed : .keptForItsBytes
  }

  /// Whether the document has entries pull would remove from: one `_attachments` object, and
  /// blobs to match.
  private static func applies(to document: borrowing ScannedDocument) -> Bool {
    document.attachments.isSingleObject && !document.entries.isEmpty && !document.blobs.isEmpty
  }

  func findProblems(
    in document: borrowing ScannedDocument, text: UnsafeBufferPointer<UInt8>,
    into problems: inout [Problem], workspace: inout WriterWorkspace
  ) {
    guard Self.applies(to: document) else { return }
    let entries = document.entries.elements
    // Only an entry with bytes can be anything but removed or untouched.
    guard entries.contains(where: { $0.members.data.isPresent }) else { return }
    let blobs = document.blobs.elements
    let matcher = DigestMatcher(text: text.baseAddress!, blobs: blobs)
    for entry in entries where entry.members.data.isPresent {
      switch Self.fate(of: entry, matcher, blobs: blobs, text: text) {
      case .unmatched, .removed:
        continue
      case .invalidData:
        problems.append(
          Problem(
            kind: .invalidData, severity: .error, offset: entry.keyOffset,
            message: Messages.entryDataNotString(
              name: document.string(entry.key, in: text), kind: entry.members.dataKind),
            pointer: ""))
      case .keptForItsBytes:
        problems.append(
          Problem(
            kind: .dataKept, severity: strict ? .error : .warning, offset: entry.keyOffset,
            message: Messages.entryDataKept(name: document.string(entry.key, in: text)),
            pointer: ""))
      }
    }
  }

  func write(
    _ document: borrowing ScannedDocument, text: UnsafeBufferPointer<UInt8>, line: Int,
    to output: inout ByteBuffer, statistics: inout Statistics, workspace: inout WriterWorkspace
  ) {
    guard Self.applies(to: document) else { return output.append(text) }
    let blobs = document.blobs.elements
    let matcher = DigestMatcher(text: text.baseAddress!, blobs: blobs)
    workspace.removed.removeAll()
    for entry in document.entries.elements
    where Self.fate(of: entry, matcher, blobs: blobs, text: text) == .removed {
      workspace.removed.push(entry.member)
    }
    let removed = workspace.removed.elements
    statistics.entriesRemoved += removed.count
    guard !removed.isEmpty else { return output.append(text) }
    var splicer = MemberSplicer()
    let base = text.baseAddress!
    let attachments = document.attachments
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

  /// Whether a blob with the entry's digest carries the same bytes (`data`, compared decoded), so
  /// that removing the entry loses nothing.
  private static func blobHoldsSameData(
    _ entry: LegacyEntry, _ blobs: UnsafeBufferPointer<BlobReference>,
    text: UnsafeBufferPointer<UInt8>
  ) -> Bool {
    blobs.contains { blob in
      blob.members.digestIsString && blob.members.dataKind == .string
        && blob.members.data.isPresent
        && JSONText.decodedEqual(blob.members.digest, entry.members.digest, in: text)
        && JSONText.decodedEqual(blob.members.data, entry.members.data, in: text)
    }
  }
}
