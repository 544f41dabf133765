/// `--pull` (docs/formats.md, "Behaviour details"): removes the `_attachments` entries that mirror a blob reference
/// (``EntryMirror``: by digest, or, for an entry CouchDB re-labelled `md5-`, by the place its
/// name gives and its length), and `_attachments` itself when that leaves it empty.
///
/// An entry that carries the attachment's bytes (`data`) is removed only when the blob it
/// mirrors holds the same bytes; otherwise it stays, with a warning, since removing it would lose
/// the only copy. A `data` that is not a string rejects the document. An entry with a name push
/// makes that mirrors no blob stays, with a warning that says why.
///
/// With `--blobs`, the bytes of an entry to be removed are saved in the store first, checked
/// against its digest; then it is removed like any other.
///
/// With `--update-blobs` (Couchbase Lite's replicator, its pointer bug fixed), a synthesized name
/// is resolved first: the blob at the place it names loses its entry whatever the digests, and
/// takes the entry's digest, length and content type when the attachment was replaced.
struct PullWriter: DocumentWriter {
  private let strict: Bool
  /// With `--blobs`: where the bytes go.
  private let carrier: BodyCarrier?
  private let updatesBlobs: Bool

  init(options: ConversionOptions, store: BlobStore?) {
    strict = options.strict
    carrier = store.map { BodyCarrier(store: $0) }
    updatesBlobs = options.updateBlobs
  }

  /// What pull does with one entry of `_attachments`.
  fileprivate enum Fate: Equatable {
    /// It mirrors no blob, and its name is a real attachment's: untouched.
    case unmatched
    /// Its name is one push makes, but it mirrors no blob: kept, with a warning saying why.
    case unmatchedSynthesized(EntryMirror.Unmatched)
    /// It mirrors a blob, and losing it loses nothing.
    case removed
    /// It mirrors a blob but carries bytes the blob does not: kept, with a warning.
    case keptForItsBytes
    /// It mirrors a blob and its `data` is not a string: the document is rejected.
    case invalidData
    /// With `--blobs`: its bytes are saved in the store, then it is removed.
    case stored
  }

  /// What write does with an entry, as `findProblems` found it.
  enum EntryAction: UInt8, BitwiseCopyable {
    /// Not decided yet: write works it out.
    case undecided
    case kept
    case removed
    case stored

    fileprivate init(_ fate: Fate) {
      switch fate {
      case .removed: self = .removed
      case .stored: self = .stored
      case .unmatched, .unmatchedSynthesized, .keptForItsBytes, .invalidData: self = .kept
      }
    }
  }

  /// The actions `findProblems` decided for one document's entries, in order, and which
  /// document they are for (its start in the input and its number of entries).
  struct EntryDecisions: ~Copyable {
    var actions = RawStack<EntryAction>(capacity: 16)
    var document = StreamOffset(-1)

    /// The action decided for entry `index` of `document`, if any.
    func action(_ index: Int, of document: borrowing ScannedDocument) -> EntryAction {
      guard self.document == document.start, actions.count == document.entries.count else {
        return .undecided
      }
      return actions[index]
    }

    mutating func forget() {
      actions.removeAll()
      document = StreamOffset(-1)
    }
  }

  /// With `--blobs`: whether the entry's inline bytes are, by their SHA-1, a blob's (off the
  /// common path: it makes a closure).
  @inline(never)
  private static func bytesMatch(
    of entry: LegacyEntry, in document: borrowing ScannedDocument, text: UnsafeBufferPointer<UInt8>
  ) -> () -> Bool {
    let blobs = document.blobs.elements
    return {
      guard entry.members.data.isPresent, entry.members.dataKind == .string,
        stringDigest(entry.members, text: text) != nil,
        let sha1 = BodyCarrier.sha1Digest(
          ofData: UnsafeBufferPointer(
            rebasing: text[entry.members.data.start..<entry.members.data.end]))
      else { return false }
      return blobs.contains { blob in
        blob.members.digestIsString
          && JSONText.decodeString(
            UnsafeBufferPointer(
              rebasing: text[blob.members.digest.start..<blob.members.digest.end])) == sha1
      }
    }
  }

