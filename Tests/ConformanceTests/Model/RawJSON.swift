import TestSupport

// A small JSON tree for the tests only: every scalar token keeps its text exactly as written
// (number literals, string escapes), objects keep their key order and duplicate keys, and the
// tree serialises back compactly from those raw tokens. Deliberately simple and independent of
// the engine: a recursive-descent parser over a byte array.

/// A string token as written (quotes included) together with its decoded value.
///
/// The decoded value is WTF-8: UTF-8 that may also hold a lone surrogate (`\ud800`), written as
/// the three bytes UTF-8 would use for it, so that such a key still has a distinct value.
struct RawString: Equatable, Hashable {
  /// The token exactly as written, quotes included.
  let token: [UInt8]
  /// Whether the token holds a backslash escape.
  let hasEscape: Bool

  init(token: [UInt8]) {
    self.token = token
    hasEscape = token.withUnsafeBufferPointer { $0.contains(UInt8(ascii: "\\")) }
  }

  /// A token whose escapes the caller has already looked for.
  init(token: [UInt8], hasEscape: Bool) {
    self.token = token
    self.hasEscape = hasEscape
  }

  /// A token that writes `value` (WTF-8) with the usual minimal escaping.
  init(quoting value: [UInt8]) {
    self.init(token: RawString.quote(value))
  }

  /// A token that writes `text` with the usual minimal escaping.
  init(quoting text: String) {
    self.init(quoting: Array(text.utf8))
  }

  /// The decoded content.
  var value: [UInt8] {
    hasEscape ? RawString.decode(token) : Array(token[1..<token.count - 1])
  }

  /// Whether the decoded value is exactly `decoded`.
  func equals(_ decoded: [UInt8]) -> Bool {
    if hasEscape { return RawString.decode(token) == decoded }
    guard token.count == decoded.count + 2 else { return false }
    for index in 0..<decoded.count where token[index + 1] != decoded[index] { return false }
    return true
  }

  /// Whether the decoded value is exactly `text`.
  func equals(_ text: String) -> Bool { equals(Array(text.utf8)) }

