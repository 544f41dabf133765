@_spi(Testing) import LegacyAttachments
import TestSupport

// The reference model learns SPEC.md's "Couchbase Lite compatibility" conversions: `--upgrade`
// and `--pull --update-blobs`, written the obvious way on the tree, without a blob store.

/// The bodies the generators put in `data`, with their digests as computed by coreutils
/// (`printf %s hello | sha1sum`, then base64), so that the model needs no hash of its own; and
/// the MD5 CouchDB gives them when it stores them compressed, computed by Python's zlib
/// (`zlib.compressobj(8, zlib.DEFLATED, 31, 8)`, as `couch_stream` asks Erlang's zlib; the
/// empty body's is the one a real CouchDB 3.5 gave, `make interop`).
enum KnownBodies {
  struct Body {
    var size: Int
    var sha1: [UInt8]
    var md5: [UInt8]
    var couchDBGzipMD5: [UInt8]
  }

  /// Keyed by the decoded `data` string.
  static let table: [[UInt8]: Body] = [
    Array("aGVsbG8=".utf8): Body(
      size: 5, sha1: Array("sha1-qvTGHdzF6KLavt4PO0gs2a6pQ00=".utf8),
      md5: Array("md5-XUFAKrxLKna5cZ2REBfFkg==".utf8),
      couchDBGzipMD5: Array("md5-iMaiC8wqiFlD2NjLTemvCQ==".utf8)),
    Array("d29ybGQ=".utf8): Body(
      size: 5, sha1: Array("sha1-fCEUM/AgcVl3Qeb/Wo6jR4mrv0M=".utf8),
      md5: Array("md5-fXkwN6B2AYZXSwKC8vQ15w==".utf8),
      couchDBGzipMD5: Array("md5-b40f76VKsgaYskmGfWYDbg==".utf8)),
    []: Body(
      size: 0, sha1: Array("sha1-2jmj7l5rSw0yVb/vlWAYkK/YBwk=".utf8),
      md5: Array("md5-1B2M2Y8AsgTpgAmY7PhCfg==".utf8),
      couchDBGzipMD5: Array("md5-cCkGbCesb17xjWYNV0GXmg==".utf8)),
  ]

  /// Whether `text` is made of base64's alphabet, in groups of four (strict base64 is that and
  /// padding only at the end; the generators' only other data strings are far from it).
  static func mayBeBase64(_ text: [UInt8]) -> Bool {
    text.count % 4 == 0
      && text.allSatisfy { byte in
        (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
          || (byte >= 0x30 && byte <= 0x39) || byte == 0x2B || byte == 0x2F || byte == 0x3D
      }
  }
}

extension ReferenceModel {
  static let followsKey = Array("follows".utf8)
  static let encodingKey = Array("encoding".utf8)
  static let lengthKey = Array("length".utf8)
  static let contentTypeKey = Array("content_type".utf8)
  static let encodedLengthKey = Array("encoded_length".utf8)

  /// Whether CouchDB may have stored an entry's bytes compressed: it has an `encoding`, or a
  /// `content_type` CouchDB's default `compressible_types` name (`text/*`,
  /// `application/javascript`, `application/json`, `application/xml`, any case, parameters
  /// after `;`), as CouchDB's own regular expression matches them.
  static func mayBeCompressedByCouchDB(_ members: [RawMember]) -> Bool {
    if has(members, encodingKey) { return true }
    guard let type = lastMember(members, contentTypeKey)?.value.string?.value else { return false }
    let text = String(decoding: type, as: UTF8.self)
    return (try? compressiblePattern.wholeMatch(in: text)) != nil
  }

  nonisolated(unsafe) static let compressiblePattern = try! Regex(
    #"\s*(?:text/.*|application/javascript|application/json|application/xml)(?:\s*;.*)?\s*"#
  ).ignoresCase()

  /// The algorithm a digest names, when it is `sha1-` or `md5-` and padded base64 of the right
  /// length (SPEC.md: a digest names a file only then).
  enum DigestForm { case sha1, md5 }

  static func digestForm(_ digest: [UInt8]) -> DigestForm? {
    let text = String(decoding: digest, as: UTF8.self)
    if (try? sha1Pattern.wholeMatch(in: text)) != nil { return .sha1 }
    if (try? md5Pattern.wholeMatch(in: text)) != nil { return .md5 }
    return nil
  }