  private func fate(
    of entry: LegacyEntry, in document: borrowing ScannedDocument, _ matcher: inout DigestMatcher,
    text: UnsafeBufferPointer<UInt8>
  ) -> Fate {
    // With --blobs, bytes that a blob holds under their SHA-1 mirror it whatever the entry's
    // own digest says (CouchDB and PouchDB relabel attachments md5-).
    let bytesMatch = carrier == nil ? nil : Self.bytesMatch(of: entry, in: document, text: text)
    let mirror = EntryMirror.find(
      entry, in: document, matcher: &matcher, text: text, bytesMatch: bytesMatch)
    if case .none(let unmatched) = mirror {
      return unmatched.map { .unmatchedSynthesized($0) } ?? .unmatched
    }
    guard entry.members.data.isPresent else { return .removed }
    guard entry.members.dataKind == .string else { return .invalidData }
    if carrier != nil {
      // Bytes under a digest that names no hash cannot be checked: they stay where they are.
      return stringDigest(entry.members, text: text) == nil ? .keptForItsBytes : .stored
    }
    let blobs = document.blobs.elements
    let safe: Bool
    switch mirror {
    case .place(let index):
      let blob = blobs[index]
      safe =
        blob.members.data.isPresent && blob.members.dataKind == .string
        && JSONText.decodedEqual(blob.members.data, entry.members.data, in: text)
    default:
      safe = Self.blobHoldsSameData(entry, blobs, text: text)
    }
    return safe ? .removed : .keptForItsBytes
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
    workspace.pullDecisions.forget()
    guard document.attachments.isSingleObject, !document.entries.isEmpty else { return }
    var matcher = DigestMatcher(text: text, blobs: document.blobs.elements)
    workspace.pullDecisions.document = document.start
    for entry in document.entries.elements {
      // Only an entry with bytes or a name push makes can be anything but removed or
      // untouched; the common entry is decided without decoding its name (by write).
      guard entry.members.data.isPresent || Self.mayBeSynthesized(entry.key, in: text) else {
        workspace.pullDecisions.actions.push(.undecided)
        continue
      }
      let name = {
        String(
          decoding: JSONText.decodeString(
            UnsafeBufferPointer(rebasing: text[entry.key.start..<entry.key.end])), as: UTF8.self)
      }
      let fate = fate(of: entry, in: document, &matcher, text: text)
      workspace.pullDecisions.actions.push(EntryAction(fate))
      switch fate {
      case .unmatched, .removed, .stored:
        continue
      case .unmatchedSynthesized(let reason):
        // With --update-blobs, what is kept is known only while writing.
        guard !updatesBlobs else { continue }
        problems.append(
          Problem(
            kind: .entryKept, severity: strict ? .error : .warning, offset: entry.keyOffset,
            message: Messages.entryKept(name: name(), reason), pointer: "",
            advice: reason.isOtherDigest ? .updateBlobs : nil))
      case .invalidData:
        problems.append(
          Problem(
            kind: .invalidData, severity: .error, offset: entry.keyOffset,
            message: Messages.entryDataNotString(name: name(), kind: entry.members.dataKind),
            pointer: ""))
      case .keptForItsBytes:
        guard !updatesBlobs else { continue }
        problems.append(
          Problem(
            kind: .dataKept, severity: strict ? .error : .warning, offset: entry.keyOffset,
            message: Messages.entryDataKept(name: name()), pointer: ""))
      }
    }
  }

  /// Whether an entry's key token may be a name push makes (`$…` or `blob_…`), by its first
  /// characters: a cheap test before the name is decoded.
  private static func mayBeSynthesized(_ key: Span, in text: UnsafeBufferPointer<UInt8>) -> Bool {
    guard key.count > 2 else { return false }
    let first = text[key.start + 1]
    return first == UInt8(ascii: "$") || first == UInt8(ascii: "b") || first == UInt8(ascii: "\\")
  }

