/// The members of an object in a document's compact text (valid JSON without whitespace, as
/// the scanner makes it), found by a short walk. For the cold paths that rebuild one object
/// member by member (an upgraded entry, an updated blob); the per-token path never uses it.
enum CompactObject {
  struct Member {
    /// The key token, quotes included.
    var key: Span
    var value: Span
    /// Key through value.
    var whole: Span { Span(start: key.start, end: value.end) }
  }

  /// The members of the object `object` of `text`, in order.
  static func members(_ object: Span, in text: UnsafeBufferPointer<UInt8>) -> [Member] {
    var members: [Member] = []
    var index = object.start + 1
    let end = object.end - 1
    while index < end {
      let keyStart = index
      index = stringEnd(from: index, in: text)
      let key = Span(start: keyStart, end: index)
      index += 1  // the colon
      let valueStart = index
      index = valueEnd(from: index, in: text)
      members.append(Member(key: key, value: Span(start: valueStart, end: index)))
      if index < end && text[index] == UInt8(ascii: ",") { index += 1 }
    }
    return members
  }

  /// Where a child sits in its container: an object member's key token, or an array index.
  enum Position {
    case key(Span)
    case index(Int)
  }

  /// The member or element of the object or array `container` (a value of `text`) whose value
  /// holds the offset `offset`, or nil when none does (a scalar, or `offset` outside).
  static func child(
    of container: Span, holding offset: Int, in text: UnsafeBufferPointer<UInt8>
  ) -> (position: Position, value: Span)? {
    guard container.start < offset, offset < container.end else { return nil }
    let isObject = text[container.start] == UInt8(ascii: "{")
    guard isObject || text[container.start] == UInt8(ascii: "[") else { return nil }
    var index = container.start + 1
    var element = 0
    let end = container.end - 1
    while index < end {
      var key = Span.none
      if isObject {
        let keyStart = index
        index = stringEnd(from: index, in: text)
        key = Span(start: keyStart, end: index)
        index += 1  // the colon
      }
      let value = Span(start: index, end: valueEnd(from: index, in: text))
      if value.start <= offset && offset < value.end {
        return (isObject ? .key(key) : .index(element), value)
      }
      index = value.end
      if index < end && text[index] == UInt8(ascii: ",") { index += 1 }
      element += 1
    }
    return nil
  }

  /// Just past the string token that starts at `start`.
  private static func stringEnd(from start: Int, in text: UnsafeBufferPointer<UInt8>) -> Int {
    var index = start + 1
    while text[index] != UInt8(ascii: "\"") {
      index += text[index] == UInt8(ascii: "\\") ? 2 : 1
    }
    return index + 1
  }

  /// Just past the value that starts at `start`.
  static func valueEnd(from start: Int, in text: UnsafeBufferPointer<UInt8>) -> Int {
    switch text[start] {
    case UInt8(ascii: "\""):
      return stringEnd(from: start, in: text)
    case UInt8(ascii: "{"), UInt8(ascii: "["):
      var depth = 0
      var index = start
      while true {
        switch text[index] {
        case UInt8(ascii: "\""):
          index = stringEnd(from: index, in: text)
          continue
        case UInt8(ascii: "{"), UInt8(ascii: "["):
          depth += 1
        case UInt8(ascii: "}"), UInt8(ascii: "]"):
          depth -= 1
          if depth == 0 { return index + 1 }
        default:
          break
        }
        index += 1
      }
    default:
      var index = start
      while index < text.count {
        let byte = text[index]
        if byte == UInt8(ascii: ",") || byte == UInt8(ascii: "}") || byte == UInt8(ascii: "]") {
          break
        }
        index += 1
      }
      return index
    }
  }

  /// The element `index` of the array `array` of `text`, or nil when it has fewer.
  static func element(_ index: Int, of array: Span, in text: UnsafeBufferPointer<UInt8>) -> Span? {
    var position = array.start + 1
    var element = 0
    while position < array.end - 1 {
      let end = valueEnd(from: position, in: text)
      if element == index { return Span(start: position, end: end) }
      position = end + 1
      element += 1
    }
    return nil
  }

  /// The value of the last member named `name` of the object `object`, or nil.
  static func member(_ name: StaticString, of object: Span, in text: UnsafeBufferPointer<UInt8>)
    -> Span?
  {
    let wanted = Array(UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
    return members(object, in: text).last { key($0.key, in: text, is: wanted) }?.value
  }

  /// Whether the key token `key` decodes to `name` (decoded bytes).
  static func key(_ key: Span, in text: UnsafeBufferPointer<UInt8>, is name: [UInt8]) -> Bool {
    let token = UnsafeBufferPointer(rebasing: text[key.start..<key.end])
    if let plain = JSONText.unescapedContent(token) { return plain.elementsEqual(name) }
    return JSONText.decodeString(token) == name
  }
}
