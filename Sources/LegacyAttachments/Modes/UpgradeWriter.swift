/// `--upgrade` (SPEC.md, "Couchbase Lite compatibility"): moves legacy attachments into blob
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
      let name = document.string(entry.key, in: text)
      func stays(_ message: String) {
        plan.problems.append(
          Problem(
            kind: .upgradeKept, severity: strict ? .error : .warning, offset: entry.keyOffset,
            message: message, pointer: ""))
        plan.fates.append(.kept)
      }
      guard entry.isObject, entry.members.digestIsString else {
        plan.fates.append(.kept)
        continue
      }
      let digestText = JSONText.decodeString(
        UnsafeBufferPointer(rebasing: text[entry.members.digest.start..<entry.members.digest.end]))
      let digest = digestText.withUnsafeBufferPointer { AttachmentDigest($0) }
      let data =
        entry.members.data.isPresent && entry.members.dataKind == .string
        ? UnsafeBufferPointer(rebasing: text[entry.members.data.start..<entry.members.data.end])
        : nil
      if entry.members.data.isPresent && data == nil {
        plan.problems.append(
          Problem(
            kind: .invalidData, severity: .error, offset: entry.keyOffset,
            message: Messages.entryDataNotString(name: name, kind: entry.members.dataKind),
            pointer: ""))
        plan.fates.append(.kept)
        continue
      }
      if PushWriter.isSynthesized(key: entry.key, in: text, scratch: &workspace.scratch) {
        // Pull left it: it mirrors no blob, or it holds bytes the blob it mirrors does not.
        let mirrors = document.blobs.elements.contains {
          $0.members.digestIsString
            && JSONText.decodedEqual($0.members.digest, entry.members.digest, in: text)
        }
        stays(
          mirrors && data != nil
            ? Messages.upgradeKeptMirrorBytes(name: name)
            : Messages.upgradeKeptSynthesized(name: name))
        continue
      }
      if entry.members.isEncoded || entry.members.follows {
        stays(Messages.upgradeKeptEncoded(name: name, follows: entry.members.follows))
        continue
      }
      var upgrade = Upgrade(digest: nil, size: nil, finalDigest: digestText)
      if let data {
        // The bytes are at hand: they must be the digest's; an md5 digest becomes their SHA-1.
        guard let digest else {
          stays(Messages.upgradeKeptUnknownDigest(name: name))
          continue
        }
        guard let checked = Self.check(data: data, digest: digest) else {
          plan.problems.append(
            Problem(
              kind: .invalidData, severity: .error, offset: entry.keyOffset,
              message: Messages.body(
                .invalidBase64, place: "_attachments entry " + ConversionDiagnostic.quoted(name),
                digest: digest.description), pointer: ""))
          plan.fates.append(.kept)
          continue
        }
        guard checked.matches else {
          plan.problems.append(
            Problem(
              kind: .dataMismatch, severity: .error, offset: entry.keyOffset,
              message: Messages.body(
                .otherBytes(file: nil, actual: checked.actual),
                place: "_attachments entry " + ConversionDiagnostic.quoted(name),
                digest: digest.description), pointer: ""))
          plan.fates.append(.kept)
          continue
        }
        // A length that is not the bytes' size: push --blobs would refuse it; so does upgrade.
        if entry.members.length.isPresent,
          let expected = BodyCarrier.lengthValue(
            UnsafeBufferPointer(
              rebasing: text[entry.members.length.start..<entry.members.length.end])),
          expected != checked.size
        {
          let length = String(
            decoding: text[entry.members.length.start..<entry.members.length.end], as: UTF8.self)
          plan.problems.append(
            Problem(
              kind: .lengthMismatch, severity: .error, offset: entry.keyOffset,
              message: Messages.body(
                .otherSize(file: nil, size: checked.size, length: length),
                place: "_attachments entry " + ConversionDiagnostic.quoted(name),
                digest: digest.description), pointer: ""))
          plan.fates.append(.kept)
          continue
        }
        upgrade.size = checked.size
        if digest.algorithm == .md5 {
          let sha1 = AttachmentDigest(algorithm: .sha1, hash: checked.sha1).description
          upgrade.digest = sha1
          upgrade.finalDigest = Array(sha1.utf8)
        }
      } else if digestText.starts(with: "md5-".utf8) {
        stays(Messages.upgradeKeptMD5(name: name))
        continue
      }
      if document.into.count > 0
        && (document.into.kind != .object
          || document.blobs.elements.contains { $0.span == document.into.value })
      {
        plan.problems.append(
          Problem(
            kind: .upgradeClash, severity: .error, offset: entry.keyOffset,
            message: document.into.kind == .object
              ? Messages.upgradeIntoBlob(property: options())
              : Messages.upgradeIntoNotObject(property: options(), kind: document.into.kind),
            pointer: ""))
        plan.fates.append(.kept)
        continue
      }
      let decodedName = JSONText.decodeString(
        UnsafeBufferPointer(rebasing: text[entry.key.start..<entry.key.end]))
      // Two entries of one name cannot both become members of one object.
      let duplicate = entries[..<index].contains { earlier in
        JSONText.decodedEqual(earlier.key, entry.key, in: text) && earlier.member != entry.member
      }
      if duplicate || intoKeys.contains(decodedName) {
        plan.problems.append(
          Problem(
            kind: .upgradeClash, severity: .error, offset: entry.keyOffset,
            message: duplicate
              ? Messages.upgradeDuplicateEntry(name: name, property: options())
              : Messages.upgradeClash(name: name, property: options()), pointer: ""))
        plan.fates.append(.kept)
        continue
      }
      plan.fates.append(.upgraded(upgrade))
    }
    // What is left and mirrors a new blob (its digest, and its bytes when it carries some) is
    // removed too, so that pull after upgrade changes nothing.
    let newBlobs = entries.indices.compactMap { index -> (digest: [UInt8], entry: LegacyEntry)? in
      if case .upgraded(let upgrade) = plan.fates[index] {
        return (upgrade.finalDigest, entries[index])
      }
      return nil
    }
    guard !newBlobs.isEmpty else { return plan }
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
    return plan
  }

  private func options() -> String { String(decoding: into, as: UTF8.self) }

  /// Decodes inline `data` and checks it: whether it matches `digest`, its SHA-1 and size.
  private static func check(data: UnsafeBufferPointer<UInt8>, digest: AttachmentDigest)
    -> (matches: Bool, actual: AttachmentDigest, sha1: [UInt8], size: Int)?
  {
    var sha1 = Hasher(.sha1)
    var own = digest.algorithm == .sha1 ? nil : Hasher(digest.algorithm)
    var size = 0
    do {
      try Base64.decode(stringToken: data) {
        sha1.update($0)
        own?.update($0)
        size += $0.count
      }
    } catch {
      return nil
    }
    let sha1Hash = sha1.finish()
    let ownHash = own.take()?.finish() ?? sha1Hash
    return (
      ownHash == digest.bytes, AttachmentDigest(algorithm: digest.algorithm, hash: ownHash),
      sha1Hash, size
    )
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
            entry, document, text: text, problems: &problems, stored: &workspace.storedBodies)
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
            entry, document, text: text, problems: &problems, stored: &workspace.storedBodies)
          if let failure = result.failure { return failure }
          guard problems.allSatisfy({ $0.severity != .error }) else { return nil }
          stored = result.stored
        }
        splicer.beginMember(in: &blobs)
        appendBlob(entry, upgrade: upgrade, dropsData: stored, text: text, to: &blobs)
      }
    }
    var edits = TextEdits()
    let attachments = document.attachments
    let left = entries.count - removed.count
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
    return nil
  }

  /// With `--blobs`: stores an entry's inline `data` under the SHA-1 of its bytes, checked
  /// against its digest. Returns whether the bytes are in the store (so `data` can go), and a
  /// failure of the store that ends the run; what rejects the document is in `problems`.
  private func storeInline(
    _ entry: LegacyEntry, _ document: borrowing ScannedDocument, text: UnsafeBufferPointer<UInt8>,
    problems: inout [Problem], stored: inout [String]
  ) -> (stored: Bool, failure: ConversionIOError?) {
    let digestText = JSONText.decodeString(
      UnsafeBufferPointer(rebasing: text[entry.members.digest.start..<entry.members.digest.end]))
    guard let carrier, let digest = digestText.withUnsafeBufferPointer({ AttachmentDigest($0) })
    else { return (false, nil) }
    return carrier.storeInline(
      data: UnsafeBufferPointer(rebasing: text[entry.members.data.start..<entry.members.data.end]),
      digest: digest,
      place: "_attachments entry "
        + ConversionDiagnostic.quoted(document.string(entry.key, in: text)),
      offset: entry.keyOffset, strict: strict, problems: &problems, stored: &stored)
  }

  /// `"NAME":{"@type":"blob",…}` for an entry: its members in order but `stub`, `revpos`,
  /// `follows` (and `@type`, and `data` when it went into the store), the digest replaced when
  /// re-hashed, and `length` added when the bytes are at hand and it had none.
  private func appendBlob(
    _ entry: LegacyEntry, upgrade: Upgrade, dropsData: Bool, text: UnsafeBufferPointer<UInt8>,
    to output: inout ByteBuffer
  ) {
    output.append(UnsafeBufferPointer(rebasing: text[entry.key.start..<entry.key.end]))
    output.append(":{\"@type\":\"blob\"")
    for member in CompactObject.members(entry.value, in: text) {
      let key = member.key
      if CompactObject.key(key, in: text, is: Array("stub".utf8))
        || CompactObject.key(key, in: text, is: Array("revpos".utf8))
        || CompactObject.key(key, in: text, is: Array("follows".utf8))
        || CompactObject.key(key, in: text, is: Array("@type".utf8))
        || (dropsData && member.value == entry.members.data)
      {
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