  /// Decodes a string token (quotes included) to WTF-8.
  static func decode(_ token: [UInt8]) -> [UInt8] {
    var output: [UInt8] = []
    var index = 1
    let end = token.count - 1
    func hex4(_ at: Int) -> UInt32 {
      var value: UInt32 = 0
      for byte in token[at..<at + 4] {
        let digit: UInt32
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte) - 48
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte) - 87
        default: digit = UInt32(byte) - 55
        }
        value = value * 16 + digit
      }
      return value
    }
    while index < end {
      let byte = token[index]
      guard byte == UInt8(ascii: "\\") else {
        output.append(byte)
        index += 1
        continue
      }
      let escape = token[index + 1]
      index += 2
      switch escape {
      case UInt8(ascii: "b"): output.append(0x08)
      case UInt8(ascii: "f"): output.append(0x0C)
      case UInt8(ascii: "n"): output.append(0x0A)
      case UInt8(ascii: "r"): output.append(0x0D)
      case UInt8(ascii: "t"): output.append(0x09)
      case UInt8(ascii: "u"):
        var unit = hex4(index)
        index += 4
        if (0xD800...0xDBFF).contains(unit), index + 6 <= end, token[index] == UInt8(ascii: "\\"),
          token[index + 1] == UInt8(ascii: "u")
        {
          let low = hex4(index + 2)
          if (0xDC00...0xDFFF).contains(low) {
            unit = 0x10000 + (unit - 0xD800) * 0x400 + (low - 0xDC00)
            index += 6
          }
        }
        appendWTF8(unit, to: &output)
      default:
        output.append(escape)
      }
    }
    return output
  }

  static func appendWTF8(_ scalar: UInt32, to output: inout [UInt8]) {
    if scalar < 0x80 {
      output.append(UInt8(scalar))
    } else if scalar < 0x800 {
      output += [UInt8(0xC0 | scalar >> 6), UInt8(0x80 | scalar & 0x3F)]
    } else if scalar < 0x10000 {
      output += [
        UInt8(0xE0 | scalar >> 12), UInt8(0x80 | scalar >> 6 & 0x3F), UInt8(0x80 | scalar & 0x3F),
      ]
    } else {
      output += [
        UInt8(0xF0 | scalar >> 18), UInt8(0x80 | scalar >> 12 & 0x3F),
        UInt8(0x80 | scalar >> 6 & 0x3F), UInt8(0x80 | scalar & 0x3F),
      ]
    }
  }

  /// Writes WTF-8 `value` as a JSON string token: `"` and `\` escaped, `\b \f \n \r \t`, other
  /// control characters as `\u00xx`, lone surrogates as `\udxxx` (lower-case hex), the rest raw.
  static func quote(_ value: [UInt8]) -> [UInt8] {
    let hex = Array("0123456789abcdef".utf8)
    var output: [UInt8] = [UInt8(ascii: "\"")]
    func unicodeEscape(_ unit: UInt32) {
      output += Array("\\u".utf8)
      for shift in [12, 8, 4, 0] { output.append(hex[Int(unit >> UInt32(shift) & 0xF)]) }
    }
    var index = 0
    while index < value.count {
      let byte = value[index]
      switch byte {
      case UInt8(ascii: "\""): output += Array("\\\"".utf8)
      case UInt8(ascii: "\\"): output += Array("\\\\".utf8)
      case 0x08: output += Array("\\b".utf8)
      case 0x0C: output += Array("\\f".utf8)
      case 0x0A: output += Array("\\n".utf8)
      case 0x0D: output += Array("\\r".utf8)
      case 0x09: output += Array("\\t".utf8)
      case 0..<0x20: unicodeEscape(UInt32(byte))
      case 0xED where index + 2 < value.count && value[index + 1] >= 0xA0:
        let unit =
          UInt32(byte & 0x0F) << 12 | UInt32(value[index + 1] & 0x3F) << 6
          | UInt32(value[index + 2] & 0x3F)
        unicodeEscape(unit)
        index += 2
      default: output.append(byte)
      }
      index += 1
    }
    output.append(UInt8(ascii: "\""))
    return output
  }
}

/// One member of an object, key token kept as written.
struct RawMember: Equatable {
  var key: RawString
  var value: RawJSON
}