  nonisolated(unsafe) static let sha1Pattern = try! Regex(#"sha1-[A-Za-z0-9+/]{27}="#)
  nonisolated(unsafe) static let md5Pattern = try! Regex(#"md5-[A-Za-z0-9+/]{22}=="#)

  static func lastMember(_ members: [RawMember], _ key: [UInt8]) -> RawMember? {
    members.last { $0.key.equals(key) }
  }

  static func has(_ members: [RawMember], _ key: [UInt8]) -> Bool {
    members.contains { $0.key.equals(key) }
  }

  // MARK: Pull's first step, shared

  /// The indices of the entries SPEC.md pull removes (rule 1 and rule 4), without a store.
  static func pullRemovals(_ entries: [RawMember], blobs: [BlobReference]) -> Set<Int> {
    var removed = Set<Int>()
    for (index, entry) in entries.enumerated() {
      let mirror = mirror(entry, blobs: blobs)
      if case .none = mirror { continue }
      if let data = entry.value.members.flatMap({ lastMember($0, dataKey) })?.value {
        guard let bytes = data.string?.value, mirror.blobHolds(bytes, entry: entry, blobs: blobs)
        else { continue }
      }
      removed.insert(index)
    }
    return removed
  }

  // MARK: --upgrade

  /// What becomes of one entry in `--upgrade`.
  enum UpgradeFate: Equatable {
    case kept
    case removed
    /// Made a blob: the digest it gets when re-hashed, and the size when the bytes are at hand.
    case upgraded(digest: [UInt8]?, size: Int?)
  }

  static func upgrade(
    _ topLevel: [RawMember], blobs: [BlobReference], into: [UInt8], strict: Bool
  ) throws(ModelRejection) -> ModelOutput {
    var members = topLevel
    guard let attachmentsIndex = members.firstIndex(where: { $0.key.equals(attachmentsKey) }),
      let entries = members[attachmentsIndex].value.members, !entries.isEmpty
    else { return ModelOutput(bytes: RawJSON.object(members).serialized(), warnings: 0) }

    let intoMembers = members.filter { $0.key.equals(into) }
    let intoValue = intoMembers.first?.value
    let intoKeys = intoMembers.count == 1 ? (intoValue?.members ?? []).map(\.key.value) : []
    let removedByPull = pullRemovals(entries, blobs: blobs)

    var fates: [UpgradeFate] = []
    /// Per entry: a problem, and whether it is an error whatever `strict` says.
    var problems: [(index: Int, kind: ModelRejection, alwaysError: Bool)] = []
    for (index, entry) in entries.enumerated() {
      if removedByPull.contains(index) {
        fates.append(.removed)
        continue
      }
      func stays() {
        problems.append((index, .upgradeKept, false))
        fates.append(.kept)
      }
      func rejects(_ kind: ModelRejection) {
        problems.append((index, kind, true))
        fates.append(.kept)
      }
      guard let entryMembers = entry.value.members, let digest = digest(of: entry.value) else {
        fates.append(.kept)
        continue
      }
      // A data that is not a string rejects the document, whatever else the entry is.
      if let data = lastMember(entryMembers, dataKey)?.value, data.string == nil {
        rejects(.invalidData)
        continue
      }
      if isSynthesizedName(entry.key.value) {
        stays()
        continue
      }
      let follows = lastMember(entryMembers, followsKey)?.value == .scalar(Array("true".utf8))
      let data = lastMember(entryMembers, dataKey)?.value
      // Bytes in a MIME part are not at hand; a stub with `encoding` has the digest of the
      // stored form.
      if follows || (has(entryMembers, encodingKey) && data == nil) {
        stays()
        continue
      }
      var newDigest: [UInt8]? = nil
      var size: Int? = nil
      if let data = lastMember(entryMembers, dataKey)?.value {
        guard let bytes = data.string?.value else {
          rejects(.invalidData)
          continue
        }
        guard let form = digestForm(digest) else {
          stays()
          continue
        }
        if !KnownBodies.mayBeBase64(bytes) {
          rejects(.invalidData)
          continue
        }
        guard let body = KnownBodies.table[bytes] else {
          fatalError("the model knows no digest for data \(String(decoding: bytes, as: UTF8.self))")
        }
        // CouchDB's md5- of a body it stored compressed: the gzip stream's. When no form
        // gives the digest of a body CouchDB compresses (by its type, or `encoding`), it is
        // upgraded unverified, with a warning.
        if digest == (form == .sha1 ? body.sha1 : body.md5)
          || (form == .md5 && digest == body.couchDBGzipMD5)
        {
          // An encoding that is not gzip: what the bytes stand for cannot be read.
          if let encoding = lastMember(entryMembers, encodingKey)?.value.string?.value,
            !encoding.isEmpty, encoding != Array("gzip".utf8), encoding != Array("identity".utf8)
          {
            stays()
            continue
          }
        } else if form == .md5 && mayBeCompressedByCouchDB(entryMembers) {
          problems.append((index, .unverified, false))
        } else {
          rejects(.dataMismatch)
          continue
        }
        // A numeric, whole, non-negative length must be the bytes' size.
        if let length = lastMember(entryMembers, lengthKey)?.value,
          case .scalar(let token) = length,
          let first = token.first, first == UInt8(ascii: "-") || (first >= 0x30 && first <= 0x39),
          let value = Double(String(decoding: token, as: UTF8.self)), value >= 0,
          value.rounded(.towardZero) == value, value != Double(body.size)
        {
          rejects(.lengthMismatch)
          continue
        }
        size = body.size
        if form == .md5 { newDigest = body.sha1 }
      } else if digest.starts(with: "md5-".utf8) {
        stays()
        continue
      }
      // The property must be an object, and not a blob (blobs inside one are hidden).
      if let intoValue, !intoValue.isObject || isBlob(intoValue) {
        rejects(.upgradeClash)
        continue
      }
      if intoKeys.contains(entry.key.value)
        || entries[..<index].contains(where: { $0.key.value == entry.key.value })
      {
        rejects(.upgradeClash)
        continue
      }
      fates.append(.upgraded(digest: newDigest, size: size))
    }

    // Left-over entries that mirror a new blob (its digest, and its bytes when they carry some).
    let newBlobs: [(digest: [UInt8], data: [UInt8]?)] = entries.indices.compactMap { index in
      guard case .upgraded(let newDigest, _) = fates[index] else { return nil }
      let value = entries[index].value
      return (
        newDigest ?? digest(of: value)!,
        lastMember(value.members!, dataKey)?.value.string?.value
      )
    }
    if !newBlobs.isEmpty {
      for (index, entry) in entries.enumerated() where fates[index] == .kept {
        guard let entryMembers = entry.value.members, let digest = digest(of: entry.value)
        else { continue }
        let data = lastMember(entryMembers, dataKey)?.value
        if let data, data.string == nil { continue }
        let bytes = data?.string?.value
        if newBlobs.contains(where: { $0.digest == digest && (bytes == nil || $0.data == bytes) }) {
          fates[index] = .removed
          problems.removeAll { $0.index == index && $0.kind == .upgradeKept }
        }
      }
    }

    let upgrades = fates.filter { if case .upgraded = $0 { true } else { false } }.count
    if intoMembers.count > 1 && upgrades > 0 { throw .upgradeClash }
    if let first = problems.first(where: { $0.alwaysError || strict }) { throw first.kind }
    let warnings = problems.count
    guard fates.contains(where: { $0 != .kept }) else {
      return ModelOutput(bytes: RawJSON.object(members).serialized(), warnings: warnings)
    }

    var made: [RawMember] = []
    var left: [RawMember] = []
    for (index, entry) in entries.enumerated() {
      switch fates[index] {
      case .kept:
        left.append(entry)
      case .removed:
        continue
      case .upgraded(let newDigest, let size):
        let entryMembers = entry.value.members!
        var blob = [
          RawMember(key: RawString(quoting: typeKey), value: .string(RawString(quoting: blobValue)))
        ]
        for member in entryMembers
        where !member.key.equals(stubKey) && !member.key.equals(revposKey)
          && !member.key.equals(followsKey) && !member.key.equals(typeKey)
          && !member.key.equals(encodingKey) && !member.key.equals(encodedLengthKey)
        {
          if let newDigest, member.key.equals(digestKey) {
            blob.append(RawMember(key: member.key, value: .string(RawString(quoting: newDigest))))
          } else {
            blob.append(member)
          }
        }
        if let size, !has(entryMembers, lengthKey) {
          blob.append(
            RawMember(key: RawString(quoting: lengthKey), value: .scalar(Array(String(size).utf8))))
        }
        made.append(RawMember(key: entry.key, value: .object(blob)))
      }
    }
    if left.isEmpty {
      members.remove(at: attachmentsIndex)
    } else {
      members[attachmentsIndex].value = .object(left)
    }
    if !made.isEmpty {
      if let intoIndex = members.firstIndex(where: { $0.key.equals(into) }) {
        members[intoIndex].value = .object(members[intoIndex].value.members! + made)
      } else {
        members.append(RawMember(key: RawString(quoting: into), value: .object(made)))
      }
    }
    return ModelOutput(bytes: RawJSON.object(members).serialized(), warnings: warnings)
  }

  // MARK: --pull --update-blobs

  /// `blob_` then one or more digits: Couchbase Lite 2.0's names.
  static func isNumberedName(_ name: [UInt8]) -> Bool {
    name.count > 5 && name.starts(with: "blob_".utf8)
      && name.dropFirst(5).allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
  }

  /// The blob a synthesized name gives: a `blob_/` RFC 6901 pointer, decoded (`~1` is `/`, `~0`
  /// is `~`, nothing else after `~`), or a `$` jsonpath; the first blob at that place.
  static func blob(named name: [UInt8], in blobs: [BlobReference]) -> Int? {
    if name.starts(with: "blob_/".utf8) {
      guard let steps = decodePointer(Array(name.dropFirst(5))) else { return nil }
      return blobs.firstIndex { blob in
        blob.path.count == steps.count
          && zip(blob.path, steps).allSatisfy { step, token in
            switch step {
            case .key(let key): key == token
            case .index(let index): Array(String(index).utf8) == token
            }
          }
      }
    }
    if name.first == UInt8(ascii: "$") {
      return blobs.firstIndex { jsonpathName($0.path) == name }
    }
    return nil
  }

  /// The reference tokens of a JSON Pointer (`/a/b`), or nil when an escape is not `~0`/`~1`.
  static func decodePointer(_ pointer: [UInt8]) -> [[UInt8]]? {
    guard pointer.first == UInt8(ascii: "/") else { return nil }
    var tokens: [[UInt8]] = []
    for raw in pointer.dropFirst().split(
      separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
    {
      var token: [UInt8] = []
      var iterator = raw.makeIterator()
      while let byte = iterator.next() {
        guard byte == UInt8(ascii: "~") else {
          token.append(byte)
          continue
        }
        switch iterator.next() {
        case UInt8(ascii: "0"): token.append(UInt8(ascii: "~"))
        case UInt8(ascii: "1"): token.append(UInt8(ascii: "/"))
        default: return nil
        }
      }
      tokens.append(token)
    }
    return tokens
  }

  static func pullUpdatingBlobs(_ topLevel: [RawMember], blobs: [BlobReference], strict: Bool)
    throws(ModelRejection) -> ModelOutput
  {
    var members = topLevel
    guard let attachmentsIndex = members.firstIndex(where: { $0.key.equals(attachmentsKey) }),
      let entries = members[attachmentsIndex].value.members, !entries.isEmpty
    else { return ModelOutput(bytes: RawJSON.object(members).serialized(), warnings: 0) }
    let digests = Set(blobs.compactMap(\.digest))
    // Pull rule 4 first: an entry that matches a blob by digest with a non-string data.
    for entry in entries {
      if let entryMembers = entry.value.members, let digest = digest(of: entry.value),
        digests.contains(digest), let data = lastMember(entryMembers, dataKey)?.value,
        data.string == nil
      {
        throw .invalidData
      }
    }
    var warnings = 0
    func warn(_ kind: ModelRejection) throws(ModelRejection) {
      if strict { throw kind }
      warnings += 1
    }
    var left: [RawMember] = []
    var updates: [Int: [RawMember]] = [:]
    let pullRemoved = pullRemovals(entries, blobs: blobs)
    for (index, entry) in entries.enumerated() {
      let name = entry.key.value
      let numbered = isNumberedName(name)
      guard let entryMembers = entry.value.members else {
        left.append(entry)
        continue
      }
      let data = lastMember(entryMembers, dataKey)?.value
      // Couchbase Lite 2.0's numbered names go whatever their digest (unless they carry bytes).
      if numbered && data == nil { continue }
      guard let digest = digest(of: entry.value) else {
        if isSynthesizedName(name) { try warn(.entryKept) }
        left.append(entry)
        continue
      }
      // A blob without a digest is not updated, and its entry stays.
      if !numbered, let blobIndex = blob(named: name, in: blobs), blobs[blobIndex].digest != nil {
        // CouchDB's md5- re-label with the blob's length: a mirror, not an update.
        let mirrorsByPlace: Bool
        if case .none = mirror(entry, blobs: blobs) {
          mirrorsByPlace = false
        } else {
          mirrorsByPlace = !digest.starts(with: "sha1-".utf8)
        }
        guard digest.starts(with: "sha1-".utf8) || mirrorsByPlace else {
          try warn(.blobNotUpdated)
          left.append(entry)
          continue
        }
        let blob = blobs[blobIndex]
        if let data {
          guard let bytes = data.string?.value else { throw .invalidData }
          guard blob.data == bytes && (blob.digest == digest || mirrorsByPlace) else {
            try warn(.dataKept)
            left.append(entry)
            continue
          }
        }
        if blob.digest != digest && !mirrorsByPlace { updates[blobIndex] = entryMembers }
        continue
      }
      if pullRemoved.contains(index) { continue }
      // Naming a blob without a digest, and staying: the blob is not updated, and that is said.
      let namesDigestlessBlob =
        !numbered && blob(named: name, in: blobs).map { blobs[$0].digest == nil } == true
      if namesDigestlessBlob { try warn(.blobNotUpdated) }
      if data != nil && mirror(entry, blobs: blobs) != .none(synthesized: true)
        && mirror(entry, blobs: blobs) != .none(synthesized: false)
      {
        try warn(.dataKept)
      } else if isSynthesizedName(name) && !namesDigestlessBlob {
        try warn(.entryKept)
      }
      left.append(entry)
    }
    guard left.count < entries.count || !updates.isEmpty else {
      return ModelOutput(bytes: RawJSON.object(members).serialized(), warnings: warnings)
    }
    if left.isEmpty {
      members.remove(at: attachmentsIndex)
    } else {
      members[attachmentsIndex].value = .object(left)
    }
    if !updates.isEmpty {
      members = replacingBlobs(in: members) { blobIndex, blobMembers in
        guard let entryMembers = updates[blobIndex] else { return nil }
        return .object(updated(blobMembers, from: entryMembers))
      }
    }
    return ModelOutput(bytes: RawJSON.object(members).serialized(), warnings: warnings)
  }

  /// SPEC.md: each member the blob has takes the entry's value when the entry has it (the first
  /// member of that name); `length` and `content_type` go when the entry lacks them.
  static func updated(_ blob: [RawMember], from entry: [RawMember]) -> [RawMember] {
    blob.compactMap { member in
      if member.key.equals(typeKey) { return member }
      if let replacement = entry.last(where: { $0.key.value == member.key.value }) {
        return RawMember(key: member.key, value: replacement.value)
      }
      if member.key.equals(lengthKey) || member.key.equals(contentTypeKey) { return nil }
      return member
    }
  }

  /// The top-level members with blob references replaced: `replacement` gets each reference's
  /// index in document order (as `blobReferences` numbers them) and its members.
  static func replacingBlobs(
    in members: [RawMember], _ replacement: (Int, [RawMember]) -> RawJSON?
  ) -> [RawMember] {
    var counter = 0
    func walk(_ value: RawJSON) -> RawJSON {
      switch value {
      case .object(let objectMembers):
        if isBlob(value) {
          defer { counter += 1 }
          return replacement(counter, objectMembers) ?? value
        }
        return .object(objectMembers.map { RawMember(key: $0.key, value: walk($0.value)) })
      case .array(let elements):
        return .array(elements.map(walk))
      case .string, .scalar:
        return value
      }
    }
    return members.map { member in
      member.key.equals(attachmentsKey)
        ? member : RawMember(key: member.key, value: walk(member.value))
    }
  }
}

extension ReferenceModel.Document {
  func upgrade(into: String = "attachments", strict: Bool = false) throws(ModelRejection)
    -> ModelOutput
  {
    try ReferenceModel.upgrade(members.get(), blobs: blobs, into: Array(into.utf8), strict: strict)
  }

  func pullUpdatingBlobs(strict: Bool = false) throws(ModelRejection) -> ModelOutput {
    try ReferenceModel.pullUpdatingBlobs(members.get(), blobs: blobs, strict: strict)
  }
}
