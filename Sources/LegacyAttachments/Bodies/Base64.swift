import Glibc

/// Standard padded base64 (RFC 4648), strictly: no whitespace, `=` only as the last one or two
/// characters. The block work is libcrypto's (`EVP_EncodeBlock`, `EVP_DecodeBlock`); this only
/// cuts streams into blocks and checks what libcrypto lets through.
enum Base64 {
  /// The length of the encoding of `count` bytes.
  static func encodedCount(_ count: Int) -> Int { (count + 2) / 3 * 4 }

  /// Appends the encoding of all of `bytes` (padded) to `output`.
  static func encodeWhole(_ bytes: UnsafeBufferPointer<UInt8>, into output: inout ByteBuffer) {
    let length = encodedCount(bytes.count)
    output.reserve(length + 1)
    guard bytes.count > 0, let base = bytes.baseAddress else { return }
    // EVP_EncodeBlock writes a terminating NUL after the text.
    _ = LibCrypto.shared.encodeBlock(output.base + output.count, base, Int32(bytes.count))
    output.count += length
  }

  /// How many bytes the base64 text of a JSON string token (quotes included) decodes to, read
  /// from its length and padding without decoding it; nil when that is not a whole base64
  /// text's (a length that is not a multiple of 4). A token with escapes is unescaped first.
  static func decodedCount(stringToken token: UnsafeBufferPointer<UInt8>) -> Int? {
    let text = JSONText.unescapedContent(token).map(Array.init) ?? JSONText.decodeString(token)
    guard text.count % 4 == 0 else { return nil }
    let padding = text.suffix(2).count { $0 == UInt8(ascii: "=") }
    return text.count / 4 * 3 - padding
  }

  /// Why a `data` string is not strict base64.
  enum Invalid: Error, Equatable {
    /// The length is not a multiple of 4.
    case length
    /// A character that is not of the alphabet (whitespace included), or `=` before the end.
    case character(offset: Int)
  }

  /// The bytes `text` decodes to, or nil when it is not strict base64 (for short texts:
  /// digests).
  static func decodeWhole(_ text: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
    var output: [UInt8] = []
    do {
      try decode(text) { output.append(contentsOf: $0) }
    } catch {
      return nil
    }
    return output
  }

  /// The bytes `text` decodes to when the unused bits of its last padded block may be set (they
  /// are dropped, as libcrypto and Couchbase Lite drop them); nil for anything else not strict.
  static func decodeWhole(_ text: UnsafeBufferPointer<UInt8>, clearingUnusedBits: Bool)
    -> [UInt8]?
  {
    guard clearingUnusedBits, text.count >= 4 else { return decodeWhole(text) }
    var copy = Array(text)
    let padding =
      copy[copy.count - 1] != UInt8(ascii: "=")
      ? 0 : copy[copy.count - 2] == UInt8(ascii: "=") ? 2 : 1
    if padding > 0, let value = alphabetValue(copy[copy.count - 1 - padding]) {
      let used = value & (padding == 1 ? 0b111100 : 0b110000)
      copy[copy.count - 1 - padding] = alphabet[Int(used)]
    }
    return copy.withUnsafeBufferPointer { decodeWhole($0) }
  }

