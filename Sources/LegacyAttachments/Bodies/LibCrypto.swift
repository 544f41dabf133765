internal import CCrypto
import Glibc

/// OpenSSL's libcrypto, loaded the first time a body is hashed or base64-coded.
///
/// The binary does not link it: loading a library that size costs every run about 2.9 million
/// instructions of the dynamic loader's work before `main` (measured by callgrind on an empty
/// input), and most runs (push and pull without `--blobs`, with no inline bytes to check) hash
/// nothing. The functions used (the EVP digest interface and the base64 blocks) are looked up
/// once, here, the one place that knows their C signatures; the header (``CCrypto``) is the
/// same as when linking. libcrypto 3 (Debian libssl3) must be installed, as before.
struct LibCrypto: @unchecked Sendable {
  typealias Block =
    @convention(c) (
      UnsafeMutablePointer<UInt8>?, UnsafePointer<UInt8>?, Int32
    ) -> Int32
  typealias Algorithm = @convention(c) () -> OpaquePointer?
  typealias ContextNew = @convention(c) () -> OpaquePointer?
  typealias ContextFree = @convention(c) (OpaquePointer?) -> Void
  typealias DigestInit = @convention(c) (OpaquePointer?, OpaquePointer?, OpaquePointer?) -> Int32
  typealias DigestUpdate = @convention(c) (OpaquePointer?, UnsafeRawPointer?, Int) -> Int32
  typealias DigestFinal =
    @convention(c) (
      OpaquePointer?, UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<UInt32>?
    ) -> Int32

  /// `EVP_EncodeBlock`, `EVP_DecodeBlock`.
  let encodeBlock: Block
  let decodeBlock: Block
  /// `EVP_sha1`, `EVP_md5`.
  let sha1: Algorithm
  let md5: Algorithm
  /// `EVP_MD_CTX_new`, `EVP_MD_CTX_free`, `EVP_DigestInit_ex`, `EVP_DigestUpdate`,
  /// `EVP_DigestFinal_ex`.
  let contextNew: ContextNew
  let contextFree: ContextFree
  let digestInit: DigestInit
  let digestUpdate: DigestUpdate
  let digestFinal: DigestFinal

  /// The largest digest libcrypto writes (`EVP_MAX_MD_SIZE`).
  static let maximumDigestSize = Int(EVP_MAX_MD_SIZE)

  /// The library, loaded on first use (a `static let`: once, whichever thread asks first).
  static let shared: LibCrypto = {
    switch load() {
    case .success(let library): return library
    case .failure(let failure): fatalError(failure.description)
    }
  }()

  /// Why libcrypto could not be loaded: the loader's own words.
  struct LoadFailure: Error, CustomStringConvertible {
    let description: String
  }

  /// Loads libcrypto 3 and looks up every function used.
  static func load() -> Result<LibCrypto, LoadFailure> {
    var reasons: [String] = []
    for name in ["libcrypto.so.3", "libcrypto.so"] {
      guard let handle = dlopen(name, RTLD_NOW | RTLD_LOCAL) else {
        reasons.append(dlerror().map { String(cString: $0) } ?? name)
        continue
      }
      return lookUp(in: handle)
    }
    return .failure(
      LoadFailure(
        description: "cbl-attachments: cannot load libcrypto (OpenSSL 3, Debian libssl3): "
          + reasons.joined(separator: "; ")))
  }

  private static func lookUp(in handle: UnsafeMutableRawPointer) -> Result<LibCrypto, LoadFailure> {
    var missing: [String] = []
    func symbol<Function>(_ name: String, as type: Function.Type) -> Function? {
      guard let address = dlsym(handle, name) else {
        missing.append(name)
        return nil
      }
      return unsafeBitCast(address, to: type)
    }
    let encodeBlock = symbol("EVP_EncodeBlock", as: Block.self)
    let decodeBlock = symbol("EVP_DecodeBlock", as: Block.self)
    let sha1 = symbol("EVP_sha1", as: Algorithm.self)
    let md5 = symbol("EVP_md5", as: Algorithm.self)
    let contextNew = symbol("EVP_MD_CTX_new", as: ContextNew.self)
    let contextFree = symbol("EVP_MD_CTX_free", as: ContextFree.self)
    let digestInit = symbol("EVP_DigestInit_ex", as: DigestInit.self)
    let digestUpdate = symbol("EVP_DigestUpdate", as: DigestUpdate.self)
    let digestFinal = symbol("EVP_DigestFinal_ex", as: DigestFinal.self)
    guard let encodeBlock, let decodeBlock, let sha1, let md5, let contextNew, let contextFree,
      let digestInit, let digestUpdate, let digestFinal
    else {
      return .failure(
        LoadFailure(
          description: "cbl-attachments: libcrypto lacks "
            + missing.joined(separator: ", ") + " (OpenSSL 3 is needed)"))
    }
    return .success(
      LibCrypto(
        encodeBlock: encodeBlock, decodeBlock: decodeBlock, sha1: sha1, md5: md5,
        contextNew: contextNew, contextFree: contextFree, digestInit: digestInit,
        digestUpdate: digestUpdate, digestFinal: digestFinal))
  }
}
