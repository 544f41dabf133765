/// Strict UTF-8 validation (RFC 3629) of whole chunks, faster than yajl's per-string check.
///
/// The engine turns yajl's own check off and runs this over every chunk before yajl sees it:
/// eight ASCII bytes are checked with one load, and unlike yajl it refuses overlong forms and
/// encoded surrogates (U+D800...U+DFFF). A raw byte of 0x80 or more outside a string is invalid
/// JSON anyway, so checking the whole chunk is the same as checking its strings.
enum UTF8Validator {
  /// The offset of the first byte of the first invalid sequence in `bytes[0..<count]`, or nil.
  static func firstInvalid(_ bytes: UnsafePointer<UInt8>, count: Int) -> Int? {
    var index = 0
    while index < count {
      // Eight ASCII bytes at a time.
      while index + 8 <= count {
        let word = UnsafeRawPointer(bytes + index).loadUnaligned(as: UInt64.self)
        if word & 0x8080_8080_8080_8080 != 0 { break }
        index &+= 8
      }
      guard index < count else { return nil }
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
      case 0xE0: length = 3; low = 0xA0
      case 0xE1...0xEC, 0xEE...0xEF: length = 3
      case 0xED: length = 3; high = 0x9F
      case 0xF0: length = 4; low = 0x90
      case 0xF1...0xF3: length = 4
      case 0xF4: length = 4; high = 0x8F
      default: return index
      }
      guard index + length <= count else { return index }
      let second = bytes[index + 1]
      guard second >= low && second <= high else { return index }
      for offset in 2..<length where bytes[index + offset] & 0xC0 != 0x80 { return index }
      index &+= length
    }
    return nil
  }
}