  private static let alphabet = Array(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

  /// Decodes the base64 text of a JSON string token (quotes included) as
  /// ``decode(_:piece:_:)`` does. A token with JSON escapes (`\u0041`, `\/`) is unescaped
  /// first: the escapes are JSON's, the text they stand for is the base64. Couchbase Lite,
  /// Sync Gateway and CouchDB write none, so the copy this then takes is not made for theirs.
  static func decode(
    stringToken token: UnsafeBufferPointer<UInt8>,
    _ consume: (UnsafeRawBufferPointer) throws(Invalid) -> Void
  ) throws(Invalid) {
    let content = UnsafeBufferPointer(rebasing: token.dropFirst().dropLast())
    guard let base = content.baseAddress,
      memchr(base, Int32(UInt8(ascii: "\\")), content.count) != nil
    else {
      try decode(content, consume)
      return
    }
    let unescaped = JSONText.decodeString(token)
    var failure: Invalid? = nil
    unescaped.withUnsafeBufferPointer { text in
      do throws(Invalid) { try decode(text, consume) } catch { failure = error }
    }
    if let failure { throw failure }
  }

  /// Decodes `text` piece by piece, handing each piece of bytes to `consume` as it goes, so
  /// that a large body is never held decoded; throws at the first thing that is not strict
  /// base64 (what was handed over before it must then be thrown away).
  static func decode(
    _ text: UnsafeBufferPointer<UInt8>, piece: Int = 1 << 16,
    _ consume: (UnsafeRawBufferPointer) throws(Invalid) -> Void
  ) throws(Invalid) {
    guard text.count > 0 else { return }
    guard text.count % 4 == 0, let base = text.baseAddress else { throw .length }
    // `=` may only end the text (libcrypto reads it as zero bits anywhere).
    var padding = 0
    if base[text.count - 1] == UInt8(ascii: "=") {
      padding = base[text.count - 2] == UInt8(ascii: "=") ? 2 : 1
    }
    if let equals = memchr(base, Int32(UInt8(ascii: "=")), text.count - padding) {
      throw .character(offset: UnsafeRawPointer(equals) - UnsafeRawPointer(base))
    }
    // The bits a padded block does not use must be zero (RFC 4648, 3.5): `Zg==`, not `Zh==`,
    // so that one body has one encoding (libcrypto drops them).
    if padding > 0 {
      let last = text.count - 1 - padding
      let unused: UInt8 = padding == 1 ? 0b11 : 0b1111
      if let value = alphabetValue(base[last]), value & unused != 0 {
        throw .character(offset: last)
      }
    }
    let blockText = max(4, piece / 3 * 4)
    let scratch = UnsafeMutablePointer<UInt8>.allocate(capacity: blockText / 4 * 3 + 4)
    defer { scratch.deallocate() }
    var offset = 0
    while offset < text.count {
      let length = min(blockText, text.count - offset)
      let chunk = base + offset
      // libcrypto trims whitespace at a block's ends; JSON's base64 has none anywhere.
      if !isAlphabet(chunk[0]) { throw .character(offset: offset) }
      let last = offset + length == text.count ? length - 1 - padding : length - 1
      if last >= 0 && !isAlphabet(chunk[last]) { throw .character(offset: offset + last) }
      let produced = LibCrypto.shared.decodeBlock(scratch, chunk, Int32(length))
      guard produced >= 0 else { throw .character(offset: firstInvalid(chunk, length) + offset) }
      let real = Int(produced) - (offset + length == text.count ? padding : 0)
      try consume(UnsafeRawBufferPointer(start: scratch, count: real))
      offset += length
    }
  }

  static func isAlphabet(_ byte: UInt8) -> Bool {
    (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
      || (byte >= 0x30 && byte <= 0x39)
      || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "/") || byte == UInt8(ascii: "=")
  }

  /// The six bits a character of the alphabet stands for.
  private static func alphabetValue(_ byte: UInt8) -> UInt8? {
    switch byte {
    case 0x41...0x5A: byte - 0x41
    case 0x61...0x7A: byte - 0x61 + 26
    case 0x30...0x39: byte - 0x30 + 52
    case UInt8(ascii: "+"): 62
    case UInt8(ascii: "/"): 63
    default: nil
    }
  }

  private static func firstInvalid(_ chunk: UnsafePointer<UInt8>, _ length: Int) -> Int {
    var index = 0
    while index < length && isAlphabet(chunk[index]) { index += 1 }
    return index
  }
}

/// Encodes a stream of bytes as base64 into a buffer, a piece at a time: up to two bytes wait
/// for the next piece so that every block but the last is whole.
struct Base64Encoder {
  private var pending: (UInt8, UInt8) = (0, 0)
  private var pendingCount = 0

  mutating func append(_ bytes: UnsafeRawBufferPointer, to output: inout ByteBuffer) {
    var bytes = bytes.bindMemory(to: UInt8.self)
    if pendingCount > 0 {
      var block: [UInt8] = pendingCount == 1 ? [pending.0] : [pending.0, pending.1]
      while block.count < 3 && !bytes.isEmpty {
        block.append(bytes[0])
        bytes = UnsafeBufferPointer(rebasing: bytes[1...])
      }
      guard block.count == 3 else {
        pending = (block[0], block.count > 1 ? block[1] : 0)
        pendingCount = block.count
        return
      }
      block.withUnsafeBufferPointer { Base64.encodeWhole($0, into: &output) }
      pendingCount = 0
    }
    let whole = bytes.count / 3 * 3
    Base64.encodeWhole(UnsafeBufferPointer(rebasing: bytes[..<whole]), into: &output)
    let rest = bytes.count - whole
    if rest > 0 {
      pending = (bytes[whole], rest > 1 ? bytes[whole + 1] : 0)
      pendingCount = rest
    }
  }

  /// Writes the last, padded block.
  mutating func finish(to output: inout ByteBuffer) {
    guard pendingCount > 0 else { return }
    let block: [UInt8] = pendingCount == 1 ? [pending.0] : [pending.0, pending.1]
    block.withUnsafeBufferPointer { Base64.encodeWhole($0, into: &output) }
    pendingCount = 0
  }
}
