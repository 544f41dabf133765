/// Carries attachment bytes between the blob store and documents' `data` members, checking
/// each body against its digest and length as it goes (docs/blobs.md).
///
/// A body is hashed as it is read and encoded as it is written: to push, a file is read in
/// pieces straight into the output as base64; to pull, a `data` string is decoded in pieces
/// straight into a temporary file of the store. Nothing holds a second copy of it.
struct BodyCarrier {
  let store: BlobStore

  /// What became of one body.
  enum Outcome: Equatable {
    case carried
    /// The digest names no file of a blob store (only `sha1-` digests do).
    case namesNoFile
    case missing(file: String)
    /// The bytes are not the digest's (the file's, or an inline `data`'s).
    case otherBytes(file: String?, actual: AttachmentDigest)
    /// The body's size is not the `length`.
    case otherSize(file: String?, size: Int, length: String)
    /// `data` is not strict base64.
    case invalidBase64
    /// A file of that name was already in the store with another size; it is left alone.
    case keptExisting(file: String, size: Int64?, newSize: Int)
    /// A file of that name was already in the store with other bytes of the same size (its
    /// SHA-1 is `actual`, not its name's); it is left alone.
    case keptExistingOtherBytes(file: String, actual: AttachmentDigest)
    /// Carried, but its `md5-` digest could not check the bytes: CouchDB labels a body it stores
    /// compressed with the MD5 of its gzip stream, and no compression of the bytes gave it
    /// (``CouchDB``). The bytes are named by their SHA-1 as any others.
    case carriedUnverified
    /// The entry's `encoding` is not gzip: what its bytes stand for cannot be read. It stays.
    case encoded([UInt8])
    /// The entry says `"encoding":"gzip"` and its bytes are the digest's, but they are not a
    /// valid gzip stream (`reason`, zlib's).
    case invalidGzip(reason: String)
    /// The system refused (the run ends).
    case failed(file: String, errno: SystemErrno)
  }

  /// The number a `length` token stands for, when it is a non-negative whole number (`4321`,
  /// `4321.0` and `4.321e3` alike, read exactly: ``JSONNumber``); `Int.max` for one too large
  /// for any file.
  static func lengthValue(_ token: UnsafeBufferPointer<UInt8>) -> Int? {
    JSONNumber(token)?.wholeValue
  }

  /// Appends `"data":"<base64>"` (after a comma when `needsComma`) holding the file `digest`
  /// names, checked against the digest and `length` (a `length` token, when the entry has one).
  /// On anything but ``Outcome/carried``, `output` is as it was.
  func appendData(
    digest: AttachmentDigest?, length: UnsafeBufferPointer<UInt8>?, needsComma: Bool,
    to output: inout ByteBuffer, buffer: inout ByteBuffer
  ) -> Outcome {
    guard let digest, let name = BlobStore.fileName(for: digest) else { return .namesNoFile }
    let start = output.count
    output.append(needsComma ? ",\"data\":\"" : "\"data\":\"")
    var encoder = Base64Encoder()
    buffer.reserve(1 << 20)
    let space = UnsafeMutableRawBufferPointer(start: buffer.base, count: buffer.capacity)
    let path = store.path(of: name)
    switch store.read(name, buffer: space, { encoder.append($0, to: &output) }) {
    case .missing:
      output.count = start
      return .missing(file: path)
    case .failed(let errno):
      output.count = start
      return .failed(file: path, errno: errno)
    case .read(let size, let sha1):
      if sha1 != digest.bytes {
        output.count = start
        return .otherBytes(file: path, actual: AttachmentDigest(algorithm: .sha1, hash: sha1))
      }
      if let length, let expected = Self.lengthValue(length), expected != size {
        output.count = start
        return .otherSize(file: path, size: size, length: String(decoding: length, as: UTF8.self))
      }
      encoder.finish(to: &output)
      output.append(UInt8(ascii: "\""))
      return .carried
    }
  }

