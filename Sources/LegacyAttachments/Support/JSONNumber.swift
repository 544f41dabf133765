/// A JSON number token read exactly, as a decimal: its significant digits and the power of ten
/// they are scaled by, never through binary floating point, so that `6.00000000000000000001` is
/// not a whole number and `20971520.0000000001` is more than 20971520.
///
/// For the few numbers a rule compares (`length`); not on the per-token path.
struct JSONNumber {
  private(set) var isNegative = false
  /// The significant digits (values 0–9), without leading or trailing zeros; empty for zero.
  private var digits: [UInt8] = []
  /// The value is `digits × 10^exponent`.
  private var exponent = 0

  /// Reads a number token (as yajl hands it over); nil for anything else.
  init?(_ token: UnsafeBufferPointer<UInt8>) {
    var index = 0
    func byte() -> UInt8? { index < token.count ? token[index] : nil }
    func isDigit(_ byte: UInt8?) -> Bool { byte.map { $0 >= 0x30 && $0 <= 0x39 } ?? false }
    if byte() == UInt8(ascii: "-") {
      isNegative = true
      index += 1
    }
    guard isDigit(byte()) else { return nil }
    var fractionDigits = 0
    while isDigit(byte()) {
      digits.append(token[index] - 0x30)
      index += 1
    }
    if byte() == UInt8(ascii: ".") {
      index += 1
      guard isDigit(byte()) else { return nil }
      while isDigit(byte()) {
        digits.append(token[index] - 0x30)
        fractionDigits += 1
        index += 1
      }
    }
    var written = 0
    if byte() == UInt8(ascii: "e") || byte() == UInt8(ascii: "E") {
      index += 1
      var negativeExponent = false
      if byte() == UInt8(ascii: "-") || byte() == UInt8(ascii: "+") {
        negativeExponent = token[index] == UInt8(ascii: "-")
        index += 1
      }
      guard isDigit(byte()) else { return nil }
      while isDigit(byte()) {
        // Saturates far beyond any digit count a token can have.
        written = min(written * 10 + Int(token[index] - 0x30), 1 << 40)
        index += 1
      }
      if negativeExponent { written = -written }
    }
    guard index == token.count else { return nil }
    exponent = written - fractionDigits
    let leading = digits.firstIndex { $0 != 0 } ?? digits.count
    digits.removeFirst(leading)
    while digits.last == 0 {
      digits.removeLast()
      exponent += 1
    }
    if digits.isEmpty {
      isNegative = false
      exponent = 0
    }
  }

  /// Whether a token is a whole number from 1 written as digits alone (`1`, `27`; not `1.0`,
  /// `0`, `01`): what Sync Gateway takes as a `revpos`.
  static func isPositiveInteger(_ token: UnsafeBufferPointer<UInt8>) -> Bool {
    guard let first = token.first, first >= 0x31, first <= 0x39 else { return false }
    return token.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
  }

  /// Whether the value is a whole number (`4321`, `4321.0`, `4.321e3`, `-0`).
  var isWhole: Bool { exponent >= 0 }

  /// The value when it is a whole number ≥ 0: itself, or `Int.max` when it is larger (no
  /// size equals it then). Nil for a fraction or a negative number.
  var wholeValue: Int? {
    guard isWhole, !isNegative else { return nil }
    return wholePart(digitCount: digits.count + exponent)
  }

  /// Whether the value is more than `limit` (≥ 0).
  func exceeds(_ limit: Int) -> Bool {
    guard !isNegative, !digits.isEmpty else { return false }
    // The digits before the decimal point.
    let wholeDigits = digits.count + exponent
    guard wholeDigits > 0 else { return false }
    let whole = wholePart(digitCount: wholeDigits)
    return whole > limit || (whole == limit && wholeDigits < digits.count)
  }

  /// The first `digitCount` digits (zeros past the last) as an integer, `Int.max` when larger.
  private func wholePart(digitCount: Int) -> Int {
    guard digitCount <= 19 else { return Int.max }
    var value = 0
    for index in 0..<digitCount {
      let (shifted, overflowed) = value.multipliedReportingOverflow(by: 10)
      let (next, overflowedAgain) = shifted.addingReportingOverflow(
        Int(index < digits.count ? digits[index] : 0))
      if overflowed || overflowedAgain { return Int.max }
      value = next
    }
    return value
  }
}
