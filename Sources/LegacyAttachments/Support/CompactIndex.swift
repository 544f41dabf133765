/// A document's compact text (valid JSON without white space, as the scanner makes it) with
/// its containers indexed: where each ends, and, once asked, an object's members by key and an
/// array's elements. Made in one pass; each container is read once however often it is asked
/// for, so that following many names through one document costs time in proportion to the
/// document, not to the document times the names. A class: what it has read is shared by all
/// who ask. For cold paths (`--check`'s model of Couchbase Lite's pull).
final class CompactIndex {
  let text: UnsafeBufferPointer<UInt8>
  /// The end (just past the closing bracket) of each container, by its start.
  private var ends: [Int: Int] = [:]
  private var members: [Int: [(key: [UInt8], value: Span)]] = [:]
  private var elements: [Int: [Span]] = [:]
  /// An object's members by key (the last of a key), for objects looked up by key.
  private var byKey: [Int: [[UInt8]: Span]] = [:]

  init(_ text: UnsafeBufferPointer<UInt8>) {
    self.text = text
    var open: [Int] = []
    var index = 0
    while index < text.count {
      switch text[index] {
      case UInt8(ascii: "\""):
        index = Self.stringEnd(from: index, in: text)
        continue
      case UInt8(ascii: "{"), UInt8(ascii: "["):
        open.append(index)
      case UInt8(ascii: "}"), UInt8(ascii: "]"):
        if let start = open.popLast() { ends[start] = index + 1 }
      default:
        break
      }
      index += 1
    }
  }

  /// The span of the value that starts at `start`.
  func value(at start: Int) -> Span {
    switch text[start] {
    case UInt8(ascii: "{"), UInt8(ascii: "["):
      return Span(start: start, end: ends[start] ?? text.count)
    case UInt8(ascii: "\""):
      return Span(start: start, end: Self.stringEnd(from: start, in: text))
    default:
      var index = start
      while index < text.count, text[index] != UInt8(ascii: ","), text[index] != UInt8(ascii: "}"),
        text[index] != UInt8(ascii: "]")
      {
        index += 1
      }
      return Span(start: start, end: index)
    }
  }

  func isObject(_ value: Span) -> Bool { text[value.start] == UInt8(ascii: "{") }
  func isArray(_ value: Span) -> Bool { text[value.start] == UInt8(ascii: "[") }

  /// The members of the object `object`, in order, keys decoded.
  func members(of object: Span) -> [(key: [UInt8], value: Span)] {
    if let known = members[object.start] { return known }
    var found: [(key: [UInt8], value: Span)] = []
    var index = object.start + 1
    while index < object.end - 1 {
      let keyEnd = Self.stringEnd(from: index, in: text)
      let key = JSONText.decodeString(UnsafeBufferPointer(rebasing: text[index..<keyEnd]))
      let value = self.value(at: keyEnd + 1)
      found.append((key, value))
      index = value.end + 1
    }
    members[object.start] = found
    return found
  }

  /// The value of the last member `key` (decoded) of the object `object`.
  func member(_ key: [UInt8], of object: Span) -> Span? {
    if let known = byKey[object.start] { return known[key] }
    let members = members(of: object)
    // A few members are looked through; many are indexed once.
    guard members.count > 8 else { return members.last { $0.key == key }?.value }
    var keys: [[UInt8]: Span] = [:]
    for member in members { keys[member.key] = member.value }
    byKey[object.start] = keys
    return keys[key]
  }

  /// The elements of the array `array`, in order.
  func elements(of array: Span) -> [Span] {
    if let known = elements[array.start] { return known }
    var found: [Span] = []
    var index = array.start + 1
    while index < array.end - 1 {
      let value = self.value(at: index)
      found.append(value)
      index = value.end + 1
    }
    elements[array.start] = found
    return found
  }

  /// The decoded string `value` is, or nil when it is not a string (Fleece's `asString()`).
  func string(_ value: Span?) -> [UInt8]? {
    guard let value, value.isPresent, text[value.start] == UInt8(ascii: "\"") else { return nil }
    return JSONText.decodeString(UnsafeBufferPointer(rebasing: text[value.start..<value.end]))
  }

  private static func stringEnd(from start: Int, in text: UnsafeBufferPointer<UInt8>) -> Int {
    var index = start + 1
    while index < text.count, text[index] != UInt8(ascii: "\"") {
      index += text[index] == UInt8(ascii: "\\") ? 2 : 1
    }
    return index + 1
  }
}
