/// `--upgrade` (docs/blobs.md): moves legacy attachments into blob
/// properties, the migration the design leaves to applications, for documents from Couchbase
/// Lite 1.x, CouchDB and PouchDB.
///
/// It first removes what `--pull` removes (entries that mirror a blob). Then each remaining
/// object entry with a string digest and a real (not synthesized) name becomes a blob in the
/// top-level object `--into` (default `attachments`), under its attachment name: `"@type":"blob"`
/// and the entry's members but `stub`, `revpos` and `follows`, plus `length` when the bytes are
/// at hand and it had none. An `md5-` digest is replaced by the SHA-1 of the bytes when they are
/// at hand (inline `data`); without them the entry stays, with a warning. With `--blobs`, `data`
/// moves into the store. `_attachments` goes when nothing is left in it.
struct UpgradeWriter: DocumentWriter {
  private let strict: Bool
  /// The property the blobs go in, decoded and as a JSON string token.
  private let into: [UInt8]
  private let intoToken: [UInt8]
  private let carrier: BodyCarrier?
  private let pull: PullWriter

  init(options: ConversionOptions, store: BlobStore?) {
    strict = options.strict
    into = Array(options.upgradeInto.utf8)
    var token = ByteBuffer(capacity: into.count + 2)
    into.withUnsafeBufferPointer { JSONText.appendQuoted($0, to: &token) }
    intoToken = Array(token.bytes)
    carrier = store.map { BodyCarrier(store: $0) }
    var pullOptions = options
    pullOptions.mode = .pull
    pull = PullWriter(options: pullOptions, store: store)
  }

  /// What becomes of one entry.
  enum Fate {
    case kept
    /// Pull removes it (it mirrors a blob).
    case removed
    case upgraded(Upgrade)
  }

  /// How an entry becomes a blob.
  struct Upgrade {
    /// The digest written in the blob when it is not the entry's (an `md5-` digest re-hashed).
    var digest: String?
    /// The size of the bytes, when they are at hand (inline `data`).
    var size: Int?
    /// The digest the blob has, for matching what is left.
    var finalDigest: [UInt8]
    /// The entry's `data` is the gzip stream its `"encoding":"gzip"` says the server stores
    /// (Sync Gateway): the blob holds what it decodes to.
    var decodesStream = false
  }

  /// The plan for a document: each entry's fate, and what to report. Made once per document:
  /// `findProblems` leaves it in the workspace for `write`, so inline bodies are decoded and
  /// hashed once.
  struct Plan {
    /// The document it is for (its extent in the input).
    var document = Span(start: -1, end: -1)
    var fates: [Fate] = []
    var problems: [Problem] = []
    var upgrades: Int { fates.count { if case .upgraded = $0 { true } else { false } } }
    var changes: Bool { fates.contains { if case .kept = $0 { false } else { true } } }
  }

  private func plan(
    _ document: borrowing ScannedDocument, text: UnsafeBufferPointer<UInt8>,
    workspace: inout WriterWorkspace
  ) -> Plan {
    var plan = Plan(document: Span(start: document.start.value, end: document.end.value))
    let entries = document.entries.elements
    guard document.attachments.isSingleObject, !entries.isEmpty else { return plan }
    let removedByPull = pull.removedEntries(document, text: text, workspace: &workspace)
    let intoKeys =
      document.into.count == 1 && document.into.kind == .object
      ? CompactObject.members(document.into.value, in: text).map {
        JSONText.decodeString(UnsafeBufferPointer(rebasing: text[$0.key.start..<$0.key.end]))
      } : []
    for (index, entry) in entries.enumerated() {
      if removedByPull.contains(entry.member.start) {
        plan.fates.append(.removed)
        continue
      }
      plan.fates.append(
        fate(
          of: entry, at: index, in: document, intoKeys: intoKeys, text: text,
          problems: &plan.problems, workspace: &workspace))
    }
    removeMirrorsOfNewBlobs(&plan, entries: entries, text: text)
    return plan
  }