  func write(
    _ document: borrowing ScannedDocument, text: UnsafeBufferPointer<UInt8>, line: Int,
    to output: inout ByteBuffer, statistics: inout ConversionStatistics,
    workspace: inout WriterWorkspace,
    problems: inout [Problem]
  ) -> ConversionIOError? {
    defer { workspace.pullDecisions.forget() }
    if updatesBlobs {
      return writeUpdatingBlobs(
        document, text: text, to: &output, statistics: &statistics, workspace: &workspace,
        problems: &problems)
    }
    guard Self.applies(to: document) else {
      output.append(text)
      return nil
    }
    var matcher = DigestMatcher(text: text, blobs: document.blobs.elements)
    workspace.removed.removeAll()
    for (index, entry) in document.entries.elements.enumerated() {
      var action = workspace.pullDecisions.action(index, of: document)
      if action == .undecided {
        action = EntryAction(fate(of: entry, in: document, &matcher, text: text))
      }
      switch action {
      case .removed:
        workspace.removed.push(entry.member)
      case .stored:
        let (removes, failure) = storeBytes(
          of: entry, document, text: text, problems: &problems, workspace: &workspace.bodies)
        if let failure { return failure }
        guard problems.allSatisfy({ $0.severity != .error }) else { return nil }
        if removes { workspace.removed.push(entry.member) }
      case .kept, .undecided:
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

  /// With `--blobs`: stores an entry's `data` (checked against its digest). Returns whether the
  /// entry goes (its bytes are safe), and a failure of the store that ends the run; what keeps
  /// it from going is in `problems`.
  private func storeBytes(
    of entry: LegacyEntry, _ document: borrowing ScannedDocument, text: UnsafeBufferPointer<UInt8>,
    problems: inout [Problem], workspace: inout BodyWorkspace
  ) -> (stored: Bool, failure: ConversionIOError?) {
    let place =
      "_attachments entry " + ConversionDiagnostic.quoted(document.string(entry.key, in: text))
    let label = BodyLabel(
      digest: stringDigest(entry.members, text: text)!, members: entry.members, text: text)
    return carrier!.storeInline(
      data: UnsafeBufferPointer(rebasing: text[entry.members.data.start..<entry.members.data.end]),
      label: label, decodingStreams: false, place: place, offset: entry.keyOffset, strict: strict,
      problems: &problems, workspace: &workspace)
  }

  // MARK: --update-blobs

  /// The index of the blob at the place a synthesized name gives (`blob_/` and an RFC 6901
  /// pointer, or a `$` jsonpath), when one is there.
  private static func blobNamed(_ name: [UInt8], _ matcher: inout DigestMatcher) -> Int? {
    guard let place = NamedPlace(name: name) else { return nil }
    return matcher.blobIndex(at: place)
  }

  /// `blob_` and digits: Couchbase Lite 2.0's names, which name no place.
  private static func isNumberedBlobName(_ name: [UInt8]) -> Bool {
    name.count > 5 && name.starts(with: "blob_".utf8)
      && name.dropFirst(5).allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
  }

  /// What `--update-blobs` does with one entry.
  private enum UpdateOutcome {
    case removed
    /// Removed, and the blob at this index (of the document's blobs) takes its members.
    case updates(Int)
    case kept
    /// The document is rejected (a problem says why), or the run ends (the store failed).
    case stop(ConversionIOError?)
  }

  private func writeUpdatingBlobs(
    _ document: borrowing ScannedDocument, text: UnsafeBufferPointer<UInt8>,
    to output: inout ByteBuffer, statistics: inout ConversionStatistics,
    workspace: inout WriterWorkspace,
    problems: inout [Problem]
  ) -> ConversionIOError? {
    let entries = document.entries.elements
    guard document.attachments.isSingleObject, !entries.isEmpty else {
      output.append(text)
      return nil
    }
    let blobs = document.blobs.elements
    var matcher = DigestMatcher(text: text, blobs: blobs)
    var removed: [Span] = []
    var updated: [Int: LegacyEntry] = [:]
    for entry in entries where entry.isObject {
      switch updateOutcome(
        of: entry, in: document, matcher: &matcher, text: text, problems: &problems,
        workspace: &workspace)
      {
      case .removed:
        removed.append(entry.member)
      case .updates(let index):
        removed.append(entry.member)
        updated[index] = entry
      case .kept:
        continue
      case .stop(let failure):
        return failure
      }
    }
    guard !removed.isEmpty || !updated.isEmpty else {
      output.append(text)
      return nil
    }
    statistics.entriesRemoved += removed.count
    var edits = TextEdits()
    let attachments = document.attachments
    if removed.count == entries.count {
      edits.removeMember(attachments.member, in: text)
    } else if !removed.isEmpty {
      var value = ByteBuffer(capacity: attachments.value.count)
      value.append(UInt8(ascii: "{"))
      var splicer = MemberSplicer()
      removed.sort { $0.start < $1.start }
      splicer.append(
        text.baseAddress!, from: attachments.value.start + 1, to: attachments.value.end - 1,
        excluding: removed, to: &value)
      value.append(UInt8(ascii: "}"))
      edits.replace(attachments.value, with: Array(value.bytes))
    }
    for (index, entry) in updated {
      edits.replace(blobs[index].span, with: Self.updated(blobs[index], from: entry, text: text))
    }
    edits.apply(to: text, into: &output)
    return nil
  }

  /// What `--update-blobs` does with an object entry: by the place its name gives when a blob
  /// with a digest is there (``namedBlobOutcome``), else by its digest, as pull does.
  private func updateOutcome(
    of entry: LegacyEntry, in document: borrowing ScannedDocument, matcher: inout DigestMatcher,
    text: UnsafeBufferPointer<UInt8>, problems: inout [Problem], workspace: inout WriterWorkspace
  ) -> UpdateOutcome {
    let name = JSONText.decodeString(
      UnsafeBufferPointer(rebasing: text[entry.key.start..<entry.key.end]))
    let numbered = Self.isNumberedBlobName(name)
    // Couchbase Lite 2.0's numbered names go whatever their digest; other entries need one.
    if numbered && !entry.members.data.isPresent { return .removed }
    guard entry.members.digestIsString else {
      reportDigestNotString(
        of: entry, named: name, numbered: numbered, matcher: &matcher, text: text,
        problems: &problems)
      return .kept
    }
    let digest = JSONText.decodeString(
      UnsafeBufferPointer(rebasing: text[entry.members.digest.start..<entry.members.digest.end]))
    // A numbered entry with bytes names no place: it goes only as pull lets it (by digest).
    // A blob without a digest is not updated (Couchbase Lite leaves it too); the entry stays.
    if !numbered, let index = Self.blobNamed(name, &matcher),
      document.blobs.elements[index].members.digestIsString
    {
      return namedBlobOutcome(
        of: entry, named: name, blob: index, digest: digest, in: document, matcher: &matcher,
        text: text, problems: &problems, workspace: &workspace)
    }
    // A blob without a digest is not updated (Couchbase Lite leaves it too): if the entry that
    // names one stays, that is said.
    let namesDigestlessBlob =
      !numbered
      && Self.blobNamed(name, &matcher).map {
        !document.blobs.elements[$0].members.digestIsString
      } == true
    return outcomeByDigest(
      of: entry, named: name, namesDigestlessBlob: namesDigestlessBlob, in: document,
      matcher: &matcher, text: text, problems: &problems, workspace: &workspace)
  }

  /// An entry whose digest is not a string: Couchbase Lite copies a digest of any type into
  /// the blob its name gives and drops its length and content_type, so that the blob could no
  /// longer be read. It is not updated, and that is said.
  private func reportDigestNotString(
    of entry: LegacyEntry, named name: [UInt8], numbered: Bool, matcher: inout DigestMatcher,
    text: UnsafeBufferPointer<UInt8>, problems: inout [Problem]
  ) {
    let quoted = ConversionDiagnostic.quoted(String(decoding: name, as: UTF8.self))
    if entry.members.digest.isPresent, !numbered, Self.blobNamed(name, &matcher) != nil,
      let place = NamedPlace(name: name)
    {
      problems.append(
        Problem(
          kind: .blobNotUpdated, severity: strict ? .error : .warning,
          offset: entry.keyOffset,
          message: Messages.blobNotUpdatedDigestNotString(
            name: quoted, pointer: place.pointer,
            kind: ValueKind(firstByte: text[entry.members.digest.start]).article),
          pointer: ""))
    } else if name.withUnsafeBufferPointer({ AttachmentNaming.isSynthesized($0) }) {
      problems.append(
        Problem(
          kind: .entryKept, severity: strict ? .error : .warning, offset: entry.keyOffset,
          message: Messages.entryKept(name: String(decoding: name, as: UTF8.self), .noDigest),
          pointer: ""))
    }
  }

  /// An entry whose name gives no blob with a digest: matched by its digest, as pull does; if
  /// it names a blob without a digest and stays, that is said.
  private func outcomeByDigest(
    of entry: LegacyEntry, named name: [UInt8], namesDigestlessBlob: Bool,
    in document: borrowing ScannedDocument, matcher: inout DigestMatcher,
    text: UnsafeBufferPointer<UInt8>, problems: inout [Problem], workspace: inout WriterWorkspace
  ) -> UpdateOutcome {
    let quoted = ConversionDiagnostic.quoted(String(decoding: name, as: UTF8.self))
    func notUpdated() {
      guard namesDigestlessBlob else { return }
      problems.append(
        Problem(
          kind: .blobNotUpdated, severity: strict ? .error : .warning, offset: entry.keyOffset,
          message: Messages.blobWithoutDigestNotUpdated(name: quoted), pointer: ""))
    }
    switch fate(of: entry, in: document, &matcher, text: text) {
    case .removed:
      return .removed
    case .stored:
      let (removes, failure) = storeBytes(
        of: entry, document, text: text, problems: &problems, workspace: &workspace.bodies)
      if let failure { return .stop(failure) }
      guard problems.allSatisfy({ $0.severity != .error }) else { return .stop(nil) }
      if removes { return .removed }
      notUpdated()
    case .keptForItsBytes:
      notUpdated()
      problems.append(
        Problem(
          kind: .dataKept, severity: strict ? .error : .warning, offset: entry.keyOffset,
          message: Messages.entryDataKept(name: String(decoding: name, as: UTF8.self)),
          pointer: ""))
    case .unmatched:
      notUpdated()
    case .unmatchedSynthesized(let reason):
      notUpdated()
      // A name that gives a blob whose digest differs was taken above; what is left is said.
      if !namesDigestlessBlob {
        problems.append(
          Problem(
            kind: .entryKept, severity: strict ? .error : .warning, offset: entry.keyOffset,
            message: Messages.entryKept(name: String(decoding: name, as: UTF8.self), reason),
            pointer: ""))
      }
    case .invalidData:
      break
    }
    return .kept
  }

  /// An entry whose name gives a blob that has a digest: it goes, and the blob takes its
  /// members when the attachment was replaced (another `sha1-` digest), as Couchbase Lite's
  /// replicator does; bytes it carries go into the store (`--blobs`) or must be the blob's.
  private func namedBlobOutcome(
    of entry: LegacyEntry, named name: [UInt8], blob index: Int, digest: [UInt8],
    in document: borrowing ScannedDocument, matcher: inout DigestMatcher,
    text: UnsafeBufferPointer<UInt8>, problems: inout [Problem], workspace: inout WriterWorkspace
  ) -> UpdateOutcome {
    let quoted = ConversionDiagnostic.quoted(String(decoding: name, as: UTF8.self))
    let blobs = document.blobs.elements
    // CouchDB re-labels every digest md5-: with the blob's length, the entry mirrors it.
    let mirrorsByPlace =
      !digest.starts(with: "sha1-".utf8)
      && EntryMirror.find(
        entry, in: document, matcher: &matcher, text: text, bytesMatch: nil
      ).mirrors
    guard digest.starts(with: "sha1-".utf8) || mirrorsByPlace else {
      problems.append(
        Problem(
          kind: .blobNotUpdated, severity: strict ? .error : .warning,
          offset: entry.keyOffset, message: Messages.blobNotUpdated(name: quoted),
          pointer: ""))
      return .kept
    }
    let blob = blobs[index]
    if entry.members.data.isPresent,
      let outcome = dataOutcome(
        of: entry, named: name, blob: blob, mirrorsByPlace: mirrorsByPlace, in: document,
        text: text, problems: &problems, workspace: &workspace)
    {
      return outcome
    }
    let updates =
      !mirrorsByPlace
      && !(blob.members.digestIsString
        && JSONText.decodedEqual(blob.members.digest, entry.members.digest, in: text))
    return updates ? .updates(index) : .removed
  }

  /// An entry with inline bytes whose name gives a blob: it goes only when the bytes are the
  /// blob's, or are stored (`--blobs`); else it stays, said. Nil when it goes on as the others.
  private func dataOutcome(
    of entry: LegacyEntry, named name: [UInt8], blob: BlobReference, mirrorsByPlace: Bool,
    in document: borrowing ScannedDocument, text: UnsafeBufferPointer<UInt8>,
    problems: inout [Problem], workspace: inout WriterWorkspace
  ) -> UpdateOutcome? {
    guard entry.members.dataKind == .string else {
      // Rejected already when it also matched a blob by digest; otherwise here.
      if !problems.contains(where: { $0.kind == .invalidData && $0.offset == entry.keyOffset }
      ) {
        problems.append(
          Problem(
            kind: .invalidData, severity: .error, offset: entry.keyOffset,
            message: Messages.entryDataNotString(
              name: String(decoding: name, as: UTF8.self), kind: entry.members.dataKind),
            pointer: ""))
      }
      return .stop(nil)
    }
    func dataKept() -> Problem {
      Problem(
        kind: .dataKept, severity: strict ? .error : .warning, offset: entry.keyOffset,
        message: Messages.entryDataKept(name: String(decoding: name, as: UTF8.self)),
        pointer: "")
    }
    if carrier != nil {
      // Bytes under a digest that names no hash cannot be checked: they stay.
      guard stringDigest(entry.members, text: text) != nil else {
        problems.append(dataKept())
        return .kept
      }
      let (removes, failure) = storeBytes(
        of: entry, document, text: text, problems: &problems,
        workspace: &workspace.bodies)
      if let failure { return .stop(failure) }
      guard problems.allSatisfy({ $0.severity != .error }) else { return .stop(nil) }
      if !removes { return .kept }
    } else if !(blob.members.data.isPresent && blob.members.dataKind == .string
      && blob.members.digestIsString
      && JSONText.decodedEqual(blob.members.data, entry.members.data, in: text)
      && (mirrorsByPlace
        || JSONText.decodedEqual(blob.members.digest, entry.members.digest, in: text)))
    {
      problems.append(dataKept())
      return .kept
    }
    return nil
  }

  /// A blob whose attachment was replaced on the server: each member it has takes the entry's
  /// value when the entry has that member; `length` and `content_type` go when the entry lacks
  /// them; nothing is added. Tokens are copied as written.
  private static func updated(
    _ blob: BlobReference, from entry: LegacyEntry, text: UnsafeBufferPointer<UInt8>
  ) -> [UInt8] {
    let entryMembers = CompactObject.members(entry.value, in: text)
    func entryValue(for key: Span) -> Span? {
      let name = JSONText.decodeString(UnsafeBufferPointer(rebasing: text[key.start..<key.end]))
      return entryMembers.last { CompactObject.key($0.key, in: text, is: name) }?.value
    }
    var output: [UInt8] = [UInt8(ascii: "{")]
    var first = true
    for member in CompactObject.members(blob.span, in: text) {
      var value = member.value
      if !CompactObject.key(member.key, in: text, is: Array("@type".utf8)) {
        if let replacement = entryValue(for: member.key) {
          value = replacement
        } else if CompactObject.key(member.key, in: text, is: Array("length".utf8))
          || CompactObject.key(member.key, in: text, is: Array("content_type".utf8))
        {
          continue
        }
      }
      if !first { output.append(UInt8(ascii: ",")) }
      first = false
      output += text[member.key.start..<member.key.end]
      output.append(UInt8(ascii: ":"))
      output += text[value.start..<value.end]
    }
    output.append(UInt8(ascii: "}"))
    return output
  }

  /// The entries pull removes (their members' start offsets), for `--upgrade`'s first step.
  func removedEntries(
    _ document: borrowing ScannedDocument, text: UnsafeBufferPointer<UInt8>,
    workspace: inout WriterWorkspace
  ) -> Set<Int> {
    guard Self.applies(to: document) else { return [] }
    let blobs = document.blobs.elements
    var matcher = DigestMatcher(text: text, blobs: blobs)
    var removed = Set<Int>()
    for entry in document.entries.elements {
      let fate = fate(of: entry, in: document, &matcher, text: text)
      // With --blobs, an entry whose bytes are stored goes too (the caller stores them).
      if fate == .removed || fate == .stored { removed.insert(entry.member.start) }
    }
    return removed
  }

  /// Whether a blob with the entry's digest carries the same bytes (`data`, compared decoded), so
  /// that removing the entry loses nothing (pull rule 4; push, for an entry it replaces). The
  /// entry's `digest` and `data` must be strings.
  static func blobHoldsSameData(
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
