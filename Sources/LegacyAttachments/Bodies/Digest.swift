/// The digests attachments are named by: `sha1-` (Couchbase Lite, Sync Gateway) and `md5-`
/// (CouchDB, PouchDB), each followed by the standard padded base64 of the hash.
enum DigestAlgorithm: BitwiseCopyable {
  case sha1
  case md5

  /// The hash's size in bytes.
  var byteCount: Int { self == .sha1 ? 20 : 16 }

  /// The digest's prefix, `sha1-` or `md5-`.
  var prefix: StaticString { self == .sha1 ? "sha1-" : "md5-" }

  fileprivate var evp: OpaquePointer? {
    self == .sha1 ? LibCrypto.shared.sha1() : LibCrypto.shared.md5()
  }
}

/// A digest as written in a document: `sha1-2jmj7l5rSw0yVb/vlWAYkK/YBwk=`, parsed.
struct AttachmentDigest: Equatable {
  var algorithm: DigestAlgorithm
  /// The hash itself.
  var bytes: [UInt8]
  /// The base64 text after the prefix, as written (it names a blob file).
  var encoded: [UInt8]

  /// Whether the digest was written as the canonical base64 of its hash. A `sha1-` digest
  /// Couchbase Lite reads otherwise is taken as it takes it (`C4BlobKey::withDigestString`
  /// decodes leniently): the last character with unused bits set (`…ieE9=` for `…ieE8=`),
  /// or a byte outside the alphabet in place of the `=` or among the characters (a space, a
  /// line break). ``encoded`` is then the canonical text, which names its file
  /// (`C4BlobStore::pathForKey`).
  var isCanonical = true

  /// Parses `text` (the digest's decoded string value); nil when it is not `sha1-` or `md5-`
  /// followed by the padded base64 of a hash of the right size.
  init?(_ text: UnsafeBufferPointer<UInt8>) {
    let algorithm: DigestAlgorithm
    if text.starts(with: "sha1-".utf8) {
      algorithm = .sha1
    } else if text.starts(with: "md5-".utf8) {
      algorithm = .md5
    } else {
      return nil
    }
    let encoded = Array(text[(algorithm == .sha1 ? 5 : 4)...])
    let expectedLength = (algorithm.byteCount + 2) / 3 * 4
    guard encoded.count == expectedLength else { return nil }
    if let bytes = encoded.withUnsafeBufferPointer({ Base64.decodeWhole($0) }),
      bytes.count == algorithm.byteCount
    {
      self.algorithm = algorithm
      self.bytes = bytes
      self.encoded = encoded
      return
    }
    // Couchbase Lite's `C4BlobKey::withDigestString` takes 28 bytes after `sha1-` and decodes
    // them skipping every byte outside the alphabet (`=`, spaces, line breaks); they must give
    // 20 bytes, which 27 characters of the alphabet do, the unused bits of the last ignored.
    let letters =
      algorithm == .sha1
      ? encoded.filter { Base64.isAlphabet($0) && $0 != UInt8(ascii: "=") } + Array("=".utf8)
      : encoded
    guard algorithm == .md5 || letters.count == 28,
      let bytes = letters.withUnsafeBufferPointer({
        Base64.decodeWhole($0, clearingUnusedBits: true)
      }), bytes.count == algorithm.byteCount
    else { return nil }
    var canonical = ByteBuffer(capacity: 32)
    bytes.withUnsafeBufferPointer { Base64.encodeWhole($0, into: &canonical) }
    self.algorithm = algorithm
    self.bytes = bytes
    self.encoded = Array(canonical.bytes)
    isCanonical = false
  }

  /// The digest of `hash` computed with `algorithm`, written as a document writes it.
  init(algorithm: DigestAlgorithm, hash: [UInt8]) {
    self.algorithm = algorithm
    bytes = hash
    var text = ByteBuffer(capacity: 32)
    hash.withUnsafeBufferPointer { Base64.encodeWhole($0, into: &text) }
    encoded = Array(text.bytes)
  }

  /// `sha1-…` or `md5-…`.
  var description: String {
    (algorithm == .sha1 ? "sha1-" : "md5-") + String(decoding: encoded, as: UTF8.self)
  }
}

/// A running hash (libcrypto's EVP digest), fed piece by piece as a body is read or decoded.
/// It owns its C state and frees it when it goes away.
struct Hasher: ~Copyable {
  private let context: OpaquePointer
  let algorithm: DigestAlgorithm

  init(_ algorithm: DigestAlgorithm) {
    guard let context = LibCrypto.shared.contextNew() else {
      fatalError("out of memory (EVP_MD_CTX_new)")
    }
    self.context = context
    self.algorithm = algorithm
    _ = LibCrypto.shared.digestInit(context, algorithm.evp, nil)
  }

  deinit { LibCrypto.shared.contextFree(context) }

  mutating func update(_ bytes: UnsafeRawBufferPointer) {
    guard let base = bytes.baseAddress, bytes.count > 0 else { return }
    _ = LibCrypto.shared.digestUpdate(context, base, bytes.count)
  }

  /// The hash of everything fed so far.
  consuming func finish() -> [UInt8] {
    var hash = [UInt8](repeating: 0, count: LibCrypto.maximumDigestSize)
    var count: UInt32 = 0
    hash.withUnsafeMutableBufferPointer {
      _ = LibCrypto.shared.digestFinal(context, $0.baseAddress, &count)
    }
    return Array(hash.prefix(Int(count)))
  }
}
