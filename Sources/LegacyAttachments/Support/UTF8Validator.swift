/// Strict UTF-8 validation (RFC 3629) of whole chunks, faster than yajl's per-string check.
///
/// The engine turns yajl's own check off and runs this over every chunk before yajl sees it.
/// Unlike yajl it refuses overlong forms, encoded surrogates (U+D800...U+DFFF) and code points
/// above U+10FFFF. A raw byte of 0x80 or more outside a string is invalid JSON anyway, so checking
/// the whole chunk is the same as checking its strings.
///
/// Text is taken sixteen bytes at a time. A block of ASCII costs one test. A block with other
/// bytes is checked without a branch per byte (``SequenceShape``): that every continuation byte
/// is one its lead byte asks for and every byte a lead asks for is a continuation. Mixed text
/// (a Japanese word every few ASCII ones) would otherwise mispredict a branch at every change.
/// Blocks holding a lead byte whose second byte is restricted (C0, C1, E0, ED, F0...F7), and the
/// tail, go through the byte-by-byte check, which also finds the exact offset of an error.
enum UTF8Validator {
  /// The offset of the first byte of the first invalid sequence in `bytes[0..<count]`, or nil.
  static func firstInvalid(_ bytes: UnsafePointer<UInt8>, count: Int) -> Int? {
    var index = 0
    // A sequence boundary with everything before it valid.
    var checked = 0
    // Continuation bytes the last block's leads still ask for, at the next block's start.
    var pending: UInt64 = 0
    while index + 16 <= count {
      let first = load(bytes + index)
      let second = load(bytes + index + 8)
      if (first | second) & SequenceShape.high == 0 && pending == 0 {
        index &+= 16
        checked = index
        continue
      }
      let head = SequenceShape(first, pending: pending)
      let tail = SequenceShape(second, pending: head.carry)
      if head.isPlain && tail.isPlain {
        pending = tail.carry
        index &+= 16
        if pending == 0 { checked = index }
        continue
      }
      // An error, or a lead byte that needs its second byte looked at: go byte by byte up to
      // the first sequence boundary past this block.
      let (invalid, boundary) = scalarCheck(bytes, from: checked, through: index + 16, count: count)
      if let invalid { return invalid }
      index = boundary
      checked = boundary
      pending = 0
    }
    return scalarCheck(bytes, from: checked, through: count, count: count).invalid
  }

  @inline(__always)
  private static func load(_ bytes: UnsafePointer<UInt8>) -> UInt64 {
    UInt64(littleEndian: UnsafeRawPointer(bytes).loadUnaligned(as: UInt64.self))
  }

  /// Checks the sequences that start in `bytes[start..<limit]` (`start` being a sequence boundary)
  /// one by one; a sequence may run on past `limit`, up to `count`. Returns the first invalid
  /// sequence's offset, or else the first sequence boundary at or after `limit`.
  static func scalarCheck(
    _ bytes: UnsafePointer<UInt8>, from start: Int, through limit: Int, count: Int
  ) -> (invalid: Int?, boundary: Int) {
    var index = start
    while index < limit {
      let lead = bytes[index]
      if lead < 0x80 {
        index &+= 1
        continue
      }
      let length: Int
      var low: UInt8 = 0x80
      var high: UInt8 = 0xBF
      switch lead {
      case 0xC2...0xDF: length = 2
      case 0xE0:
        length = 3
        low = 0xA0
      case 0xED:
        length = 3
        high = 0x9F
      case 0xE1...0xEF: length = 3
      case 0xF0:
        length = 4
        low = 0x90
      case 0xF4:
        length = 4
        high = 0x8F
      case 0xF1...0xF3: length = 4
      default: return (index, index)
      }
      guard index + length <= count else { return (index, index) }
      let second = bytes[index + 1]
      guard second >= low && second <= high else { return (index, index) }
      if length > 2 && bytes[index + 2] & 0xC0 != 0x80 { return (index, index) }
      if length > 3 && bytes[index + 3] & 0xC0 != 0x80 { return (index, index) }
      index &+= length
    }
    return (nil, index)
  }
}

/// The UTF-8 structure of eight bytes, worked out with word arithmetic (bit 7 of each byte of
/// the masks stands for that byte).
struct SequenceShape {
  static let high: UInt64 = 0x8080_8080_8080_8080

  /// Continuation bytes the leads in these eight bytes ask for in the next eight.
  let carry: UInt64
  /// True when the bytes are well-formed so far and hold no lead byte that restricts its second
  /// byte (so nothing more needs checking).
  let isPlain: Bool

  /// Works out the shape of `word` (bytes in memory order, first byte lowest), given the
  /// continuation bytes the previous word's leads ask for.
  @inline(__always)
  init(_ word: UInt64, pending: UInt64) {
    let high = Self.high
    let bit6 = (word << 1) & high
    let bit5 = (word << 2) & high
    let bit4 = (word << 3) & high
    let topBits = word & high
    let continuation = topBits & ~bit6
    let lead = topBits & bit6  // 11xxxxxx
    let threeOrMore = lead & bit5  // 111xxxxx
    let four = threeOrMore & bit4  // 1111xxxx: F0...FF
    let two = lead & ~bit5
    let three = threeOrMore & ~bit4
    // Which bytes must be continuations: one after every lead, two after a three- or four-byte
    // lead, three after a four-byte lead.
    let needed = lead << 8 | threeOrMore << 16 | four << 24 | pending
    carry = lead >> 56 | threeOrMore >> 48 | four >> 40
    // C0 and C1 (overlong two-byte forms), E0 and ED (second byte restricted), and every lead
    // from F0 (second byte restricted, or not a lead at all from F5) go the slow way.
    let restricted =
      two & Self.zeroBytes(word & 0x1E1E_1E1E_1E1E_1E1E)
      | three
      & (Self.zeroBytes(word & 0x0F0F_0F0F_0F0F_0F0F)
        | Self.zeroBytes((word ^ 0x0D0D_0D0D_0D0D_0D0D) & 0x0F0F_0F0F_0F0F_0F0F))
      | four
    isPlain = needed == continuation && restricted == 0
  }

  /// Bit 7 set in each byte of `value` that is zero, exactly (no borrow between bytes).
  @inline(__always)
  static func zeroBytes(_ value: UInt64) -> UInt64 {
    let low7: UInt64 = 0x7F7F_7F7F_7F7F_7F7F
    return ~(((value & low7) &+ low7) | value) & high
  }
}
