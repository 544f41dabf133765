/// The member names the rules look for, matched against yajl's decoded key bytes with one or two
/// unaligned integer loads instead of a `memcmp` call (the caller has already checked the length).
enum KeyWord {
  /// A key word as its first four bytes and the rest (at most eight), little-endian integers.
  /// The constants are literals so that they need no lazy initialization on the hot path.
  struct Pattern {
    let head: UInt32
    let tail: UInt64
    let count: Int
  }

  /// `@type`
  static let type = Pattern(head: 0x7079_7440, tail: 0x0000_0000_0000_0065, count: 5)
  /// `digest`
  static let digest = Pattern(head: 0x6567_6964, tail: 0x0000_0000_0000_7473, count: 6)
  /// `length`
  static let length = Pattern(head: 0x676E_656C, tail: 0x0000_0000_0000_6874, count: 6)
  /// `revpos`
  static let revpos = Pattern(head: 0x7076_6572, tail: 0x0000_0000_0000_736F, count: 6)
  /// `data`
  static let data = Pattern(head: 0x6174_6164, tail: 0x0000_0000_0000_0000, count: 4)
  /// `stub`
  static let stub = Pattern(head: 0x6275_7473, tail: 0x0000_0000_0000_0000, count: 4)
  /// `content_type`
  static let contentType = Pattern(head: 0x746E_6F63, tail: 0x6570_7974_5F74_6E65, count: 12)
  /// `_attachments`
  static let attachments = Pattern(head: 0x7474_615F, tail: 0x7374_6E65_6D68_6361, count: 12)
  /// `_id`
  static let id = Pattern(head: 0x0064_695F, tail: 0x0000_0000_0000_0000, count: 3)
  /// `_rev`
  static let rev = Pattern(head: 0x7665_725F, tail: 0x0000_0000_0000_0000, count: 4)
  /// `follows`
  static let follows = Pattern(head: 0x6C6C_6F66, tail: 0x0000_0000_0073_776F, count: 7)
  /// `encoding`
  static let encoding = Pattern(head: 0x6F63_6E65, tail: 0x0000_0000_676E_6964, count: 8)

  /// Whether `key` (whose length equals the pattern's) holds exactly the pattern's bytes.
  @inline(__always)
  static func `is`(_ key: UnsafePointer<UInt8>, _ pattern: Pattern) -> Bool {
    let raw = UnsafeRawPointer(key)
    switch pattern.count {
    case 3:
      return UInt32(raw.loadUnaligned(as: UInt16.self)) | UInt32(key[2]) << 16 == pattern.head
    case 4:
      return raw.loadUnaligned(as: UInt32.self) == pattern.head
    case 5:
      return raw.loadUnaligned(as: UInt32.self) == pattern.head && UInt64(key[4]) == pattern.tail
    case 6:
      return raw.loadUnaligned(as: UInt32.self) == pattern.head
        && UInt64(raw.loadUnaligned(fromByteOffset: 4, as: UInt16.self)) == pattern.tail
    case 7:
      return raw.loadUnaligned(as: UInt32.self) == pattern.head
        && (UInt64(raw.loadUnaligned(fromByteOffset: 4, as: UInt16.self)) | UInt64(key[6]) << 16)
          == pattern.tail
    case 8:
      return raw.loadUnaligned(as: UInt32.self) == pattern.head
        && UInt64(raw.loadUnaligned(fromByteOffset: 4, as: UInt32.self)) == pattern.tail
    case 12:
      return raw.loadUnaligned(as: UInt32.self) == pattern.head
        && raw.loadUnaligned(fromByteOffset: 4, as: UInt64.self) == pattern.tail
    default:
      return false
    }
  }

  /// Which key word `key` (decoded, `count` bytes) is, whatever its container: `.other` for any
  /// other key. What the word means in its container is ``MemberRules``' business.
  @inline(__always)
  static func identify(_ key: UnsafePointer<UInt8>, count: Int) -> MemberKey {
    switch count {
    case 3: return `is`(key, id) ? .id : .other
    case 4:
      if `is`(key, rev) { return .rev }
      if `is`(key, stub) { return .stub }
      return `is`(key, data) ? .data : .other
    case 5: return `is`(key, type) ? .type : .other
    case 6:
      if `is`(key, digest) { return .digest }
      if `is`(key, length) { return .length }
      return `is`(key, revpos) ? .revpos : .other
    case 7: return `is`(key, follows) ? .follows : .other
    case 8: return `is`(key, encoding) ? .encoding : .other
    case 12:
      if `is`(key, contentType) { return .contentType }
      return `is`(key, attachments) ? .attachments : .other
    default: return .other
    }
  }
}
