/// Strict UTF-8 validation (RFC 3629) of whole chunks, faster than yajl's per-string check.
///
/// The engine turns yajl's own check off and runs this over every chunk before yajl sees it.
/// Unlike yajl it refuses overlong forms, encoded surrogates (U+D800...U+DFFF) and code points
/// above U+10FFFF. A raw byte of 0x80 or more outside a string is invalid JSON anyway, so checking
/// the whole chunk is the same as checking its strings.
///
/// Text is taken 16 bytes at a time, a window. Whether a window (with the three bytes before it,
/// which a sequence may run out of) is all ASCII is found with three loads and no branch, for 64
/// windows (1 KiB, a span) at a time, as the bits of one word. The mixed windows are then
/// visited bit by bit and checked with vector compares and no branch per byte or per sequence
/// (``UTF8Validator/problems(at:)``). Mixed text, a Japanese word every few ASCII ones, changes
/// between ASCII and not at random: a branch per window would be mispredicted every few windows,
/// where the bits cost one mispredicted branch per span and the visit's exits. Only a window with
/// an error, and the tail, go byte by byte (``UTF8Validator/scalarCheck(_:from:through:count:)``),
/// which also finds the error's exact offset. (Measured, docs/performance.md: 64-byte windows
/// with a branch each took 16-17 ms on the 100 MiB yardstick, spans of 16-byte windows 12 ms.)
enum UTF8Validator {
  /// The bytes a vector check takes (one `SIMD16`).
  static let window = 16
  /// Windows whose ASCII test is made before any is checked: one bit each of a `UInt64`.
  static let windowsPerSpan = 64

  /// The offset of the first byte of the first invalid sequence in `bytes[0..<count]`, or nil.
  static func firstInvalid(_ bytes: UnsafePointer<UInt8>, count: Int) -> Int? {
    // The vector check reads the three bytes before each block; the first three go byte by byte.
    let (early, start) = scalarCheck(bytes, from: 0, through: min(3, count), count: count)
    if let early { return early }
    var index = start
    // Offsets are below `count`, a buffer's size: adding a window or a sequence length to one
    // cannot overflow, so it is done without a check on this per-byte path.
    let span = windowsPerSpan &* window
    while index &+ span <= count {
      var mixed = mixedWindows(bytes + index)
      while mixed != 0 {
        let windowStart = index &+ mixed.trailingZeroBitCount &* window
        mixed &= mixed &- 1
        if let invalid = checkMixedWindow(bytes, at: windowStart, count: count).invalid {
          return invalid
        }
      }
      index &+= span
    }
    while index &+ window <= count {
      if isASCIIWindow(bytes + index) {
        index &+= window
        continue
      }
      let (invalid, boundary) = checkMixedWindow(bytes, at: index, count: count)
      if let invalid { return invalid }
      index = boundary
    }
    return scalarCheck(
      bytes, from: sequenceStart(bytes, before: index), through: count, count: count
    ).invalid
  }

  /// Whether the window at `start`, and the three bytes before it (a sequence may run into it),
  /// are all ASCII.
  @inline(__always)
  private static func isASCIIWindow(_ start: UnsafePointer<UInt8>) -> Bool {
    let before = UnsafeRawPointer(start - 3)
    var words: UInt64 = 0
    for offset in stride(from: 0, to: window, by: 8) {
      words |= before.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
    }
    words |= UnsafeRawPointer(start).loadUnaligned(fromByteOffset: window - 8, as: UInt64.self)
    return words & 0x8080_8080_8080_8080 == 0
  }

  /// The windows of the span at `start` that are not ASCII (``isASCIIWindow(_:)``), as bits:
  /// bit `n` for the window at `start + window * n`.
  @inline(__always)
  private static func mixedWindows(_ start: UnsafePointer<UInt8>) -> UInt64 {
    var mixed: UInt64 = 0
    var at = start
    // Two windows a step. Each window's bit enters at the top and moves down one place for each
    // later window.
    for _ in 0..<windowsPerSpan / 2 {
      let first: UInt64 = isASCIIWindow(at) ? 0 : 1 &<< 62
      let second: UInt64 = isASCIIWindow(at + window) ? 0 : 1 &<< 63
      mixed = mixed &>> 2 | first | second
      at += 2 &* window
    }
    return mixed
  }

  /// Checks the window at `start`, which is not all ASCII. Returns the first invalid sequence's
  /// offset if the window holds one, and the first sequence boundary at or after its end.
  @inline(__always)
  private static func checkMixedWindow(_ bytes: UnsafePointer<UInt8>, at start: Int, count: Int)
    -> (invalid: Int?, boundary: Int)
  {
    let problems = self.problems(at: bytes + start)
    guard anyLane(problems) else { return (nil, start &+ window) }
    return scalarCheck(
      bytes, from: sequenceStart(bytes, before: start), through: start &+ window, count: count)
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
