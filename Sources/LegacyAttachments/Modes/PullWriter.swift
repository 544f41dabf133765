/// `--pull` (SPEC.md, "Pull"): removes the `_attachments` entries that match a blob reference by
/// digest, and `_attachments` itself when that leaves it empty.
///
/// An entry that carries the attachment's bytes (`data`) is removed only when the blob it matches
/// holds the same bytes; otherwise it stays, with a warning, since removing it would lose the only
/// copy. A `data` that is not a string rejects the document.
///
/// With `--blobs`, the bytes of an entry to be removed are saved in the store first, checked
/// against its digest; then it is removed like any other.
struct PullWriter: DocumentWriter {
  private let strict: Bool
  /// With `--blobs`: where the bytes go.
  private let carrier: BodyCarrier?

  init(options: ConversionOptions, store: BlobStore?) {
    strict = options.strict
    carrier = store.map { BodyCarrier(store: $0) }
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
    /// With `--blobs`: its bytes are saved in the store, then it is removed.
    case stored
    /// With `--blobs`: its bytes are encoded (gzip); it stays, with a warning.
    case keptEncoded
  }

  private func fate(
    of entry: LegacyEntry, _ matcher: DigestMatcher, blobs: UnsafeBufferPointer<BlobReference>,
    text: UnsafeBufferPointer<UInt8>
  ) -> Fate {
    guard entry.isObject && entry.members.digestIsString && matcher.matches(entry.members.digest)
    else { return .unmatched }
    guard entry.members.data.isPresent else { return .removed }
    guard entry.members.dataKind == .string else { return .invalidData }
    if carrier != nil {
      if entry.members.isEncoded { return .keptEncoded }
      // Bytes under a digest that names no hash cannot be checked: they stay where they are.
      return stringDigest(entry.members, text: text) == nil ? .keptForItsBytes : .stored
    }
    return Self.blobHoldsSameData(entry, blobs, text: text) ? .removed : .keptForItsBytes
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
      switch fate(of: entry, matcher, blobs: blobs, text: text) {
      case .unmatched, .removed, .stored:
        continue
      case .keptEncoded:
        problems.append(
          Problem(
            kind: .encodedKept, severity: strict ? .error : .warning, offset: entry.keyOffset,
            message: Messages.encodedKept(name: document.string(entry.key, in: text)),
            pointer: ""))
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
    to output: inout ByteBuffer, statistics: inout Statistics, workspace: inout WriterWorkspace,
    problems: inout [Problem]
  ) -> IOError? {
    guard Self.applies(to: document) else {
      output.append(text)
      return nil
    }
    let blobs = document.blobs.elements
    let matcher = DigestMatcher(text: text.baseAddress!, blobs: blobs)
    workspace.removed.removeAll()
    for entry in document.entries.elements {
      switch fate(of: entry, matcher, blobs: blobs, text: text) {
      case .removed:
        workspace.removed.push(entry.member)
      case .stored:
        let outcome = carrier!.store(
          data: UnsafeBufferPointer(
            rebasing: text[entry.members.data.start..<entry.members.data.end]),
          digest: stringDigest(entry.members, text: text)!)
        let place = "_attachments entry " + Diagnostic.quoted(document.string(entry.key, in: text))
        let digest = stringDigest(entry.members, text: text)!.description
        switch outcome {
        case .carried:
          workspace.removed.push(entry.member)
        case .keptExisting:
          workspace.removed.push(entry.member)
          problems.append(
            Problem(
              kind: .lengthMismatch, severity: strict ? .error : .warning,
              offset: entry.keyOffset,
              message: Messages.body(outcome, place: place, digest: digest), pointer: ""))
        case .failed(let file, let errno):
          problems.append(
            Problem(
              kind: .blobStoreFailed, severity: .error, offset: entry.keyOffset,
              message: Messages.body(outcome, place: place, digest: digest), pointer: ""))
          return IOError(operation: .storeBlob, errno: errno, target: file)
        default:
          problems.append(
            Problem(
              kind: outcome == .invalidBase64 ? .invalidData : .dataMismatch, severity: .error,
              offset: entry.keyOffset,
              message: Messages.body(outcome, place: place, digest: digest), pointer: ""))
          return nil
        }
      case .unmatched, .keptForItsBytes, .invalidData, .keptEncoded:
        continue
      }
    }
    let removed = workspace.removed.elements
    statistics.entriesRemoved += removed.count
    guard !removed.isEmpty else {
      output.append(text)
      return nil
    }
    var splicer = MemberSplicer()
    let base = text.baseAddress!
    let attachments = document.attachments
    if removed.count == document.entries.count {
      output.append(UInt8(ascii: "{"))
      splicer.append(
        base, from: 1, to: text.count - 1, excluding: CollectionOfOne(attachments.member),
        to: &output)
      output.append(UInt8(ascii: "}"))
      return nil
    }
    let value = attachments.value
    output.append(UnsafeBufferPointer(rebasing: text[..<(value.start + 1)]))
    splicer.append(
      base, from: value.start + 1, to: value.end - 1, excluding: removed, to: &output)
    output.append(UnsafeBufferPointer(rebasing: text[(value.end - 1)...]))
    return nil
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
