/// What an input that is not JSON looks like, from its first bytes: so that the error at its
/// first byte says what the input is and what to do, instead of only "malformed JSON at 1:1".
///
/// Asked only when an input's very first value is refused; the per-token path never calls it.
enum InputSniffer {
  /// What the input looks like.
  enum Kind: Equatable {
    /// A MIME multipart body (`--BOUNDARY` and a line end): what CouchDB answers to
    /// `GET /db/doc?attachments=true` without `Accept: application/json`, and Sync Gateway to
    /// `_bulk_get`.
    case multipart(boundary: String)
    /// An HTTP response with its headers (`curl -i`).
    case httpResponse
    /// A compressed stream: `gzip`, `bzip2`, `xz`, `zstd` or a `zip` archive.
    case compressed(format: String)
    /// An HTML page (an error page, a login form).
    case html
  }

  /// The kind of input whose first bytes (after white space) are `bytes`, or nil when nothing is
  /// recognised.
  static func kind(of bytes: UnsafeBufferPointer<UInt8>) -> Kind? {
    func starts(with prefix: [UInt8]) -> Bool { bytes.starts(with: prefix) }
    if starts(with: [0x1F, 0x8B]) { return .compressed(format: "gzip") }
    if starts(with: Array("BZh".utf8)) && bytes.count > 3 && (0x31...0x39).contains(bytes[3]) {
      return .compressed(format: "bzip2")
    }
    if starts(with: [0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x00]) { return .compressed(format: "xz") }
    if starts(with: [0x28, 0xB5, 0x2F, 0xFD]) { return .compressed(format: "zstd") }
    if starts(with: [0x50, 0x4B, 0x03, 0x04]) { return .compressed(format: "zip") }
    if starts(with: Array("HTTP/".utf8)) { return .httpResponse }
    let lowered = bytes.prefix(15).map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }
    if lowered.starts(with: "<!doctype html".utf8) || lowered.starts(with: "<html".utf8) {
      return .html
    }
    if starts(with: Array("--".utf8)), let boundary = boundaryLine(bytes) {
      return .multipart(boundary: boundary)
    }
    return nil
  }

  /// The boundary of a line `--BOUNDARY` (RFC 2046: 1 to 70 characters of its alphabet) that
  /// ends in a line end, or nil.
  private static func boundaryLine(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
    let line = bytes.dropFirst(2).prefix { $0 != 0x0D && $0 != 0x0A }
    guard line.endIndex < bytes.endIndex, (1...70).contains(line.count),
      line.allSatisfy(isBoundaryCharacter)
    else { return nil }
    return String(decoding: line, as: UTF8.self)
  }

  /// RFC 2046's `bchars`: letters, digits and `'()+_,-./:=? ` (a space only inside).
  private static func isBoundaryCharacter(_ byte: UInt8) -> Bool {
    (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
      || Array("'()+_,-./:=? ".utf8).contains(byte)
  }
}
