/// What a body is labelled with in its document: the digest it must match, and what the peer
/// that wrote the entry may have done to the bytes before it hashed them.
struct BodyLabel {
  var digest: AttachmentDigest
  /// The entry says so (`"encoding":"gzip"`), or its content type is one CouchDB compresses:
  /// an `md5-` digest that the bytes' own MD5 is not may still be theirs (``CouchDB``).
  var mayBeCompressed: Bool
  /// The entry's `encoding` value (decoded), nil without one. Sync Gateway keeps the bytes of an
  /// entry with `"encoding":"gzip"` as they were sent (the gzip stream), hashes that, and
  /// returns it as `data`; CouchDB returns the decoded bytes.
  var encoding: [UInt8]?

  /// The label of an entry or blob whose digest is `digest`, from its `encoding` and
  /// `content_type` members.
  init(digest: AttachmentDigest, members: AttachmentMembers, text: UnsafeBufferPointer<UInt8>) {
    func string(_ span: Span) -> [UInt8]? {
      guard span.isPresent, text[span.start] == UInt8(ascii: "\"") else { return nil }
      return JSONText.decodeString(UnsafeBufferPointer(rebasing: text[span.start..<span.end]))
    }
    self.digest = digest
    // A value that is not a string names no encoding anyone knows: its JSON text stands for it.
    encoding =
      members.isEncoded
      ? string(members.encoding)
        ?? Array(UnsafeBufferPointer(rebasing: text[members.encoding.start..<members.encoding.end]))
      : nil
    mayBeCompressed =
      members.isEncoded || string(members.contentType).map(CouchDB.compresses) == true
  }

  /// Whether the entry says its bytes are stored gzip-compressed (`gzip` in any case, as HTTP
  /// compares content codings).
  var isGzipEncoded: Bool {
    guard let encoding, encoding.count == 4 else { return false }
    return encoding.map { $0 | 0x20 }.elementsEqual("gzip".utf8)
  }
}

/// How the bytes of a `data` member stand to their label: checked against the digest as each
/// peer computes it (docs/couchdb.md).
enum BodyCheck: Equatable {
  /// They are the digest's: their own hash, or, for `md5-`, the MD5 of the gzip stream CouchDB
  /// stores for them.
  case verified
  /// They are the digest's, and they are the gzip stream an entry with `"encoding":"gzip"`
  /// says the server stores (Sync Gateway returns that stream as `data`): the attachment is what
  /// they decode to.
  case verifiedStream
  /// `md5-` of a body CouchDB may have stored compressed, and no compression gave it: they
  /// cannot be checked.
  case unverified
  /// They are the digest's, but an `encoding` other than gzip says they are encoded: what they
  /// stand for cannot be read.
  case unknownEncoding
  /// Other bytes: `actual` is their own digest.
  case otherBytes(actual: AttachmentDigest)

  /// Checks bytes whose own hash (in the digest's algorithm) is `ownHash` and whose first bytes
  /// are `head` against `label`. For `md5-` bytes that their own MD5 does not match, CouchDB's
  /// stored gzip stream of them is tried: `body` hands them over again (only then).
  static func check(
    ownHash: [UInt8], head: [UInt8], label: BodyLabel, levels: inout CompressionLevelGuess,
    body: ((UnsafeRawBufferPointer) -> Void) -> Void
  ) -> BodyCheck {
    let digest = label.digest
    if ownHash == digest.bytes {
      guard let encoding = label.encoding else { return .verified }
      if label.isGzipEncoded {
        return head.starts(with: [0x1F, 0x8B]) ? .verifiedStream : .verified
      }
      return encoding.isEmpty || encoding.elementsEqual("identity".utf8)
        ? .verified : .unknownEncoding
    }
    let actual = AttachmentDigest(algorithm: digest.algorithm, hash: ownHash)
    guard digest.algorithm == .md5 else { return .otherBytes(actual: actual) }
    if levels.level(giving: digest.bytes, body: body) != nil { return .verified }
    return label.mayBeCompressed ? .unverified : .otherBytes(actual: actual)
  }

  /// A sink for ``check(ownHash:head:label:levels:body:)``'s `body`: hands the bytes of a `data`
  /// string token, already decoded once (so known to be base64), to it.
  static func replay(data: UnsafeBufferPointer<UInt8>) -> ((UnsafeRawBufferPointer) -> Void) -> Void
  {
    { sink in try? Base64.decode(stringToken: data) { sink($0) } }
  }

  /// Hands what the gzip stream in a `data` string token decodes to to `sink`; throws when it is
  /// not a whole, valid gzip stream.
  static func decodeStream<E: Error>(
    data: UnsafeBufferPointer<UInt8>, to sink: (UnsafeRawBufferPointer) throws(E) -> Void
  ) throws(DecompressionFailure<E>) {
    var decompressor = GzipDecompressor()
    var failure: DecompressionFailure<E>? = nil
    try? Base64.decode(stringToken: data) { piece in
      guard failure == nil else { return }
      do throws(DecompressionFailure<E>) {
        try decompressor.append(piece, to: sink)
      } catch {
        failure = error
      }
    }
    if let failure { throw failure }
    do { try decompressor.finish() } catch { throw .invalid(error) }
  }
}

/// What carrying bodies keeps from one document to the next, and what it tells the document
/// being written.
struct BodyWorkspace {
  /// The files the document being written put in the blob store (names in it): taken out again
  /// when something later in the document rejects it.
  var stored: [String] = []
  /// The compression level the run's CouchDB seems to use.
  var levels = CompressionLevelGuess()
}

/// The compression level a run's CouchDB stores bodies at, as learnt from the bodies checked so
/// far: tried first for the next body, so that a server set to another level than 8 costs one
/// compression per body once it is found. Only the order of the tries depends on it: whether a
/// body is verified does not (every level is tried before a body is called unverified), so the
/// verdicts are the same in any order of the documents, and on any number of threads.
struct CompressionLevelGuess {
  private(set) var likely = CouchDB.defaultCompressionLevel

  /// The level at which CouchDB's stream of `body` has the MD5 `digest`, or nil when none has.
  mutating func level(
    giving digest: [UInt8], body: ((UnsafeRawBufferPointer) -> Void) -> Void
  ) -> Int32? {
    let order = [likely, CouchDB.defaultCompressionLevel, 6] + Array(Int32(1)...9)
    var tried = Set<Int32>()
    for level in order where tried.insert(level).inserted {
      if CouchDB.md5OfStoredStream(level: level, body: body) == digest {
        likely = level
        return level
      }
    }
    return nil
  }
}
