/// One document of a multipart body while its parts come in: its JSON part, then the bytes of
/// each entry that says `"follows":true`, matched by the part's `filename` or else in order.
struct MultipartDocument {
  /// Where its top-level part starts in the body (its headers), for rejects and messages.
  let start: Int
  /// Whether it is a nested `multipart/related` part (its parts are at depth 1).
  let nested: Bool
  /// `X-Doc-Id` of the nested part, until the JSON part says its `_id`.
  let headerID: [UInt8]?
  /// The JSON part's bytes and where they start in the body.
  var json: [UInt8] = []
  var jsonOffset = 0
  var jsonComplete = false
  /// The JSON part came gzip-compressed: offsets in it are not offsets in the body.
  var jsonIsDecoded = false
  /// What the JSON part says, once whole.
  var part = DocumentPart(UnsafeBufferPointer(start: nil, count: 0))
  /// What came for each `follows` entry (by its index in ``part``), and where its part began.
  var received: [PartReceiver.Received?] = []
  var partOffsets: [Int] = []
  /// The first reason it is rejected, and where: its later parts are read and dropped.
  var refusal: (offset: Int, message: String)? = nil
  /// What kind of problem ``refusal`` is.
  var refusalKind = ConversionDiagnostic.Kind.malformedMultipart
  /// The files its parts put in the store (taken out again if it is rejected).
  var stored: [String] = []

  init(start: Int, nested: Bool, headerID: [UInt8]?) {
    self.start = start
    self.nested = nested
    self.headerID = headerID
  }

  /// The document's `_id` for messages.
  var id: String? {
    (part.id ?? headerID).map { String(decoding: $0, as: UTF8.self) }
  }

  /// The JSON part is whole: what it says is read.
  mutating func jsonEnded() {
    jsonComplete = true
    part = json.withUnsafeBufferPointer { DocumentPart($0) }
    received = Array(repeating: nil, count: part.entries.count)
    partOffsets = Array(repeating: 0, count: part.entries.count)
  }

  /// Whether every `follows` entry has had its part.
  var isWhole: Bool { jsonComplete && received.allSatisfy { $0 != nil } }

  /// The entry a part with `filename` is for: the one of that name that has had no part yet,
  /// or, without a name, the first that has had none; nil when there is none (the message
  /// says why).
  func entry(for filename: [UInt8]?, raw: [UInt8]? = nil) -> Result<Int, PartMismatch> {
    if let filename {
      for name in [filename, raw ?? filename] {
        if let index = part.entries.indices.first(where: {
          part.entries[$0].name == name && received[$0] == nil
        }) {
          return .success(index)
        }
      }
      return .failure(.noEntryNamed(String(decoding: filename, as: UTF8.self)))
    }
    guard let index = received.firstIndex(where: { $0 == nil }) else {
      return .failure(.noEntryLeft)
    }
    return .success(index)
  }

  enum PartMismatch: Error {
    case noEntryNamed(String)
    case noEntryLeft
  }

  /// The entries whose part never came.
  var missingParts: [String] {
    part.entries.indices.filter { received[$0] == nil }.map {
      String(decoding: part.entries[$0].name, as: UTF8.self)
    }
  }

  // MARK: The document the engine converts

  /// The JSON part as the engine gets it: one line (line breaks outside strings become
  /// spaces, which JSON does not tell from them), each `follows` entry replaced by what its
  /// part made of it; and the replacements, to locate the engine's messages in the body.
  func converted(keeping kind: BytesKept) -> (text: [UInt8], edits: [Edit]) {
    var text: [UInt8] = []
    text.reserveCapacity(json.count + 64)
    var edits: [Edit] = []
    var copied = 0
    let order = part.entries.indices.sorted {
      part.entries[$0].object.start < part.entries[$1].object.start
    }
    for index in order {
      let entry = part.entries[index]
      Self.appendOneLine(json[copied..<entry.object.start], to: &text)
      let newStart = text.count
      appendEntry(entry, received[index], keeping: kind, to: &text)
      edits.append(
        Edit(original: entry.object, replacement: Span(start: newStart, end: text.count)))
      copied = entry.object.end
    }
    Self.appendOneLine(json[copied...], to: &text)
    return (text, edits)
  }

  /// A replaced span of the JSON part, and what replaced it in the engine's text.
  struct Edit {
    var original: Span
    var replacement: Span
  }

  /// The offset in the JSON part of `offset` in the engine's text.
  static func originalOffset(of offset: Int, edits: [Edit]) -> Int {
    var shift = 0
    for edit in edits {
      if offset < edit.replacement.start { break }
      if offset < edit.replacement.end { return edit.original.start }
      shift = edit.original.end - edit.replacement.end
    }
    return offset + shift
  }

  private static func appendOneLine(_ bytes: ArraySlice<UInt8>, to text: inout [UInt8]) {
    var inString = false
    var escaped = false
    for byte in bytes {
      if inString {
        if escaped {
          escaped = false
        } else if byte == UInt8(ascii: "\\") {
          escaped = true
        } else if byte == UInt8(ascii: "\"") {
          inString = false
        }
        text.append(byte)
      } else {
        if byte == UInt8(ascii: "\"") { inString = true }
        text.append(byte == 0x0A || byte == 0x0D ? 0x20 : byte)
      }
    }
  }

  /// The entry's object, rewritten: `follows` becomes `data` (inline), or `stub`. A stored
  /// entry whose bytes were decoded takes the SHA-1 and size of what the store holds.
  private func appendEntry(
    _ entry: DocumentPart.FollowsEntry, _ received: PartReceiver.Received?,
    keeping kind: BytesKept, to text: inout [UInt8]
  ) {
    let relabels = kind == .stored && received.map { !$0.keptEncoded } == true
    text.append(UInt8(ascii: "{"))
    var first = true
    func add(_ bytes: some Sequence<UInt8>) {
      if !first { text.append(UInt8(ascii: ",")) }
      first = false
      text.append(contentsOf: bytes)
    }
    var wroteLength = false
    for member in entry.members {
      let name = String(decoding: member.name, as: UTF8.self)
      switch name {
      case "follows":
        if kind == .inline, let base64 = received?.base64 {
          add(Array("\"data\":\"".utf8) + base64 + [UInt8(ascii: "\"")])
        } else {
          add("\"stub\":true".utf8)
        }
      case "digest" where relabels:
        add("\"digest\":\"\(received!.sha1.description)\"".utf8)
      case "length" where relabels:
        add("\"length\":\(received!.size)".utf8)
        wroteLength = true
      case "encoding" where relabels, "encoded_length" where relabels:
        continue
      default:
        add(json[member.whole.start..<member.whole.end])
      }
    }
    if relabels && !wroteLength { add("\"length\":\(received!.size)".utf8) }
    text.append(UInt8(ascii: "}"))
  }
}

/// What becomes of an attachment part's bytes.
enum BytesKept {
  /// Checked, then dropped: the entry becomes the stub it stands for.
  case dropped
  /// In the blob store, named by their SHA-1: the entry becomes a stub.
  case stored
  /// Back in the entry as `data`.
  case inline
}
