/// What the last token before a refused one was, when it is known without looking back at the
/// bytes (outside the documents, where those bytes may be gone): it says which separator was due.
enum TokenBefore: Equatable {
  /// A key: `:` was due.
  case key
  /// An opening bracket, or a comma: no separator was due.
  case open
  /// A value (a document, a scalar, a closing bracket): `,` was due.
  case value

  /// Where a `-j` batch that starts between an array's elements starts.
  init(_ place: ElementsPlace) {
    switch place {
    case .afterOpen, .afterComma: self = .open
    case .afterElement: self = .value
    }
  }
}

/// Where a syntax error is, worked out from the input rather than from yajl's own offset (which
/// depends on the error and on where yajl's piece started), so that it is the same however the
/// input was read.
extension InputView {
  /// Where the token yajl refused starts: the first thing after the last token it accepted
  /// (ending at `previousEnd`, starting at `lastTokenStart`), past the separator that was due
  /// there (a separator that was not due is itself the refused token). `innermostIsArray` tells
  /// the innermost open container, nil when none is open. `before` is what the last token was,
  /// when the caller knows it (outside the documents); otherwise it is worked out from the bytes
  /// before `previousEnd`, which must then be held back to the last token's start.
  func refusedTokenOffset(
    previousEnd: StreamOffset, lastTokenStart: StreamOffset, innermostIsArray: Bool?,
    before: TokenBefore? = nil
  ) -> StreamOffset {
    var index = previousEnd
    func skipSpace() { while index < end, JSONText.isWhitespace(self[index]) { index += 1 } }
    skipSpace()
    guard index < end else { return end }
    let separator = self[index]
    guard separator == UInt8(ascii: ",") || separator == UInt8(ascii: ":") else { return index }
    guard let innermostIsArray,
      let before = before
        ?? tokenBefore(
          previousEnd: previousEnd, lastTokenStart: lastTokenStart,
          innermostIsArray: innermostIsArray)
    else { return index }
    let due: UInt8? =
      switch before {
      case .key: UInt8(ascii: ":")
      case .open: nil
      case .value: UInt8(ascii: ",")
      }
    guard separator == due else { return index }
    index += 1
    skipSpace()
    return min(index, end)
  }

  /// What the last token (ending at `previousEnd`, starting at `lastTokenStart`) was, from the
  /// bytes; nil when they are not there.
  private func tokenBefore(
    previousEnd: StreamOffset, lastTokenStart: StreamOffset, innermostIsArray: Bool
  ) -> TokenBefore? {
    guard previousEnd > .zero else { return nil }
    let lastByte = self[previousEnd - 1]
    if (lastByte == UInt8(ascii: "{") || lastByte == UInt8(ascii: "["))
      && lastTokenStart == previousEnd - 1
    {
      return .open
    }
    if !innermostIsArray && lastByte == UInt8(ascii: "\"") {
      // A string in an object is a key when it follows `{` or `,`, a value when it follows `:`.
      var before = lastTokenStart - 1
      while before >= start, JSONText.isWhitespace(self[before]) { before = before - 1 }
      if before >= start && self[before] != UInt8(ascii: ":") { return .key }
    }
    return .value
  }

  /// Whether the token starting at `tokenStart` is still going on where the input ends (at
  /// `inputEnd`): every byte from it to the end is the start of a valid token that the end cut
  /// short (a string with no closing quote, `tru`, `-1.5e`). A token with a byte no token can
  /// have there (`"\u003}`, `1.5x`, `nul!`) is refused for that byte, whatever follows it, so
  /// the answer does not depend on how much of the input yajl had been given.
  func tokenRunsToEnd(from tokenStart: StreamOffset, inputEnd: StreamOffset) -> Bool {
    guard tokenStart < inputEnd else { return true }
    let first = self[tokenStart]
    if first == UInt8(ascii: "\"") {
      return stringRunsToEnd(from: tokenStart + 1, inputEnd: inputEnd)
    }
    if first == UInt8(ascii: "-") || (first >= 0x30 && first <= 0x39) {
      return numberRunsToEnd(from: tokenStart, inputEnd: inputEnd)
    }
    for literal in ["true", "false", "null"] as [StaticString] {
      let count = inputEnd - tokenStart
      guard count < literal.utf8CodeUnitCount else { continue }
      var index = 0
      while index < count && self[tokenStart + index] == literal.utf8Start[index] { index += 1 }
      if index == count { return true }
    }
    return false
  }

  /// The inside of a string from `index` to the end: no closing quote, no control character,
  /// every escape valid as far as it goes.
  private func stringRunsToEnd(from start: StreamOffset, inputEnd: StreamOffset) -> Bool {
    var index = start
    while index < inputEnd {
      let byte = self[index]
      if byte == UInt8(ascii: "\"") || byte < 0x20 { return false }
      guard byte == UInt8(ascii: "\\") else {
        index += 1
        continue
      }
      guard index + 1 < inputEnd else { return true }
      let escape = self[index + 1]
      if escape == UInt8(ascii: "u") {
        var digit = index + 2
        while digit < index + 6 {
          guard digit < inputEnd else { return true }
          let hex = self[digit] | 0x20
          guard (hex >= 0x30 && hex <= 0x39) || (hex >= 0x61 && hex <= 0x66) else { return false }
          digit += 1
        }
        index += 6
        continue
      }
      switch escape {
      case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"),
        UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
        break
      default:
        return false
      }
      index += 2
    }
    return true
  }

  /// A number from `start` to the end that needs more to be complete or could go on
  /// (`-`, `1.`, `2e+`, `12`), with nothing a number cannot hold.
  private func numberRunsToEnd(from start: StreamOffset, inputEnd: StreamOffset) -> Bool {
    var index = start
    func digits() {
      while index < inputEnd, self[index] >= 0x30 && self[index] <= 0x39 { index += 1 }
    }
    if self[index] == UInt8(ascii: "-") { index += 1 }
    digits()
    if index < inputEnd && self[index] == UInt8(ascii: ".") {
      index += 1
      digits()
    }
    if index < inputEnd && self[index] | 0x20 == UInt8(ascii: "e") {
      index += 1
      if index < inputEnd && (self[index] == UInt8(ascii: "+") || self[index] == UInt8(ascii: "-"))
      {
        index += 1
      }
      digits()
    }
    return index == inputEnd
  }

  /// In the string token starting at `quote`, the first byte that is not allowed there: a
  /// control character, or the backslash of an invalid escape.
  func firstBadStringByte(from quote: StreamOffset) -> StreamOffset {
    var index = quote + 1
    while index < end {
      let byte = self[index]
      if byte == UInt8(ascii: "\"") || byte < 0x20 { return index }
      guard byte == UInt8(ascii: "\\") else {
        index += 1
        continue
      }
      guard index + 1 < end else { return index }
      switch self[index + 1] {
      case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"),
        UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
        index += 2
      case UInt8(ascii: "u"):
        guard index + 6 <= end else { return index }
        for digit in 2..<6 where !Self.isHexDigit(self[index + digit]) { return index }
        index += 6
      default:
        return index
      }
    }
    return index
  }

  private static func isHexDigit(_ byte: UInt8) -> Bool {
    (byte >= 0x30 && byte <= 0x39) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x66)
  }
}
