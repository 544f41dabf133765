/// Where each blob of a document is, found in one pass over the document's compact text: for
/// telling which blob is at the place a synthesized name gives (``NamedPlace``) in time that
/// grows with the text plus the entries, not with the text times the entries.
///
/// Made on a cold path, once per document that needs it (pull meets an entry whose name push
/// makes and whose digest no blob has; check meets any entry whose name push makes), so the
/// scanner computes no names for it.
struct BlobPlaces {
  /// One step of a blob's path: an object key (decoded) or an array index.
  enum PathStep: Equatable {
    case key([UInt8])
    case index(Int)
  }

  private struct Found {
    var blob: Int
    var steps: [PathStep]
  }

  /// The blobs' paths, by their RFC 6901 pointer (the text every reading of a name maps to).
  private var byPointer: [String: [Found]] = [:]

  /// The places of `blobs`, values of `text` (a document's compact text: valid JSON without
  /// white space, as the scanner makes it).
  init(blobs: UnsafeBufferPointer<BlobReference>, text: UnsafeBufferPointer<UInt8>) {
    guard !blobs.isEmpty, !text.isEmpty else { return }
    var starts: [Int: Int] = [:]
    for (index, blob) in blobs.enumerated() where starts[blob.span.start] == nil {
      starts[blob.span.start] = index
    }
    var walker = CompactWalker(text: text)
    walker.walk { start, path in
      guard let blob = starts[start] else { return nil }
      let steps = path.map { step -> PathStep in
        switch step {
        case .key(let key):
          .key(JSONText.decodeString(UnsafeBufferPointer(rebasing: text[key.start..<key.end])))
        case .index(let index): .index(index)
        }
      }
      byPointer[Self.pointer(steps), default: []].append(Found(blob: blob, steps: steps))
      return blobs[blob].span.end
    }
  }

  /// The index of the first blob at `place`, if any.
  func blobIndex(at place: NamedPlace) -> Int? {
    guard let candidates = byPointer[place.pointer] else { return nil }
    return
      candidates
      .filter { found in
        found.steps.count == place.steps.count
          && zip(place.steps, found.steps).allSatisfy { Self.step($0, names: $1) }
      }
      .map(\.blob).min()
  }

  private static func step(_ step: NamedPlace.Step, names pathStep: PathStep) -> Bool {
    switch (step, pathStep) {
    case (.key(let name), .key(let key)), (.token(let name), .key(let key)): name == key
    case (.index(let wanted), .index(let index)): wanted == index
    case (.token(let token), .index(let index)): NamedPlace.index(token) == index
    default: false
    }
  }

  private static func pointer(_ steps: [PathStep]) -> String {
    NamedPlace(
      steps: steps.map {
        switch $0 {
        case .key(let key): .key(key)
        case .index(let index): .index(index)
        }
      }
    ).pointer
  }
}

/// A walk over compact JSON text (valid, without white space) that knows, at each value, the
/// keys and indexes that lead to it. Iterative: a document nested a million deep costs memory
/// for its path, not stack.
struct CompactWalker {
  enum Step {
    /// The key token's span, quotes included.
    case key(Span)
    case index(Int)
  }

  let text: UnsafeBufferPointer<UInt8>

  /// Calls `visit` with the start of every value and the path to it; when it returns an
  /// offset (the end of that value), the walk skips the value's inside.
  mutating func walk(_ visit: (Int, [Step]) -> Int?) {
    var path: [Step] = []
    var index = 0
    // Each pass starts at a value: visits it, enters it or steps past it, then goes up and on
    // until the next value.
    while index < text.count {
      if let end = visit(index, path) {
        index = end
      } else {
        switch text[index] {
        case UInt8(ascii: "{"):
          if text[index + 1] != UInt8(ascii: "}") {
            let keyEnd = Self.stringEnd(from: index + 1, in: text)
            path.append(.key(Span(start: index + 1, end: keyEnd)))
            index = keyEnd + 1
            continue
          }
          index += 2
        case UInt8(ascii: "["):
          if text[index + 1] != UInt8(ascii: "]") {
            path.append(.index(0))
            index += 1
            continue
          }
          index += 2
        case UInt8(ascii: "\""):
          index = Self.stringEnd(from: index, in: text)
        default:
          while index < text.count, !Self.endsScalar(text[index]) { index += 1 }
        }
      }
      // After a value: the next member or element, or up past closing brackets.
      while let last = path.last, index < text.count {
        if text[index] == UInt8(ascii: ",") {
          switch last {
          case .key:
            let keyEnd = Self.stringEnd(from: index + 1, in: text)
            path[path.count - 1] = .key(Span(start: index + 1, end: keyEnd))
            index = keyEnd + 1
          case .index(let element):
            path[path.count - 1] = .index(element + 1)
            index += 1
          }
          break
        }
        path.removeLast()
        index += 1
      }
      if path.isEmpty { return }
    }
  }

  private static func endsScalar(_ byte: UInt8) -> Bool {
    byte == UInt8(ascii: ",") || byte == UInt8(ascii: "}") || byte == UInt8(ascii: "]")
  }

  private static func stringEnd(from start: Int, in text: UnsafeBufferPointer<UInt8>) -> Int {
    var index = start + 1
    while text[index] != UInt8(ascii: "\"") {
      index += text[index] == UInt8(ascii: "\\") ? 2 : 1
    }
    return index + 1
  }
}
