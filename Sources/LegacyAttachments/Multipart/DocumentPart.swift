/// What the JSON part of a multipart document says about the parts that follow it: its `_id`,
/// and each top-level `_attachments` entry with `"follows":true`, in order, with the members a
/// part is checked against and the spans a rewrite needs.
///
/// Read by a short, forgiving walk (white space allowed anywhere JSON allows it): a part that is
/// not a JSON object, or that breaks off, gives no entries, and the engine then says what is
/// wrong with it, as for any document.
struct DocumentPart {
  struct Member {
    /// The key, decoded.
    var name: [UInt8]
    /// Key token through value.
    var whole: Span
    var value: Span
  }

  /// An entry whose bytes follow in a part of their own.
  struct FollowsEntry {
    /// The attachment's name, decoded.
    var name: [UInt8]
    /// The entry's object.
    var object: Span
    var members: [Member]
    /// The decoded `digest`, when it is a string.
    var digest: [UInt8]?
    /// `length` and `encoded_length`, when they are whole numbers.
    var length: Int?
    var encodedLength: Int?
    /// The decoded `encoding`, when there is one (a value that is not a string stands as its
    /// JSON text).
    var encoding: [UInt8]?
  }

  /// The decoded `_id`, when it is a string.
  var id: [UInt8]?
  var entries: [FollowsEntry] = []

  /// Reads the JSON part `text`.
  init(_ text: UnsafeBufferPointer<UInt8>) {
    let walker = LooseJSON(text: text)
    guard let root = walker.object(at: walker.skipSpace(from: 0)) else { return }
    for member in root {
      if member.name.elementsEqual("_id".utf8), text[member.value.start] == UInt8(ascii: "\"") {
        id = walker.decoded(member.value)
      } else if member.name.elementsEqual("_attachments".utf8),
        let entries = walker.object(at: member.value.start)
      {
        self.entries = entries.compactMap { walker.followsEntry($0) }
      }
    }
  }
}

/// A forgiving walk over JSON text: spans of strings, values and object members, nil for
/// anything that is not well formed.
struct LooseJSON {
  let text: UnsafeBufferPointer<UInt8>

  func skipSpace(from start: Int) -> Int {
    var index = start
    while index < text.count,
      text[index] == 0x20 || text[index] == 0x0A || text[index] == 0x0D || text[index] == 0x09
    {
      index += 1
    }
    return index
  }

  /// Just past the string token at `start`.
  func stringEnd(from start: Int) -> Int? {
    guard start < text.count, text[start] == UInt8(ascii: "\"") else { return nil }
    var index = start + 1
    while index < text.count {
      switch text[index] {
      case UInt8(ascii: "\""): return index + 1
      case UInt8(ascii: "\\"): index += 2
      default: index += 1
      }
    }
    return nil
  }

  /// Just past the value at `start` (containers by their brackets, strings skipped).
  func valueEnd(from start: Int) -> Int? {
    guard start < text.count else { return nil }
    switch text[start] {
    case UInt8(ascii: "\""):
      return stringEnd(from: start)
    case UInt8(ascii: "{"), UInt8(ascii: "["):
      var depth = 0
      var index = start
      while index < text.count {
        switch text[index] {
        case UInt8(ascii: "\""):
          guard let end = stringEnd(from: index) else { return nil }
          index = end
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
      return nil
    default:
      var index = start
      while index < text.count,
        !(text[index] == UInt8(ascii: ",") || text[index] == UInt8(ascii: "}")
          || text[index] == UInt8(ascii: "]") || text[index] == 0x20 || text[index] == 0x0A
          || text[index] == 0x0D || text[index] == 0x09)
      {
        index += 1
      }
      return index > start ? index : nil
    }
  }

  func decoded(_ span: Span) -> [UInt8] {
    JSONText.decodeString(UnsafeBufferPointer(rebasing: text[span.start..<span.end]))
  }

  /// The members of the object at `start`, in order.
  func object(at start: Int) -> [DocumentPart.Member]? {
    guard start < text.count, text[start] == UInt8(ascii: "{") else { return nil }
    var members: [DocumentPart.Member] = []
    var index = skipSpace(from: start + 1)
    if index < text.count, text[index] == UInt8(ascii: "}") { return members }
    while index < text.count {
      guard let keyEnd = stringEnd(from: index) else { return nil }
      let key = Span(start: index, end: keyEnd)
      index = skipSpace(from: keyEnd)
      guard index < text.count, text[index] == UInt8(ascii: ":") else { return nil }
      index = skipSpace(from: index + 1)
      guard let valueEnd = valueEnd(from: index) else { return nil }
      members.append(
        DocumentPart.Member(
          name: decoded(key), whole: Span(start: key.start, end: valueEnd),
          value: Span(start: index, end: valueEnd)))
      index = skipSpace(from: valueEnd)
      guard index < text.count else { return nil }
      if text[index] == UInt8(ascii: "}") { return members }
      guard text[index] == UInt8(ascii: ",") else { return nil }
      index = skipSpace(from: index + 1)
    }
    return nil
  }

  /// The entry `member` of `_attachments`, when its object says `"follows":true`.
  func followsEntry(_ member: DocumentPart.Member) -> DocumentPart.FollowsEntry? {
    guard let members = object(at: member.value.start),
      let follows = members.last(where: { $0.name.elementsEqual("follows".utf8) }),
      text[follows.value.start..<follows.value.end].elementsEqual("true".utf8)
    else { return nil }
    func last(_ name: String) -> Span? {
      members.last { $0.name.elementsEqual(name.utf8) }?.value
    }
    func string(_ name: String) -> [UInt8]? {
      guard let span = last(name), text[span.start] == UInt8(ascii: "\"") else { return nil }
      return decoded(span)
    }
    func wholeNumber(_ name: String) -> Int? {
      guard let span = last(name) else { return nil }
      return BodyCarrier.lengthValue(UnsafeBufferPointer(rebasing: text[span.start..<span.end]))
    }
    var entry = DocumentPart.FollowsEntry(
      name: member.name, object: member.value, members: members, digest: string("digest"),
      length: wholeNumber("length"), encodedLength: wholeNumber("encoded_length"))
    if let encoding = last("encoding") {
      entry.encoding = string("encoding") ?? Array(text[encoding.start..<encoding.end])
    }
    return entry
  }
}
