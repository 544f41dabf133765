/// Decoding and encoding of JSON string tokens, kept byte-exact.
///
/// Decoded text is WTF-8: UTF-8 that may also hold a lone surrogate (written as the three bytes
/// UTF-8 would use for it). That lets a key such as `"\ud800"` survive the trip into an attachment
/// name and back out as the same escape, where a plain UTF-8 decoder would lose it.
import Glibc

enum JSONText {
  /// Whether `byte` is JSON whitespace: space, tab, line feed or carriage return (not the form
  /// feed and vertical tab yajl also takes).
  @inline(__always)
  static func isWhitespace(_ byte: UInt8) -> Bool {
    byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
  }

  /// Appends the decoded content of the JSON string token `token` (quotes included) to `output`.
  static func decodeString(_ token: UnsafeBufferPointer<UInt8>, into output: inout ByteBuffer) {
    guard token.count >= 2 else { return }
    let base = token.baseAddress!
    var index = 1
    let end = token.count - 1
    var runStart = index
    while index < end {
      if base[index] != UInt8(ascii: "\\") {
        index += 1
        continue
      }
      output.append(base + runStart, count: index - runStart)
      let escape = base[index + 1]
      index += 2
      switch escape {
      case UInt8(ascii: "b"): output.append(0x08)
      case UInt8(ascii: "f"): output.append(0x0C)
      case UInt8(ascii: "n"): output.append(0x0A)
      case UInt8(ascii: "r"): output.append(0x0D)
      case UInt8(ascii: "t"): output.append(0x09)
      case UInt8(ascii: "u"):
        var scalar = hexValue(base + index)
        index += 4
        if scalar & 0xFC00 == 0xD800, index + 6 <= end, base[index] == UInt8(ascii: "\\"),
          base[index + 1] == UInt8(ascii: "u")
        {
          let low = hexValue(base + index + 2)
          if low & 0xFC00 == 0xDC00 {
            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            index += 6
          }
        }
        appendWTF8(scalar, to: &output)
      default: output.append(escape)  // `"`, `\` and `/` stand for themselves
      }
      runStart = index
    }
    output.append(base + runStart, count: end - runStart)
  }

