/// The place in a document that a synthesized attachment name gives (`blob_/photos/0`,
/// `$.photos[0]`), as steps from the root; and whether a given value of the document is there.
///
/// Pull and check use it to tell which blob an entry stands for when its digest cannot say
/// (CouchDB re-labels every digest `md5-`), on a cold path: the document's compact text is
/// walked again, so the scanner computes no names for it.
struct NamedPlace: Equatable {
  enum Step: Equatable {
    /// A `.key` step of a jsonpath name (unescaped).
    case key([UInt8])
    /// A `[n]` step of a jsonpath name: an array element.
    case index(Int)
    /// A JSON Pointer token (`~1` and `~0` decoded): an object's key, or an array's index
    /// written in decimal without leading zeros (RFC 6901).
    case token([UInt8])
  }

  var steps: [Step]

  init(steps: [Step]) {
    self.steps = steps
  }

  /// The place `name` (a decoded entry key) gives: `blob_/` and an RFC 6901 pointer, or `$` and
  /// jsonpath steps (only `\\`, `\.`, `\[` are escapes; `[digits]` indexes arrays). Nil for any
  /// other name, `blob_` and digits (Couchbase Lite 2.0's names, which give no place) among them.
  init?(name: some Collection<UInt8>) {
    let name = Array(name)
    if name.starts(with: "blob_/".utf8) {
      guard let steps = Self.pointerSteps(name[5...]) else { return nil }
      self.steps = steps
    } else if name.first == UInt8(ascii: "$") {
      guard let steps = Self.jsonpathSteps(name[1...]) else { return nil }
      self.steps = steps
    } else {
      return nil
    }
  }

  private static func pointerSteps(_ pointer: ArraySlice<UInt8>) -> [Step]? {
    var steps: [Step] = []
    var token: [UInt8] = []
    var index = pointer.startIndex + 1
    while index <= pointer.endIndex {
      if index == pointer.endIndex || pointer[index] == UInt8(ascii: "/") {
        steps.append(.token(token))
        token.removeAll()
      } else if pointer[index] == UInt8(ascii: "~") {
        guard index + 1 < pointer.endIndex else { return nil }
        switch pointer[index + 1] {
        case UInt8(ascii: "0"): token.append(UInt8(ascii: "~"))
        case UInt8(ascii: "1"): token.append(UInt8(ascii: "/"))
        default: return nil
        }
        index += 1
      } else {
        token.append(pointer[index])
      }
      index += 1
    }
    return steps
  }

  private static func jsonpathSteps(_ path: ArraySlice<UInt8>) -> [Step]? {
    var steps: [Step] = []
    var index = path.startIndex
    guard index < path.endIndex else { return nil }
    while index < path.endIndex {
      switch path[index] {
      case UInt8(ascii: "."):
        index += 1
        var key: [UInt8] = []
        while index < path.endIndex && path[index] != UInt8(ascii: ".")
          && path[index] != UInt8(ascii: "[")
        {
          if path[index] == UInt8(ascii: "\\") {
            guard index + 1 < path.endIndex, PathStyle.jsonpath.needsEscape(path[index + 1])
            else { return nil }
            index += 1
          }
          key.append(path[index])
          index += 1
        }
        steps.append(.key(key))
      case UInt8(ascii: "["):
        index += 1
        let digits = index
        while index < path.endIndex && path[index] >= 0x30 && path[index] <= 0x39 { index += 1 }
        guard index < path.endIndex, path[index] == UInt8(ascii: "]"),
          let number = Self.index(path[digits..<index])
        else { return nil }
        steps.append(.index(number))
        index += 1
      default:
        return nil
      }
    }
    return steps
  }

  /// The array index decimal `digits` write (no leading zero but in `0`), or nil.
  static func index(_ digits: some Collection<UInt8>) -> Int? {
    guard let first = digits.first, digits.count <= 18,
      digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), first != 0x30 || digits.count == 1
    else { return nil }
    return digits.reduce(0) { $0 * 10 + Int($1 - 0x30) }
  }

  /// The place as an RFC 6901 JSON Pointer (`/photos/0`, `~` and `/` in keys escaped), for
  /// messages.
  var pointer: String {
    var text = ""
    for step in steps {
      text += "/"
      switch step {
      case .index(let index): text += String(index)
      case .key(let key), .token(let key):
        for byte in String(decoding: key, as: UTF8.self).unicodeScalars {
          switch byte {
          case "~": text += "~0"
          case "/": text += "~1"
          default: text.unicodeScalars.append(byte)
          }
        }
      }
    }
    return text
  }

  /// Whether the value that starts at `offset` of `text`, a document's compact text (valid JSON
  /// without white space, as the scanner makes it), is at this place. The walk from the root
  /// goes into the one member or element that holds `offset` at each step, so a key that
  /// occurs twice is told apart by where it is.
  func holds(valueAt offset: Int, in text: UnsafeBufferPointer<UInt8>) -> Bool {
    var container = Span(start: 0, end: text.count)
    for step in steps {
      guard let child = CompactObject.child(of: container, holding: offset, in: text),
        Self.step(step, names: child.position, in: text)
      else { return false }
      container = child.value
    }
    return container.start == offset
  }

  private static func step(
    _ step: Step, names position: CompactObject.Position, in text: UnsafeBufferPointer<UInt8>
  ) -> Bool {
    switch (step, position) {
    case (.key(let name), .key(let key)), (.token(let name), .key(let key)):
      return CompactObject.key(key, in: text, is: name)
    case (.index(let wanted), .index(let index)):
      return wanted == index
    case (.token(let token), .index(let index)):
      return Self.index(token) == index
    default:
      return false
    }
  }
}
