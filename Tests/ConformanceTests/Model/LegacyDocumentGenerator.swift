import TestSupport

// Documents as Couchbase Lite 1.x, CouchDB and PouchDB have them: attachments only in
// `_attachments`, as stubs with revpos, as inline base64 with sha1- or md5- digests, gzip-encoded
// or multipart `follows`, under real names; and, now and then, documents half-way to
// Couchbase Lite 2 (a blob and its mirror entry, an `attachments` property already there).

extension DocumentGenerator {
  /// Attachment names as applications chose them, escaped at random when written; some are
  /// synthesized names, which `--upgrade` must leave where they are.
  static let attachmentNames: [String] = [
    "photo.jpg", "notes.txt", "a/b.png", "til~de", "é.png", "sp ace", "dot.in.name", "[0]",
    "back\\slash", "qu\"ote", "日本語.txt", "", "_private", "@type", "$money", "$.x", "blob_/x",
    "blob_3", "blob_", "thumbnail",
  ]

  /// Inline bodies as base64 `data`, in a fixed order (their digests are in `KnownBodies`).
  static let knownBodies: [[UInt8]] = [Array("aGVsbG8=".utf8), Array("d29ybGQ=".utf8), []]

  /// One legacy attachment entry.
  mutating func legacyAttachmentEntry() -> RawJSON {
    func member(_ name: String, _ value: RawJSON) -> RawMember {
      RawMember(key: key(name), value: value)
    }
    if random.percent(4) {
      return random.percent(50) ? .string(string("x")) : .scalar(Array("null".utf8))
    }
    let body = random.pick(Self.knownBodies)
    let known = KnownBodies.table[body]!
    let sha1 = String(decoding: known.sha1, as: UTF8.self)
    let md5 = String(decoding: known.md5, as: UTF8.self)
    var members: [RawMember] = []
    if random.percent(70) {
      members.append(member("content_type", .string(string(random.pick(Self.contentTypes)))))
    }
    var digest: String
    var data: RawJSON? = nil
    switch random.below(100) {
    case 0..<35:  // A stub from Couchbase Lite 1.x or Sync Gateway.
      digest = sha1
    case 35..<60:  // Inline bytes with their SHA-1.
      digest = sha1
      data = .string(string(String(decoding: body, as: UTF8.self)))
    case 60..<67:  // CouchDB or PouchDB: inline bytes under their MD5.
      digest = md5
      data = .string(string(String(decoding: body, as: UTF8.self)))
    case 67..<72:  // CouchDB stored them compressed: the MD5 of its gzip stream of them.
      digest = String(decoding: known.couchDBGzipMD5, as: UTF8.self)
      data = .string(string(String(decoding: body, as: UTF8.self)))
    case 72..<80:  // A CouchDB stub: an MD5, the bytes not at hand.
      digest = random.percent(80) ? md5 : "md5-not-base64"
    case 80..<85:  // Bytes that are not the digest's.
      let other = random.pick(Self.knownBodies.filter { $0 != body })
      digest = String(decoding: KnownBodies.table[other]!.sha1, as: UTF8.self)
      data = .string(string(String(decoding: body, as: UTF8.self)))
    case 85..<88:
      digest = sha1
      data = .string(string("@@@@"))
    case 88..<91:
      digest = sha1
      data = .scalar(Array(random.pick(["17", "null", "true"]).utf8))
    case 91..<95:  // A digest that names no hash.
      digest = random.pick(["sha1-😀", "crc32-1234", "", "sha1-short="])
      if random.percent(50) { data = .string(string(String(decoding: body, as: UTF8.self))) }
    default:
      digest = sha1
    }
    if random.percent(4) {
      members.append(member("digest", .scalar(Array("null".utf8))))
    } else {
      members.append(member("digest", .string(string(digest))))
    }
    if random.percent(70) {
      members.append(
        member("length", .scalar(Array(String(random.percent(90) ? known.size : 99).utf8))))
    }
    if data == nil || random.percent(20) {
      members.append(member("revpos", .scalar(Array(String(random.below(9) + 1).utf8))))
      members.append(member("stub", .scalar(Array("true".utf8))))
    }
    if let data { members.append(member("data", data)) }
    if random.percent(5) {
      members.append(member("encoding", .string(string("gzip"))))
      members.append(member("encoded_length", .scalar(Array("25".utf8))))
    }
    if random.percent(4) { members.append(member("follows", .scalar(Array("true".utf8)))) }
    if random.percent(3) { members.append(member("follows", .scalar(Array("false".utf8)))) }
    if random.percent(8) { members.append(member(random.pick(Self.words), value(depth: 4))) }
    if random.percent(20) { members.shuffle(using: &random) }
    return .object(members)
  }

