/// Strict UTF-8 validation (RFC 3629) of whole chunks, faster than yajl's per-string check.
///
/// The engine turns yajl's own check off and runs this over every chunk before yajl sees it.
/// Unlike yajl it refuses overlong forms, encoded surrogates (U+D800...U+DFFF) and code points
/// above U+10FFFF. A raw byte of 0x80 or more outside a string is invalid JSON anyway, so checking
/// the whole chunk is the same as checking its strings.
///
/// Text is taken 64 bytes at a time. A window of ASCII costs nine loads and one test. Any other
/// window is checked sixteen bytes at a time with vector compares and no branch per byte, per
/// sequence or per block (``UTF8Validator/problems(at:)``): mixed text, a Japanese word every few
/// ASCII ones, would otherwise mispredict a branch at every change. Only a window with an error, and the
/// tail, go byte by byte (``UTF8Validator/scalarCheck(_:from:through:count:)``), which also finds
/// the error's exact offset.
enum UTF8Validator {
  private static let window = 64

  /// The offset of the first byte of the first invalid sequence in `bytes[0..<count]`, or nil.
  static func firstInvalid(_ bytes: UnsafePointer<UInt8>, count: Int) -> Int? {
    // The vector check reads the three bytes before each block; the first three go byte by byte.
    let (early, start) = scalarCheck(bytes, from: 0, through: min(3, count), count: count)
    if let early { return early }
    var index = start
    // Offsets are below `count`, a buffer's size: adding a window or a sequence length to one
    // cannot overflow, so it is done without a check on this per-byte path.
    while index &+ window <= count {
      let block = bytes + index
      // The three bytes before the window count too: a sequence may run into it.
      let before = UnsafeRawPointer(block - 3)
      var words: UInt64 = 0
      for offset in stride(from: 0, to: window, by: 8) {
        words |= before.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
      }
      words |= UnsafeRawPointer(block).loadUnaligned(fromByteOffset: window - 8, as: UInt64.self)
      if words & 0x8080_8080_8080_8080 == 0 {
        index &+= window
        continue
      }
      // Every block of a mixed window is checked, its ASCII blocks too (all false for them,
      // unless a sequence runs into them). Skipping those (half the blocks of mixed text) saves
      // instructions, but puts a branch on the text's every change between ASCII and not, and
      // costs more time than it saves.
      var problems = LaneMask(repeating: false)
      for offset in stride(from: 0, to: window, by: 16) {
        problems .|= self.problems(at: block + offset)
      }
      if anyLane(problems) {
        let (invalid, boundary) = scalarCheck(
          bytes, from: sequenceStart(bytes, before: index), through: index &+ window, count: count)
        if let invalid { return invalid }
        index = boundary
      } else {
        index &+= window
      }
    }
    return scalarCheck(
      bytes, from: sequenceStart(bytes, before: index), through: count, count: count
    ).invalid
  }

  /// Where the sequence that runs into `index` starts (its lead byte, at most three bytes back),
  /// or `index` itself when none does. Everything before it has been checked.
  @inline(__always)
  private static func sequenceStart(_ bytes: UnsafePointer<UInt8>, before index: Int) -> Int {
    var back = 1
    while back <= 3 && index - back >= 0 {
      let byte = bytes[index - back]
      if byte < 0x80 { break }
      if byte >= 0xC0 { return index - back }
      back += 1
    }
    return index
  }

  // Bytes as signed integers, for vector compares: ASCII is 0...127, continuation bytes
  // (0x80...0xBF) are -128...-65, lead bytes (0xC0...0xFF) are -64...-1.
  private typealias Lanes = SIMD16<Int8>
  private typealias LaneMask = SIMDMask<Lanes>

  @inline(__always)
  private static func load(_ bytes: UnsafePointer<UInt8>) -> Lanes {
    UnsafeRawPointer(bytes).loadUnaligned(as: Lanes.self)
  }

  @inline(__always)
  private static func anyLane(_ mask: LaneMask) -> Bool {
    let words = unsafeBitCast(mask, to: (UInt64, UInt64).self)
    return words.0 | words.1 != 0
  }

  /// The bytes of `bytes[0..<16]` that break a rule, given the three bytes before them:
  /// a continuation byte where none is asked for, or none where one is; a lead byte that is never
  /// valid (C0, C1, F5...FF); a second byte out of its lead's range (after E0, ED, F0, F4).
  ///
  /// Each constant vector is a named `let`: compared against one, the compiler emits a single
  /// vector compare, where a vector literal written inside the expression costs a loop over the
  /// sixteen lanes (Swift 6.3).
  @inline(__always)
  private static func problems(at bytes: UnsafePointer<UInt8>) -> LaneMask {
    let zero = Lanes(repeating: 0)
    let belowC0 = Lanes(repeating: -65)  // x > belowC0 (and x < 0): x >= 0xC0
    let belowE0 = Lanes(repeating: -33)  // x >= 0xE0
    let belowF0 = Lanes(repeating: -17)  // x >= 0xF0
    let aboveBF = Lanes(repeating: -64)  // x < aboveBF: x <= 0xBF (with x < 0)
    let aboveC1 = Lanes(repeating: -62)  // x <= 0xC1
    let aboveF4 = Lanes(repeating: -12)  // x > aboveF4 (and x < 0): x >= 0xF5
    let leadE0 = Lanes(repeating: -32)
    let leadED = Lanes(repeating: -19)
    let leadF0 = Lanes(repeating: -16)
    let leadF4 = Lanes(repeating: -12)
    let firstA0 = Lanes(repeating: -96)  // x < firstA0: x <= 0x9F
    let last9F = Lanes(repeating: -97)  // x > last9F: x >= 0xA0
    let first90 = Lanes(repeating: -112)  // x < first90: x <= 0x8F
    let last8F = Lanes(repeating: -113)  // x > last8F: x >= 0x90

    let current = load(bytes)
    let previous = load(bytes - 1)
    let twoBack = load(bytes - 2)
    let threeBack = load(bytes - 3)
    let isContinuation = current .< aboveBF
    let needsContinuation =
      ((previous .> belowC0) .& (previous .< zero))
      .| ((twoBack .> belowE0) .& (twoBack .< zero))
      .| ((threeBack .> belowF0) .& (threeBack .< zero))
    let neverValid =
      ((current .> belowC0) .& (current .< aboveC1)) .| ((current .> aboveF4) .& (current .< zero))
    let secondOutOfRange =
      ((previous .== leadE0) .& (current .< firstA0))
      .| ((previous .== leadED) .& (current .> last9F))
      .| ((previous .== leadF0) .& (current .< first90))
      .| ((previous .== leadF4) .& (current .> last8F))
    return (isContinuation .^ needsContinuation) .| neverValid .| secondOutOfRange
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
      guard index &+ length <= count else { return (index, index) }
      let second = bytes[index &+ 1]
      guard second >= low && second <= high else { return (index, index) }
      if length > 2 && bytes[index &+ 2] & 0xC0 != 0x80 { return (index, index) }
      if length > 3 && bytes[index &+ 3] & 0xC0 != 0x80 { return (index, index) }
      index &+= length
    }
    return (nil, index)
  }
}