  /// What becomes of an entry pull leaves: it becomes a blob, or stays (with the problem that
  /// says why, when there is one).
  private func fate(
    of entry: LegacyEntry, at index: Int, in document: borrowing ScannedDocument,
    intoKeys: [[UInt8]], text: UnsafeBufferPointer<UInt8>, problems: inout [Problem],
    workspace: inout WriterWorkspace
  ) -> Fate {
    let name = document.string(entry.key, in: text)
    func stays(_ message: String) -> Fate {
      problems.append(
        Problem(
          kind: .upgradeKept, severity: strict ? .error : .warning, offset: entry.keyOffset,
          message: message, pointer: ""))
      return .kept
    }
    guard entry.isObject, entry.members.digestIsString else { return .kept }
    let digestText = JSONText.decodeString(
      UnsafeBufferPointer(rebasing: text[entry.members.digest.start..<entry.members.digest.end]))
    let digest = digestText.withUnsafeBufferPointer { AttachmentDigest($0) }
    let data =
      entry.members.data.isPresent && entry.members.dataKind == .string
      ? UnsafeBufferPointer(rebasing: text[entry.members.data.start..<entry.members.data.end])
      : nil
    if entry.members.data.isPresent && data == nil {
      problems.append(
        Problem(
          kind: .invalidData, severity: .error, offset: entry.keyOffset,
          message: Messages.entryDataNotString(name: name, kind: entry.members.dataKind),
          pointer: ""))
      return .kept
    }
    if let reason = reasonToStay(
      entry, named: name, hasData: data != nil, in: document, text: text, workspace: &workspace)
    {
      return stays(reason)
    }
    var upgrade = Upgrade(digest: nil, size: nil, finalDigest: digestText)
    if let data {
      // The bytes are at hand: they must be the digest's; an md5 digest becomes their SHA-1.
      guard let digest else { return stays(Messages.upgradeKeptUnknownDigest(name: name)) }
      if let refused = checkBytes(
        data, of: entry, named: name, digest: digest, text: text, upgrade: &upgrade,
        problems: &problems, workspace: &workspace)
      {
        return refused
      }
    } else if digestText.starts(with: "md5-".utf8) {
      return stays(Messages.upgradeKeptMD5(name: name))
    }
    if let clash = clash(of: entry, at: index, in: document, intoKeys: intoKeys, text: text) {
      problems.append(clash)
      return .kept
    }
    return .upgraded(upgrade)
  }

  /// Why an entry with a string digest stays whatever its bytes: push made it (pull left it: it
  /// mirrors no blob, or holds bytes the blob it mirrors does not), or its bytes are not at hand
  /// as a blob's (in a MIME part, or a stub's digest with `encoding`, of the bytes as the
  /// server stores them). Nil when nothing keeps it.
  private func reasonToStay(
    _ entry: LegacyEntry, named name: String, hasData: Bool,
    in document: borrowing ScannedDocument, text: UnsafeBufferPointer<UInt8>,
    workspace: inout WriterWorkspace
  ) -> String? {
    if PushWriter.isSynthesized(key: entry.key, in: text, scratch: &workspace.scratch) {
      let mirrors = document.blobs.elements.contains {
        $0.members.digestIsString
          && JSONText.decodedEqual($0.members.digest, entry.members.digest, in: text)
      }
      return mirrors && hasData
        ? Messages.upgradeKeptMirrorBytes(name: name) : Messages.upgradeKeptSynthesized(name: name)
    }
    if entry.members.follows || (entry.members.isEncoded && !hasData) {
      return Messages.upgradeKeptEncoded(name: name, follows: entry.members.follows)
    }
    return nil
  }

