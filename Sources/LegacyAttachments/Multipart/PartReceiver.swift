/// One attachment part's bytes as they arrive: checked against the entry they follow (its
/// digest, of the bytes as sent; its lengths), decoded when the part says `Content-Encoding:
/// gzip`, and passed on whole to nowhere, to a blob store's new file, or to base64 text for
/// `data`. Nothing of the part is held but base64 text asked for.
struct PartReceiver: ~Copyable {
  /// Where the decoded bytes go.
  enum Destination {
    /// Checked, then dropped.
    case nowhere
    /// A new file of the store, named by their SHA-1 when they are whole and checked.
    case store(BlobStore)
    /// Base64 text, for a `data` member.
    case inline
  }

  /// The bytes as the part has them, and what is known of them once whole.
  struct Received {
    /// The SHA-1 digest of the decoded bytes.
    var sha1: AttachmentDigest
    /// The decoded size.
    var size: Int
    /// The bytes are what the server keeps encoded (an entry with `encoding` whose part has no
    /// `Content-Encoding`: Sync Gateway's stored gzip stream), and so the SHA-1 and size are
    /// those of the encoded bytes.
    var keptEncoded: Bool
    /// The store file made for them (nil when it was there already or none was asked for).
    var storedName: String?
    /// Base64 text of the bytes, for `.inline`.
    var base64: [UInt8]?
  }

  /// Why a part's bytes are not taken: they are not what the entry says (the document is
  /// rejected), or the store failed (the run ends).
  enum Refusal: Error {
    case refused(ConversionDiagnostic.Kind, String)
    case storeFailed(file: String, errno: SystemErrno)
  }

  private let entry: DocumentPart.FollowsEntry
  private let headers: PartHeaders
  private let digest: AttachmentDigest
  /// The hash of the bytes as sent, in the digest's algorithm, when no other hash gives it:
  /// bytes not decoded are hashed once (the store's file, or the SHA-1 of the decoded bytes,
  /// gives their digest).
  private var sentHash: Hasher?
  private var sentCount = 0
  /// Hashes the bytes as sent in the digest's algorithm on a thread of its own.
  private let side: SideHasher?
  /// Parts from this size on are hashed beside (a smaller one costs more to hand over).
  static let sideHashingSize = 1 << 20
  private var decompressor: GzipDecompressor?
  private var decodedHash = Hasher(.sha1)
  private var decodedCount = 0
  private var pending: PendingBody?
  private let store: BlobStore?
  private var base64: ByteBuffer?
  private var encoder = Base64Encoder()

  /// Starts receiving the part `headers` says, for `entry`; refused at once when its digest
  /// or encoding cannot be read, or the store cannot take a file.
  init(
    entry: DocumentPart.FollowsEntry, headers: PartHeaders, destination: Destination,
    side: SideHasher? = nil
  ) throws(Refusal) {
    let name = ConversionDiagnostic.quoted(String(decoding: entry.name, as: UTF8.self))
    guard let text = entry.digest,
      let digest = text.withUnsafeBufferPointer({ AttachmentDigest($0) })
    else {
      throw Refusal.refused(.invalidData, Messages.partDigestUnreadable(name: name))
    }
    let decodes: Bool
    switch headers.contentEncoding.map({ String(decoding: $0, as: UTF8.self) }) {
    case nil, "identity"?:
      decodes = false
    case "gzip"?, "x-gzip"?:
      decodes = true
    case let other?:
      throw Refusal.refused(.invalidData, Messages.partUnknownEncoding(name: name, encoding: other))
    }
    var body: PendingBody? = nil
    var store: BlobStore? = nil
    if case .store(let chosen) = destination {
      store = chosen
      do {
        let hashedBeside =
          side != nil && (headers.contentLength ?? 0) >= Self.sideHashingSize
        body = try chosen.beginStoring(
          checking: decodes || hashedBeside ? .sha1 : digest.algorithm)
      } catch {
        throw .storeFailed(file: chosen.directory, errno: error)
      }
    }
    self.entry = entry
    self.headers = headers
    self.digest = digest
    self.store = store
    // A large part whose digest is not its file's SHA-1 (CouchDB's md5-) has it hashed on the
    // side thread.
    let sideHashes =
      side != nil && digest.algorithm != .sha1
      && (headers.contentLength ?? 0) >= Self.sideHashingSize
    if sideHashes { side!.begin(digest.algorithm) }
    self.side = sideHashes ? side : nil
    sentHash =
      !sideHashes && (decodes || (body == nil && digest.algorithm != .sha1))
      ? Hasher(digest.algorithm) : nil
    decompressor = decodes ? GzipDecompressor() : nil
    pending = body
    if case .inline = destination { base64 = ByteBuffer(capacity: 1 << 12) }
  }