/// A JSON value whose scalar tokens keep their original text.
indirect enum RawJSON: Equatable {
  case object([RawMember])
  case array([RawJSON])
  case string(RawString)
  /// A number, `true`, `false` or `null`, as written.
  case scalar([UInt8])

  var members: [RawMember]? {
    if case .object(let members) = self { return members }
    return nil
  }

  var isObject: Bool { members != nil }

  var string: RawString? {
    if case .string(let string) = self { return string }
    return nil
  }

  /// The compact text of the value, every token as written.
  func serialized() -> [UInt8] {
    var output: [UInt8] = []
    output.reserveCapacity(256)
    serialize(into: &output)
    return output
  }

  private func serialize(into output: inout [UInt8]) {
    switch self {
    case .object(let members):
      output.append(UInt8(ascii: "{"))
      for index in 0..<members.count {
        if index > 0 { output.append(UInt8(ascii: ",")) }
        output.append(contentsOf: members[index].key.token)
        output.append(UInt8(ascii: ":"))
        members[index].value.serialize(into: &output)
      }
      output.append(UInt8(ascii: "}"))
    case .array(let elements):
      output.append(UInt8(ascii: "["))
      for index in 0..<elements.count {
        if index > 0 { output.append(UInt8(ascii: ",")) }
        elements[index].serialize(into: &output)
      }
      output.append(UInt8(ascii: "]"))
    case .string(let string):
      output.append(contentsOf: string.token)
    case .scalar(let text):
      output.append(contentsOf: text)
    }
  }

  /// The text with `whitespace()` inserted before and after every structural token (for inputs
  /// that are not compact); `whitespace` returns the bytes to insert (possibly none).
  func serialized(whitespace: () -> [UInt8]) -> [UInt8] {
    var output: [UInt8] = []
    serialize(into: &output, whitespace: whitespace)
    return output
  }

  private func serialize(into output: inout [UInt8], whitespace: () -> [UInt8]) {
    func space() { output += whitespace() }
    switch self {
    case .object(let members):
      output.append(UInt8(ascii: "{"))
      for (index, member) in members.enumerated() {
        if index > 0 { output.append(UInt8(ascii: ",")) }
        space()
        output += member.key.token
        space()
        output.append(UInt8(ascii: ":"))
        space()
        member.value.serialize(into: &output, whitespace: whitespace)
        space()
      }
      output.append(UInt8(ascii: "}"))
    case .array(let elements):
      output.append(UInt8(ascii: "["))
      for (index, element) in elements.enumerated() {
        if index > 0 { output.append(UInt8(ascii: ",")) }
        space()
        element.serialize(into: &output, whitespace: whitespace)
        space()
      }
      output.append(UInt8(ascii: "]"))
    case .string(let string):
      output += string.token
    case .scalar(let text):
      output += text
    }
  }

  /// Parses exactly one JSON value (surrounding whitespace allowed).
  static func parse(_ bytes: [UInt8]) throws(RawJSONError) -> RawJSON {
    let result: Result<RawJSON, RawJSONError> = bytes.withUnsafeBufferPointer { buffer in
      var parser = RawJSONParser(bytes: buffer)
      do throws(RawJSONError) {
        parser.skipWhitespace()
        let value = try parser.parseValue(depth: 0)
        parser.skipWhitespace()
        guard parser.index == buffer.count else {
          var error = parser.error("text after the value")
          error.isTrailingText = true
          throw error
        }
        return .success(value)
      } catch {
        return .failure(error)
      }
    }
    return try result.get()
  }
}

struct RawJSONError: Error, Equatable {
  var offset: Int
  var message: String
  /// A whole value was read, and more text follows it.
  var isTrailingText = false
}

/// The recursive-descent parser behind `RawJSON.parse`.
struct RawJSONParser {
  let bytes: UnsafeBufferPointer<UInt8>
  var index = 0

  init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

  func error(_ message: String) -> RawJSONError { RawJSONError(offset: index, message: message) }

  var current: UInt8? { index < bytes.count ? bytes[index] : nil }

  mutating func skipWhitespace() {
    while let byte = current, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D {
      index += 1
    }
  }

  mutating func expect(_ byte: UInt8) throws(RawJSONError) {
    guard current == byte else { throw error("expected \(Character(Unicode.Scalar(byte)))") }
    index += 1
  }

  mutating func parseValue(depth: Int) throws(RawJSONError) -> RawJSON {
    guard depth < 512 else { throw error("too deep") }
    guard let byte = current else { throw error("unexpected end") }
    switch byte {
    case UInt8(ascii: "{"):
      index += 1
      var members: [RawMember] = []
      skipWhitespace()
      if current == UInt8(ascii: "}") {
        index += 1
        return .object(members)
      }
      while true {
        skipWhitespace()
        guard current == UInt8(ascii: "\"") else { throw error("expected a key") }
        let key = try parseString()
        skipWhitespace()
        try expect(UInt8(ascii: ":"))
        skipWhitespace()
        let value = try parseValue(depth: depth + 1)
        members.append(RawMember(key: key, value: value))
        skipWhitespace()
        if current == UInt8(ascii: ",") {
          index += 1
          continue
        }
        try expect(UInt8(ascii: "}"))
        return .object(members)
      }
    case UInt8(ascii: "["):
      index += 1
      var elements: [RawJSON] = []
      skipWhitespace()
      if current == UInt8(ascii: "]") {
        index += 1
        return .array(elements)
      }
      while true {
        skipWhitespace()
        elements.append(try parseValue(depth: depth + 1))
        skipWhitespace()
        if current == UInt8(ascii: ",") {
          index += 1
          continue
        }
        try expect(UInt8(ascii: "]"))
        return .array(elements)
      }
    case UInt8(ascii: "\""):
      return .string(try parseString())
    case UInt8(ascii: "t"): return try parseLiteral("true")
    case UInt8(ascii: "f"): return try parseLiteral("false")
    case UInt8(ascii: "n"): return try parseLiteral("null")
    case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
      return try parseNumber()
    default:
      throw error("unexpected character")
    }
  }