  /// Checks an entry's inline bytes against its digest and `length`, and notes in `upgrade`
  /// their size and, for an `md5-` digest or a gzip stream, the SHA-1 the blob takes. Returns
  /// the entry's fate when the bytes keep it from being upgraded (the problem appended), nil
  /// when it may be.
  private func checkBytes(
    _ data: UnsafeBufferPointer<UInt8>, of entry: LegacyEntry, named name: String,
    digest: AttachmentDigest, text: UnsafeBufferPointer<UInt8>, upgrade: inout Upgrade,
    problems: inout [Problem], workspace: inout WriterWorkspace
  ) -> Fate? {
    let place = "_attachments entry " + ConversionDiagnostic.quoted(name)
    func refuse(
      _ kind: ConversionDiagnostic.Kind, _ body: BodyCarrier.Outcome,
      severity: ConversionDiagnostic.Severity = .error
    )
      -> Fate
    {
      problems.append(
        Problem(
          kind: kind, severity: severity, offset: entry.keyOffset,
          message: Messages.body(body, place: place, digest: digest.description), pointer: ""))
      return .kept
    }
    let label = BodyLabel(digest: digest, members: entry.members, text: text)
    guard let checked = Self.check(data: data, label: label, levels: &workspace.bodies.levels)
    else { return refuse(.invalidData, .invalidBase64) }
    switch checked.check {
    case .otherBytes(let actual):
      return refuse(.dataMismatch, .otherBytes(file: nil, actual: actual))
    case .unknownEncoding:
      return refuse(
        .upgradeKept, .encoded(label.encoding ?? []), severity: strict ? .error : .warning)
    case .unverified where carrier == nil:
      // With --blobs, storing the bytes says so.
      problems.append(
        Problem(
          kind: .unverified, severity: strict ? .error : .warning, offset: entry.keyOffset,
          message: Messages.body(.carriedUnverified, place: place, digest: digest.description),
          pointer: ""))
    case .verifiedStream:
      guard checked.streamIsValid else {
        return refuse(.invalidData, .invalidGzip(reason: checked.streamFailure ?? ""))
      }
      upgrade.decodesStream = true
    case .verified, .unverified:
      break
    }
    // A length that is not the bytes' size: push --blobs would refuse it; so does upgrade.
    if entry.members.length.isPresent,
      let expected = BodyCarrier.lengthValue(
        UnsafeBufferPointer(rebasing: text[entry.members.length.start..<entry.members.length.end])),
      expected != checked.size
    {
      let length = String(
        decoding: text[entry.members.length.start..<entry.members.length.end], as: UTF8.self)
      return refuse(.lengthMismatch, .otherSize(file: nil, size: checked.size, length: length))
    }
    upgrade.size = checked.size
    if digest.algorithm == .md5 || upgrade.decodesStream {
      let sha1 = AttachmentDigest(algorithm: .sha1, hash: checked.sha1).description
      upgrade.digest = sha1
      upgrade.finalDigest = Array(sha1.utf8)
    }
    return nil
  }

  /// Why the entry cannot become a member of the `--into` object, if it cannot: the property
  /// is not an object (or is a blob), the name is there already, or two entries have it.
  private func clash(
    of entry: LegacyEntry, at index: Int, in document: borrowing ScannedDocument,
    intoKeys: [[UInt8]], text: UnsafeBufferPointer<UInt8>
  ) -> Problem? {
    let name = document.string(entry.key, in: text)
    if document.into.count > 0
      && (document.into.kind != .object
        || document.blobs.elements.contains { $0.span == document.into.value })
    {
      return Problem(
        kind: .upgradeClash, severity: .error, offset: entry.keyOffset,
        message: document.into.kind == .object
          ? Messages.upgradeIntoBlob(property: options())
          : Messages.upgradeIntoNotObject(property: options(), kind: document.into.kind),
        pointer: "")
    }
    let decodedName = JSONText.decodeString(
      UnsafeBufferPointer(rebasing: text[entry.key.start..<entry.key.end]))
    // Two entries of one name cannot both become members of one object.
    let entries = document.entries.elements
    let duplicate = entries[..<index].contains { earlier in
      JSONText.decodedEqual(earlier.key, entry.key, in: text) && earlier.member != entry.member
    }
    guard duplicate || intoKeys.contains(decodedName) else { return nil }
    return Problem(
      kind: .upgradeClash, severity: .error, offset: entry.keyOffset,
      message: duplicate
        ? Messages.upgradeDuplicateEntry(name: name, property: options())
        : Messages.upgradeClash(name: name, property: options()), pointer: "")
  }