  /// The `sha1-` digest (as text) of the bytes an inline `data` string token holds, or nil when
  /// it is not base64. For entries CouchDB or PouchDB labelled `md5-`: the blob that holds the
  /// same bytes has this digest.
  static func sha1Digest(ofData data: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
    var hasher = Hasher(.sha1)
    do {
      try Base64.decode(stringToken: data) { hasher.update($0) }
    } catch {
      return nil
    }
    return Array(AttachmentDigest(algorithm: .sha1, hash: hasher.finish()).description.utf8)
  }

  /// Stores an entry's inline `data` string token, checked against `digest`, for pull and
  /// upgrade alike. What keeps the bytes out of the store is added to `problems` at `offset`,
  /// named by `place`: another file under their name (a warning, or an error when `strict`; the
  /// bytes stay where they are), bytes that are not the digest's or not base64 (errors), a
  /// failing store (an error, and the failure that ends the run, returned). Returns whether the
  /// bytes are in the store.
  func storeInline(
    data: UnsafeBufferPointer<UInt8>, label: BodyLabel, decodingStreams: Bool, place: String,
    offset: StreamOffset, strict: Bool, problems: inout [Problem], workspace: inout BodyWorkspace
  ) -> (stored: Bool, failure: ConversionIOError?) {
    let outcome = store(
      data: data, label: label, decodingStreams: decodingStreams, workspace: &workspace)
    func problem(_ kind: ConversionDiagnostic.Kind, _ severity: ConversionDiagnostic.Severity) {
      problems.append(
        Problem(
          kind: kind, severity: severity, offset: offset,
          message: Messages.body(outcome, place: place, digest: label.digest.description),
          pointer: ""))
    }
    switch outcome {
    case .carried:
      return (true, nil)
    case .carriedUnverified:
      problem(.unverified, strict ? .error : .warning)
      return (true, nil)
    case .keptExisting:
      problem(.lengthMismatch, strict ? .error : .warning)
      return (false, nil)
    case .keptExistingOtherBytes:
      problem(.blobCorrupt, strict ? .error : .warning)
      return (false, nil)
    case .encoded:
      problem(.encodedKept, strict ? .error : .warning)
      return (false, nil)
    case .failed(let file, let errno):
      problem(.blobStoreFailed, .error)
      return (false, ConversionIOError(operation: .storeBlob, errno: errno, target: file))
    case .invalidBase64, .invalidGzip:
      problem(.invalidData, .error)
      return (false, nil)
    case .otherBytes, .otherSize, .namesNoFile, .missing:
      problem(.dataMismatch, .error)
      return (false, nil)
    }
  }

  /// Checks an inline `data` string token against the digest and `length`, without keeping the
  /// decoded bytes.
  static func checkInline(
    data: UnsafeBufferPointer<UInt8>, digest: AttachmentDigest,
    length: UnsafeBufferPointer<UInt8>?
  ) -> Outcome {
    var hasher = Hasher(digest.algorithm)
    var size = 0
    do {
      try Base64.decode(stringToken: data) {
        hasher.update($0)
        size += $0.count
      }
    } catch {
      return .invalidBase64
    }
    let hash = hasher.finish()
    if hash != digest.bytes {
      return .otherBytes(
        file: nil, actual: AttachmentDigest(algorithm: digest.algorithm, hash: hash))
    }
    if let length, let expected = lengthValue(length), expected != size {
      return .otherSize(file: nil, size: size, length: String(decoding: length, as: UTF8.self))
    }
    return .carried
  }

