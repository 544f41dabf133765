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

  /// Just past the string token that starts at `start`.
  private static func stringEnd(from start: Int, in text: UnsafeBufferPointer<UInt8>) -> Int {
    var index = start + 1
    while text[index] != UInt8(ascii: "\"") {
      index += text[index] == UInt8(ascii: "\\") ? 2 : 1
    }
    return index + 1
  }

  /// Just past the value that starts at `start`.
  private static func valueEnd(from start: Int, in text: UnsafeBufferPointer<UInt8>) -> Int {
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

  /// Whether the key token `key` decodes to `name` (decoded bytes).
  static func key(_ key: Span, in text: UnsafeBufferPointer<UInt8>, is name: [UInt8]) -> Bool {
    let token = UnsafeBufferPointer(rebasing: text[key.start..<key.end])
    if let plain = JSONText.unescapedContent(token) { return plain.elementsEqual(name) }
    return JSONText.decodeString(token) == name
  }
}