  /// What is left and mirrors a new blob (its digest, and its bytes when it carries some) is
  /// removed too, so that pull after upgrade changes nothing.
  private func removeMirrorsOfNewBlobs(
    _ plan: inout Plan, entries: UnsafeBufferPointer<LegacyEntry>, text: UnsafeBufferPointer<UInt8>
  ) {
    let newBlobs = entries.indices.compactMap { index -> (digest: [UInt8], entry: LegacyEntry)? in
      if case .upgraded(let upgrade) = plan.fates[index] {
        return (upgrade.finalDigest, entries[index])
      }
      return nil
    }
    guard !newBlobs.isEmpty else { return }
    for (index, entry) in entries.enumerated() {
      guard case .kept = plan.fates[index], entry.isObject, entry.members.digestIsString,
        !entry.members.data.isPresent || entry.members.dataKind == .string
      else { continue }
      let digest = JSONText.decodeString(
        UnsafeBufferPointer(rebasing: text[entry.members.digest.start..<entry.members.digest.end]))
      let mirrors = newBlobs.contains { blob in
        blob.digest == digest
          && (!entry.members.data.isPresent
            || (blob.entry.members.data.isPresent && blob.entry.members.dataKind == .string
              && JSONText.decodedEqual(blob.entry.members.data, entry.members.data, in: text)))
      }
      if mirrors {
        plan.fates[index] = .removed
        plan.problems.removeAll { $0.offset == entry.keyOffset && $0.kind == .upgradeKept }
      }
    }
  }

  private func options() -> String { String(decoding: into, as: UTF8.self) }

  /// What checking inline `data` found: how it stands to its label, and the SHA-1 and size of
  /// the attachment's bytes (what a gzip stream decodes to, for ``BodyCheck/verifiedStream``).
  struct Checked {
    var check: BodyCheck
    var sha1: [UInt8]
    var size: Int
    /// For a stream: why it does not decode (zlib's reason), nil when it does.
    var streamFailure: String? = nil
    var streamIsValid: Bool { streamFailure == nil }
  }

  /// Decodes inline `data` and checks it against its label; nil when it is not base64.
  private static func check(
    data: UnsafeBufferPointer<UInt8>, label: BodyLabel, levels: inout CompressionLevelGuess
  ) -> Checked? {
    var sha1 = Hasher(.sha1)
    var own = label.digest.algorithm == .sha1 ? nil : Hasher(label.digest.algorithm)
    var size = 0
    var head: [UInt8] = []
    do {
      try Base64.decode(stringToken: data) {
        if head.count < 2 { head += $0.prefix(2 - head.count) }
        sha1.update($0)
        own?.update($0)
        size += $0.count
      }
    } catch {
      return nil
    }
    var sha1Hash = sha1.finish()
    let ownHash = own.take()?.finish() ?? sha1Hash
    let check = BodyCheck.check(
      ownHash: ownHash, head: head, label: label, levels: &levels,
      body: BodyCheck.replay(data: data))
    guard check == .verifiedStream else { return Checked(check: check, sha1: sha1Hash, size: size) }
    var decoded = Hasher(.sha1)
    size = 0
    do throws(DecompressionFailure<Never>) {
      try BodyCheck.decodeStream(data: data) { (piece) throws(Never) in
        decoded.update(piece)
        size += piece.count
      }
    } catch {
      guard case .invalid(let invalid) = error else { return nil }
      return Checked(check: check, sha1: sha1Hash, size: size, streamFailure: invalid.reason)
    }
    sha1Hash = decoded.finish()
    return Checked(check: check, sha1: sha1Hash, size: size)
  }