  /// A blob as Couchbase Lite 2 writes it, for documents half-way there; returns it and its
  /// digest and bytes, so that a mirror entry can be made.
  mutating func modernBlob() -> (blob: RawJSON, digest: String, data: String?) {
    let body = random.pick(Self.knownBodies)
    let known = KnownBodies.table[body]!
    let digest = String(decoding: known.sha1, as: UTF8.self)
    var members = [
      RawMember(key: key("@type"), value: .string(string("blob"))),
      RawMember(key: key("content_type"), value: .string(string(random.pick(Self.contentTypes)))),
      RawMember(key: key("digest"), value: .string(string(digest))),
      RawMember(key: key("length"), value: .scalar(Array(String(known.size).utf8))),
    ]
    let data = random.percent(20) ? String(decoding: body, as: UTF8.self) : nil
    if let data { members.append(RawMember(key: key("data"), value: .string(string(data)))) }
    return (.object(members), digest, data)
  }

  /// One document of a Couchbase Lite 1.x database, or of CouchDB or PouchDB.
  mutating func legacyDocument(into: String = "attachments") -> RawJSON {
    var members: [RawMember] = [
      RawMember(key: key("_id"), value: .string(string("doc-\(random.below(10_000))"))),
      RawMember(
        key: key("_rev"), value: .string(string("\(random.below(30) + 1)-\(random.below(1 << 20))"))
      ),
    ]
    for _ in 0..<random.below(4) {
      members.append(RawMember(key: key(random.pick(Self.words)), value: value(depth: 4)))
    }
    var entries: [RawMember] = []
    // Half-way to Couchbase Lite 2: blobs, with or without their mirror entries.
    if random.percent(20) {
      let placeName = random.pick(["photo", "scan", "a/b", "til~de"])
      let (blob, digest, data) = modernBlob()
      members.append(RawMember(key: key(placeName), value: blob))
      if random.percent(70) {
        let name = random.percent(50) ? "$." + placeName : "blob_/" + placeName
        // As it comes back from CouchDB, too: the digest re-labelled md5- (of the body, or of
        // the gzip stream CouchDB stored), mirroring the blob by its name and length.
        let couchDB = random.percent(30)
        let body = KnownBodies.table.values.first { $0.sha1 == Array(digest.utf8) }!
        var mirror = [
          RawMember(
            key: key("digest"),
            value: .string(
              string(
                couchDB
                  ? String(
                    decoding: random.percent(50) ? body.md5 : body.couchDBGzipMD5, as: UTF8.self)
                  : digest))),
          RawMember(key: key("stub"), value: .scalar(Array("true".utf8))),
        ]
        if couchDB && random.percent(80) {
          mirror.append(
            RawMember(
              key: key("length"),
              value: .scalar(Array(String(random.percent(85) ? body.size : 7).utf8))))
        }
        if let data, random.percent(50) {
          mirror.append(RawMember(key: key("data"), value: .string(string(data))))
        }
        entries.append(
          RawMember(key: key(random.percent(80) ? name : "blob_1"), value: .object(mirror)))
      }
    }
    if random.percent(12) {
      // The property is there already: an object (maybe with a name an entry has), or not.
      let value: RawJSON
      if random.percent(80) {
        var existing: [RawMember] = []
        for _ in 0..<random.below(3) {
          existing.append(
            RawMember(
              key: key(random.pick(Self.attachmentNames)),
              value: random.percent(50) ? modernBlob().blob : .string(string("kept"))))
        }
        value = .object(existing)
      } else {
        value = .scalar(Array(random.pick(["null", "3", "[]"]).utf8))
      }
      members.append(RawMember(key: key(into), value: value))
      if random.percent(10) { members.append(RawMember(key: key(into), value: .object([]))) }
    }
    for _ in 0..<(random.percent(90) ? 1 + random.below(4) : 0) {
      entries.append(
        RawMember(key: key(random.pick(Self.attachmentNames)), value: legacyAttachmentEntry()))
    }
    entries.shuffle(using: &random)
    if !entries.isEmpty || random.percent(30) {
      members.insert(
        RawMember(key: key("_attachments"), value: .object(entries)),
        at: random.below(members.count + 1))
    }
    return .object(members)
  }
}