  mutating func parseLiteral(_ word: String) throws(RawJSONError) -> RawJSON {
    let text = Array(word.utf8)
    guard index + text.count <= bytes.count, bytes[index..<index + text.count].elementsEqual(text)
    else {
      throw error("bad literal")
    }
    index += text.count
    return .scalar(text)
  }

  mutating func parseNumber() throws(RawJSONError) -> RawJSON {
    let start = index
    func isDigit(_ byte: UInt8?) -> Bool {
      guard let byte else { return false }
      return byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }
    if current == UInt8(ascii: "-") { index += 1 }
    if current == UInt8(ascii: "0") {
      index += 1
    } else {
      guard isDigit(current) else { throw error("bad number") }
      while isDigit(current) { index += 1 }
    }
    if current == UInt8(ascii: ".") {
      index += 1
      guard isDigit(current) else { throw error("bad fraction") }
      while isDigit(current) { index += 1 }
    }
    if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
      index += 1
      if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
      guard isDigit(current) else { throw error("bad exponent") }
      while isDigit(current) { index += 1 }
    }
    return .scalar(Array(UnsafeBufferPointer(rebasing: bytes[start..<index])))
  }

  mutating func parseString() throws(RawJSONError) -> RawString {
    let start = index
    var escaped = false
    index += 1
    while true {
      guard let byte = current else { throw error("unterminated string") }
      switch byte {
      case UInt8(ascii: "\""):
        index += 1
        return RawString(
          token: Array(UnsafeBufferPointer(rebasing: bytes[start..<index])), hasEscape: escaped)
      case UInt8(ascii: "\\"):
        escaped = true
        index += 1
        guard let escape = current else { throw error("unterminated string") }
        switch escape {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"),
          UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
          index += 1
        case UInt8(ascii: "u"):
          index += 1
          for _ in 0..<4 {
            guard let digit = current, digit.isHexDigit else { throw error("bad \\u escape") }
            index += 1
          }
        default:
          throw error("bad escape")
        }
      case 0..<0x20:
        throw error("control character in a string")
      case 0x80...:
        try skipUTF8Sequence()
      default:
        index += 1
      }
    }
  }
}

extension RawJSONParser {
  /// Steps over one multi-byte UTF-8 sequence, which must be well-formed (no overlong forms, no
  /// surrogates, nothing above U+10FFFF).
  mutating func skipUTF8Sequence() throws(RawJSONError) {
    let lead = bytes[index]
    let length: Int
    var low: UInt8 = 0x80
    var high: UInt8 = 0xBF
    switch lead {
    case 0xC2...0xDF: length = 2
    case 0xE0:
      length = 3
      low = 0xA0
    case 0xE1...0xEC, 0xEE...0xEF: length = 3
    case 0xED:
      length = 3
      high = 0x9F
    case 0xF0:
      length = 4
      low = 0x90
    case 0xF1...0xF3: length = 4
    case 0xF4:
      length = 4
      high = 0x8F
    default: throw error("invalid UTF-8")
    }
    guard index + length <= bytes.count else { throw error("invalid UTF-8") }
    for offset in 1..<length {
      let byte = bytes[index + offset]
      let range: ClosedRange<UInt8> = offset == 1 ? low...high : 0x80...0xBF
      guard range.contains(byte) else { throw error("invalid UTF-8") }
    }
    index += length
  }
}

extension UInt8 {
  fileprivate var isHexDigit: Bool {
    (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self)
      || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(self)
      || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(self)
  }
}