  func findProblems(
    in document: borrowing ScannedDocument, text: UnsafeBufferPointer<UInt8>,
    into problems: inout [Problem], workspace: inout WriterWorkspace
  ) {
    let plan = plan(document, text: text, workspace: &workspace)
    workspace.upgradePlan = plan
    // Two properties of that name: which one the blobs would go in is a guess, refused; a
    // document with nothing to upgrade is left as it is.
    if document.into.count > 1 && plan.upgrades > 0 {
      problems.append(
        Problem(
          kind: .upgradeClash, severity: .error, offset: document.start,
          message: Messages.upgradeIntoTwice(property: options()), pointer: ""))
    }
    problems.append(contentsOf: plan.problems)
  }

  func write(
    _ document: borrowing ScannedDocument, text: UnsafeBufferPointer<UInt8>, line: Int,
    to output: inout ByteBuffer, statistics: inout ConversionStatistics,
    workspace: inout WriterWorkspace,
    problems: inout [Problem]
  ) -> ConversionIOError? {
    let extent = Span(start: document.start.value, end: document.end.value)
    let cached = workspace.upgradePlan.take()
    let plan =
      cached?.document == extent ? cached! : self.plan(document, text: text, workspace: &workspace)
    guard plan.changes else {
      output.append(text)
      return nil
    }
    let entries = document.entries.elements
    var blobs = ByteBuffer(capacity: 256)
    var splicer = MemberSplicer()
    var removed: [Span] = []
    for (index, entry) in entries.enumerated() {
      switch plan.fates[index] {
      case .kept:
        continue
      case .removed:
        // With --blobs, bytes pull would store are stored first; when the store keeps another
        // file under their name, the entry stays with them.
        if carrier != nil, entry.members.data.isPresent, entry.members.dataKind == .string {
          let (stored, failure) = storeInline(
            entry, document, text: text, problems: &problems, workspace: &workspace.bodies)
          if let failure { return failure }
          guard problems.allSatisfy({ $0.severity != .error }) else { return nil }
          if !stored { continue }
        }
        removed.append(entry.member)
        statistics.entriesRemoved += 1
      case .upgraded(let upgrade):
        removed.append(entry.member)
        statistics.entriesRemoved += 1
        var stored = false
        if carrier != nil, entry.members.data.isPresent {
          let result = storeInline(
            entry, document, text: text, problems: &problems, workspace: &workspace.bodies)
          if let failure = result.failure { return failure }
          guard problems.allSatisfy({ $0.severity != .error }) else { return nil }
          stored = result.stored
        }
        splicer.beginMember(in: &blobs)
        appendBlob(entry, upgrade: upgrade, dropsData: stored, text: text, to: &blobs)
      }
    }
    writeEdited(document, text: text, removed: removed, blobs: blobs, to: &output)
    return nil
  }

  /// Writes the document with its `_attachments` less the `removed` entries (gone when none is
  /// left) and the new `blobs` in the `--into` property (made as the last member when there is
  /// none).
  private func writeEdited(
    _ document: borrowing ScannedDocument, text: UnsafeBufferPointer<UInt8>, removed: [Span],
    blobs: borrowing ByteBuffer, to output: inout ByteBuffer
  ) {
    var edits = TextEdits()
    let attachments = document.attachments
    let left = document.entries.count - removed.count
    if left == 0 {
      edits.removeMember(attachments.member, in: text)
    } else {
      var value = ByteBuffer(capacity: attachments.value.count)
      value.append(UInt8(ascii: "{"))
      var kept = MemberSplicer()
      kept.append(
        text.baseAddress!, from: attachments.value.start + 1, to: attachments.value.end - 1,
        excluding: removed, to: &value)
      value.append(UInt8(ascii: "}"))
      edits.replace(attachments.value, with: Array(value.bytes))
    }
    if blobs.count > 0 {
      if document.into.count == 1 {
        let value = document.into.value
        edits.insert(
          (value.count > 2 ? [UInt8(ascii: ",")] : []) + Array(blobs.bytes), at: value.end - 1)
      } else {
        // A new property, as the document's last member.
        let rootKeepsMembers = left > 0 || text.count - 2 > attachments.member.count + 1
        var member: [UInt8] = rootKeepsMembers ? [UInt8(ascii: ",")] : []
        member += intoToken + Array(":{".utf8) + Array(blobs.bytes) + [UInt8(ascii: "}")]
        edits.insert(member, at: text.count - 1)
      }
    }
    edits.apply(to: text, into: &output)
  }