  /// The decoded value of `token` when it is one valid JSON string (quotes, escapes, no raw
  /// control character, strict UTF-8), else nil. For cold paths (parsing options).
  static func validStringValue(_ token: [UInt8]) -> [UInt8]? {
    guard token.count >= 2, token.first == UInt8(ascii: "\""), token.last == UInt8(ascii: "\""),
      token.withUnsafeBufferPointer({
        UTF8Validator.firstInvalid($0.baseAddress!, count: $0.count) == nil
      })
    else { return nil }
    var index = 1
    while index < token.count - 1 {
      let byte = token[index]
      if byte < 0x20 || byte == UInt8(ascii: "\"") { return nil }
      guard byte == UInt8(ascii: "\\") else {
        index += 1
        continue
      }
      guard index + 1 < token.count - 1 else { return nil }
      switch token[index + 1] {
      case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"),
        UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
        index += 2
      case UInt8(ascii: "u"):
        guard index + 6 <= token.count - 1,
          token[(index + 2)..<(index + 6)].allSatisfy({
            ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x66)
          })
        else { return nil }
        index += 6
      default:
        return nil
      }
    }
    return token.withUnsafeBufferPointer { decodeString($0) }
  }

  /// Decodes a JSON string token into a new array (for tests and cold paths).
  static func decodeString(_ token: UnsafeBufferPointer<UInt8>) -> [UInt8] {
    var scratch = ByteBuffer(capacity: token.count)
    decodeString(token, into: &scratch)
    return scratch.copyToArray()
  }

  @inline(__always)
  private static func hexValue(_ digits: UnsafePointer<UInt8>) -> UInt32 {
    var value: UInt32 = 0
    for offset in 0..<4 {
      let c = UInt32(digits[offset])
      let digit: UInt32
      switch c {
      case 48...57: digit = c - 48
      case 65...70: digit = c - 55
      default: digit = c - 87
      }
      value = value << 4 | digit
    }
    return value
  }

  private static func appendWTF8(_ scalar: UInt32, to output: inout ByteBuffer) {
    switch scalar {
    case 0..<0x80:
      output.append(UInt8(scalar))
    case 0x80..<0x800:
      output.append(UInt8(0xC0 | scalar >> 6))
      output.append(UInt8(0x80 | scalar & 0x3F))
    case 0x800..<0x10000:
      output.append(UInt8(0xE0 | scalar >> 12))
      output.append(UInt8(0x80 | (scalar >> 6) & 0x3F))
      output.append(UInt8(0x80 | scalar & 0x3F))
    default:
      output.append(UInt8(0xF0 | scalar >> 18))
      output.append(UInt8(0x80 | (scalar >> 12) & 0x3F))
      output.append(UInt8(0x80 | (scalar >> 6) & 0x3F))
      output.append(UInt8(0x80 | scalar & 0x3F))
    }
  }

  private static let hexDigits: StaticString = "0123456789abcdef"

  /// Appends `text` (WTF-8) as a JSON string token: quotes, `"` and `\` escaped, control
  /// characters as `\n`-style or `\u00XX` escapes, lone surrogates as `\uXXXX`, everything else raw.
  static func appendQuoted(_ text: UnsafeBufferPointer<UInt8>, to output: inout ByteBuffer) {
    output.reserve(text.count + 2)
    output.append(UInt8(ascii: "\""))
    guard let base = text.baseAddress else {
      output.append(UInt8(ascii: "\""))
      return
    }
    let count = text.count
    var index = 0
    var runStart = 0
    while index < count {
      let byte = base[index]
      if byte >= 0x20 && byte != 0x22 && byte != 0x5C && byte != 0xED {
        index &+= 1
        continue
      }
      var short: UInt8 = 0
      var unicode = UInt32(byte)
      var width = 1
      switch byte {
      case 0x22, 0x5C: short = byte
      case 0x08: short = UInt8(ascii: "b")
      case 0x0C: short = UInt8(ascii: "f")
      case 0x0A: short = UInt8(ascii: "n")
      case 0x0D: short = UInt8(ascii: "r")
      case 0x09: short = UInt8(ascii: "t")
      case 0xED:
        // A WTF-8 lone surrogate (U+D800...U+DFFF) is ED A0...BF xx; anything else is raw.
        guard index + 2 < count, base[index + 1] >= 0xA0 else {
          index &+= 1
          continue
        }
        unicode = 0xD000 | UInt32(base[index + 1] & 0x3F) << 6 | UInt32(base[index + 2] & 0x3F)
        width = 3
      default: break
      }
      output.append(base + runStart, count: index - runStart)
      output.append(UInt8(ascii: "\\"))
      if short != 0 {
        output.append(short)
      } else {
        output.append(UInt8(ascii: "u"))
        for shift in stride(from: 12, through: 0, by: -4) {
          output.append(hexDigits.utf8Start[Int((unicode >> UInt32(shift)) & 0xF)])
        }
      }
      index &+= width
      runStart = index
    }
    output.append(base + runStart, count: count - runStart)
    output.append(UInt8(ascii: "\""))
  }

  /// Whether two string tokens decode to the same text. Tokens without escapes compare byte for
  /// byte; only a token with a backslash is decoded.
  static func decodedEqual(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>)
    -> Bool
  {
    if a.count == b.count && (a.count == 0 || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0)
    {
      return true
    }
    if !hasEscape(a) && !hasEscape(b) { return false }
    return decodeString(a) == decodeString(b)
  }

  /// ``decodedEqual(_:_:)`` of the tokens `a` and `b` of `text`.
  static func decodedEqual(_ a: Span, _ b: Span, in text: UnsafeBufferPointer<UInt8>) -> Bool {
    decodedEqual(
      UnsafeBufferPointer(rebasing: text[a.start..<a.end]),
      UnsafeBufferPointer(rebasing: text[b.start..<b.end]))
  }

  private static func hasEscape(_ token: UnsafeBufferPointer<UInt8>) -> Bool {
    guard let base = token.baseAddress, token.count > 0 else { return false }
    return memchr(base, Int32(UInt8(ascii: "\\")), token.count) != nil
  }

  /// The content of a string token without its quotes when it holds no escape (so its decoded
  /// value is exactly those bytes), else nil.
  @inline(__always)
  static func unescapedContent(_ token: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8>? {
    guard token.count >= 2, let base = token.baseAddress else { return nil }
    if memchr(base + 1, Int32(UInt8(ascii: "\\")), token.count - 2) != nil { return nil }
    return UnsafeBufferPointer(start: base + 1, count: token.count - 2)
  }
}
