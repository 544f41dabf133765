/// Strict UTF-8 validation (RFC 3629) of whole chunks, faster than yajl's per-string check.
///
/// The engine turns yajl's own check off and runs this over every chunk before yajl sees it:
/// eight ASCII bytes are checked with one load, and unlike yajl it refuses overlong forms and
/// encoded surrogates (U+D800...U+DFFF). A raw byte of 0x80 or more outside a string is invalid
/// JSON anyway, so checking the whole chunk is the same as checking its strings.
enum UTF8Validator {
  /// For each lead byte: sequence length | lowest second byte << 8 | highest second byte << 16;
  /// 0 for bytes that cannot start a sequence.
  private static let leads: [UInt32] = (0..<256).map { byte -> UInt32 in
    func entry(_ length: UInt32, _ low: UInt32 = 0x80, _ high: UInt32 = 0xBF) -> UInt32 {
      length | low << 8 | high << 16
    }
    switch byte {
    case 0..<0x80: return entry(1)
    case 0xC2...0xDF: return entry(2)
    case 0xE0: return entry(3, 0xA0)
    case 0xE1...0xEC, 0xEE...0xEF: return entry(3)
    case 0xED: return entry(3, 0x80, 0x9F)
    case 0xF0: return entry(4, 0x90)
    case 0xF1...0xF3: return entry(4)
    case 0xF4: return entry(4, 0x80, 0x8F)
    default: return 0
    }
  }

  /// The offset of the first byte of the first invalid sequence in `bytes[0..<count]`, or nil.
  static func firstInvalid(_ bytes: UnsafePointer<UInt8>, count: Int) -> Int? {
    leads.withUnsafeBufferPointer { leads in
      var index = 0
      while index < count {
        // Sixteen, then eight ASCII bytes at a time; then straight to the first non-ASCII byte.
        while index + 16 <= count {
          let pair =
            UnsafeRawPointer(bytes + index).loadUnaligned(as: UInt64.self)
            | UnsafeRawPointer(bytes + index + 8).loadUnaligned(as: UInt64.self)
          if pair & 0x8080_8080_8080_8080 != 0 { break }
          index &+= 16
        }
        while index + 8 <= count {
          let high =
            UnsafeRawPointer(bytes + index).loadUnaligned(as: UInt64.self) & 0x8080_8080_8080_8080
          if high != 0 {
            index &+= high.trailingZeroBitCount >> 3
            break
          }
          index &+= 8
        }
        // Then sequence by sequence while they are not ASCII.
        while index < count {
          let entry = leads[Int(bytes[index])]
          let length = Int(entry & 0xFF)
          if length == 1 { break }
          guard length != 0, index + length <= count else { return index }
          let second = UInt32(bytes[index + 1])
          guard second >= (entry >> 8) & 0xFF && second <= entry >> 16 else { return index }
          if length > 2 && bytes[index + 2] & 0xC0 != 0x80 { return index }
          if length > 3 && bytes[index + 3] & 0xC0 != 0x80 { return index }
          index &+= length
        }
        if index < count && bytes[index] < 0x80 && index + 8 > count { index &+= 1 }
      }
      return nil
    }
  }
}