  /// With `--blobs`: stores an entry's inline `data` under the SHA-1 of its bytes, checked
  /// against its digest. Returns whether the bytes are in the store (so `data` can go), and a
  /// failure of the store that ends the run; what rejects the document is in `problems`.
  private func storeInline(
    _ entry: LegacyEntry, _ document: borrowing ScannedDocument, text: UnsafeBufferPointer<UInt8>,
    problems: inout [Problem], workspace: inout BodyWorkspace
  ) -> (stored: Bool, failure: ConversionIOError?) {
    let digestText = JSONText.decodeString(
      UnsafeBufferPointer(rebasing: text[entry.members.digest.start..<entry.members.digest.end]))
    guard let carrier, let digest = digestText.withUnsafeBufferPointer({ AttachmentDigest($0) })
    else { return (false, nil) }
    return carrier.storeInline(
      data: UnsafeBufferPointer(rebasing: text[entry.members.data.start..<entry.members.data.end]),
      label: BodyLabel(digest: digest, members: entry.members, text: text), decodingStreams: true,
      place: "_attachments entry "
        + ConversionDiagnostic.quoted(document.string(entry.key, in: text)),
      offset: entry.keyOffset, strict: strict, problems: &problems, workspace: &workspace)
  }

  /// The members of an entry a blob does not take: how the entry stood in `_attachments`
  /// (`stub`, `revpos`, `follows`), and how the server stores the bytes (`encoding`,
  /// `encoded_length`: the blob holds the bytes themselves).
  private static let leftOut = ["stub", "revpos", "follows", "@type", "encoding", "encoded_length"]
    .map { Array($0.utf8) }

  /// `"NAME":{"@type":"blob",…}` for an entry: its members in order but those ``leftOut`` (and
  /// `data` when it went into the store), the digest replaced when re-hashed, `data` decoded
  /// when it was the server's gzip stream, and `length` added when the bytes are at hand and it
  /// had none.
  private func appendBlob(
    _ entry: LegacyEntry, upgrade: Upgrade, dropsData: Bool, text: UnsafeBufferPointer<UInt8>,
    to output: inout ByteBuffer
  ) {
    output.append(UnsafeBufferPointer(rebasing: text[entry.key.start..<entry.key.end]))
    output.append(":{\"@type\":\"blob\"")
    for member in CompactObject.members(entry.value, in: text) {
      let key = member.key
      if Self.leftOut.contains(where: { CompactObject.key(key, in: text, is: $0) })
        || (dropsData && member.value == entry.members.data)
      {
        continue
      }
      if upgrade.decodesStream && member.value == entry.members.data {
        // The blob holds the bytes themselves, not the server's gzip stream of them.
        output.append(",")
        output.append(UnsafeBufferPointer(rebasing: text[key.start..<key.end]))
        output.append(":\"")
        var encoder = Base64Encoder()
        let data = UnsafeBufferPointer(rebasing: text[member.value.start..<member.value.end])
        try? BodyCheck.decodeStream(data: data) { (piece) throws(Never) in
          encoder.append(piece, to: &output)
        }
        encoder.finish(to: &output)
        output.append(UInt8(ascii: "\""))
        continue
      }
      output.append(UInt8(ascii: ","))
      if let digest = upgrade.digest, CompactObject.key(key, in: text, is: Array("digest".utf8)) {
        output.append(UnsafeBufferPointer(rebasing: text[key.start..<key.end]))
        output.append(UInt8(ascii: ":"))
        Array(digest.utf8).withUnsafeBufferPointer { JSONText.appendQuoted($0, to: &output) }
        continue
      }
      output.append(UnsafeBufferPointer(rebasing: text[member.whole.start..<member.whole.end]))
    }
    if let size = upgrade.size, !entry.members.length.isPresent {
      output.append(",\"length\":")
      output.appendDecimal(size)
    }
    output.append(UInt8(ascii: "}"))
  }
}