  /// Takes the next bytes of the part's body.
  mutating func append(_ bytes: UnsafeRawBufferPointer) throws(Refusal) {
    guard !bytes.isEmpty else { return }
    sentHash?.update(bytes)
    side?.update(bytes)
    sentCount += bytes.count
    guard var inflater = decompressor.take() else {
      try take(bytes)
      return
    }
    var failure: Refusal? = nil
    do throws(DecompressionFailure<Refusal>) {
      try inflater.append(bytes) { (piece) throws(Refusal) in try take(piece) }
    } catch {
      switch error {
      case .invalid(let invalid):
        failure = .refused(
          .invalidData, Messages.partNotGzip(name: quotedName, reason: invalid.reason))
      case .sink(let refusal):
        failure = refusal
      }
    }
    decompressor = consume inflater
    if let failure { throw failure }
  }

  private var quotedName: String {
    ConversionDiagnostic.quoted(String(decoding: entry.name, as: UTF8.self))
  }

  private mutating func take(_ bytes: UnsafeRawBufferPointer) throws(Refusal) {
    decodedCount += bytes.count
    if pending != nil {
      do throws(SystemErrno) {
        try pending!.append(bytes)
      } catch {
        throw .storeFailed(file: store!.directory, errno: error)
      }
    } else {
      decodedHash.update(bytes)
      if base64 != nil { encoder.append(bytes, to: &base64!) }
    }
  }

  /// The part has ended: its sizes and digest are checked, and its file put in the store.
  mutating func finish() throws(Refusal) -> Received {
    let decoded = decompressor != nil
    if let inflater = decompressor.take() {
      do throws(GzipDecompressor.Invalid) {
        try inflater.finish()
      } catch {
        throw Refusal.refused(
          .invalidData, Messages.partNotGzip(name: quotedName, reason: error.reason))
      }
    }
    let keptEncoded = !decoded && entry.encoding != nil
    try checkLengths(decoded: decoded, keptEncoded: keptEncoded)
    // The decoded bytes' SHA-1, and the bytes as sent in the digest's algorithm.
    let sha1: [UInt8]
    var sent: [UInt8]
    var body = pending.take()
    if body != nil {
      (sha1, sent) = body!.hashes()
    } else {
      var decodedHasher = Hasher(.sha1)
      swap(&decodedHasher, &decodedHash)
      sha1 = decodedHasher.finish()
      sent = sha1
    }
    if let hasher = sentHash.take() { sent = hasher.finish() }
    if let side { sent = side.finish() }
    guard sent == digest.bytes else {
      throw Refusal.refused(
        .dataMismatch,
        Messages.partDigest(
          name: quotedName, digest: digest.description,
          actual: AttachmentDigest(algorithm: digest.algorithm, hash: sent).description))
    }
    var received = Received(
      sha1: AttachmentDigest(algorithm: .sha1, hash: sha1), size: decodedCount,
      keptEncoded: keptEncoded, storedName: nil, base64: nil)
    if let body = body.take() {
      let name = BlobStore.fileName(for: received.sha1)!
      received.storedName = try Self.commit(body, as: name, size: decodedCount, in: store!)
    } else if var text = base64.take() {
      encoder.finish(to: &text)
      received.base64 = Array(text.bytes)
    }
    return received
  }

  /// The part's sizes against what its headers and its entry declare: `Content-Length` the
  /// bytes as sent, `encoded_length` those of a body sent gzipped, `length` the decoded bytes.
  private func checkLengths(decoded: Bool, keptEncoded: Bool) throws(Refusal) {
    if let declared = headers.contentLength, declared != sentCount {
      throw Refusal.refused(
        .lengthMismatch,
        Messages.partLength(
          name: quotedName, what: "Content-Length", declared: declared, actual: sentCount))
    }
    if decoded || keptEncoded, let declared = entry.encodedLength,
      declared != sentCount
    {
      throw Refusal.refused(
        .lengthMismatch,
        Messages.partLength(
          name: quotedName, what: "encoded_length", declared: declared, actual: sentCount))
    }
    if !keptEncoded, let declared = entry.length, declared != decodedCount {
      throw Refusal.refused(
        .lengthMismatch,
        Messages.partLength(
          name: quotedName, what: "length", declared: declared, actual: decodedCount))
    }
  }

  /// Puts the file in place; one of that name there already must hold the same bytes (the
  /// store's file is then kept, and no name is returned).
  private static func commit(
    _ body: consuming PendingBody, as name: String, size: Int, in store: BlobStore
  ) throws(Refusal) -> String? {
    let result: BlobStore.StoreResult
    do {
      result = try store.commit(body, as: name)
    } catch {
      throw .storeFailed(file: store.path(of: name), errno: error)
    }
    guard case .alreadyThere(let existing) = result else { return name }
    guard existing == Int64(size) else {
      throw .refused(.blobCorrupt, Messages.partStoreHoldsOther(file: store.path(of: name)))
    }
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 16)
    defer { buffer.deallocate() }
    switch store.read(name, buffer: buffer, { _ in }) {
    case .read(_, let sha1)
    where BlobStore.fileName(for: AttachmentDigest(algorithm: .sha1, hash: sha1)) == name:
      return nil
    case .failed(let error):
      throw .storeFailed(file: store.path(of: name), errno: error)
    default:
      throw .refused(.blobCorrupt, Messages.partStoreHoldsOther(file: store.path(of: name)))
    }
  }
}