  /// Decodes a `data` string token into the store, checked against its label, and puts it in
  /// place under the SHA-1 of its bytes. Bytes that do not match, or invalid base64, store
  /// nothing. The name of a file it makes is added to the workspace's `stored`.
  ///
  /// `decodingStreams`: bytes that are the gzip stream an `"encoding":"gzip"` entry's digest
  /// names are stored as what they decode to (a new blob, for upgrade); otherwise as they are
  /// (pull: the blob an entry mirrors names the bytes its digest names).
  func store(
    data: UnsafeBufferPointer<UInt8>, label: BodyLabel, decodingStreams: Bool,
    workspace: inout BodyWorkspace
  ) -> Outcome {
    var body: PendingBody
    do {
      body = try store.beginStoring(checking: label.digest.algorithm)
    } catch {
      return .failed(file: store.directory, errno: error)
    }
    var writeFailure: SystemErrno? = nil
    var head: [UInt8] = []
    do {
      try Base64.decode(stringToken: data) {
        (piece) throws(Base64.Invalid) in
        if head.count < 2 { head += piece.prefix(2 - head.count) }
        guard writeFailure == nil else { return }
        do throws(SystemErrno) { try body.append(piece) } catch { writeFailure = error }
      }
    } catch {
      return .invalidBase64
    }
    if let writeFailure { return .failed(file: store.directory, errno: writeFailure) }
    var (sha1, checked) = body.hashes()
    let check = BodyCheck.check(
      ownHash: checked, head: head, label: label, levels: &workspace.levels,
      body: BodyCheck.replay(data: data))
    switch check {
    case .otherBytes(let actual):
      return .otherBytes(file: nil, actual: actual)
    case .unknownEncoding:
      return .encoded(label.encoding ?? [])
    case .verifiedStream where decodingStreams:
      // The bytes are the stream the server stores: the attachment is what it decodes to.
      if let failure = storeDecoded(data: data, into: &body, sha1: &sha1) { return failure }
    case .verifiedStream:
      break
    case .verified, .unverified:
      break
    }
    let carried: Outcome = check == .unverified ? .carriedUnverified : .carried
    let size = body.size
    let name = BlobStore.fileName(for: AttachmentDigest(algorithm: .sha1, hash: sha1))!
    do {
      switch try store.commit(body, as: name) {
      case .stored:
        workspace.stored.append(name)
        return carried
      case .alreadyThere(let existing):
        guard existing == Int64(size) else {
          return .keptExisting(file: store.path(of: name), size: existing, newSize: size)
        }
        let outcome = verifyExisting(name, sha1: sha1)
        return outcome == .carried ? carried : outcome
      }
    } catch {
      return .failed(file: store.path(of: name), errno: error)
    }
  }

  /// Replaces `body` with a new pending body holding what the gzip stream in a `data` string
  /// token decodes to, and `sha1` with its SHA-1; or returns the outcome that keeps it out (not
  /// a gzip stream, a failing store).
  private func storeDecoded(
    data: UnsafeBufferPointer<UInt8>, into body: inout PendingBody, sha1: inout [UInt8]
  ) -> Outcome? {
    do {
      body = try store.beginStoring(checking: .sha1)
    } catch {
      return .failed(file: store.directory, errno: error)
    }
    do throws(DecompressionFailure<SystemErrno>) {
      try BodyCheck.decodeStream(data: data) { (piece) throws(SystemErrno) in
        try body.append(piece)
      }
    } catch {
      switch error {
      case .invalid(let invalid): return .invalidGzip(reason: invalid.reason)
      case .sink(let errno): return .failed(file: store.directory, errno: errno)
      }
    }
    sha1 = body.hashes().sha1
    return nil
  }

  /// A file of the body's name and size is in the store already: whether it holds the body's
  /// bytes (its SHA-1 is its name), for the entry is removed only if the bytes are safe.
  private func verifyExisting(_ name: String, sha1: [UInt8]) -> Outcome {
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 16)
    defer { buffer.deallocate() }
    switch store.read(name, buffer: buffer, { _ in }) {
    case .read(_, let existing):
      guard existing != sha1 else { return .carried }
      return .keptExistingOtherBytes(
        file: store.path(of: name), actual: AttachmentDigest(algorithm: .sha1, hash: existing))
    case .missing:
      return .failed(file: store.path(of: name), errno: .noSuchFile)
    case .failed(let error):
      return .failed(file: store.path(of: name), errno: error)
    }
  }
}
