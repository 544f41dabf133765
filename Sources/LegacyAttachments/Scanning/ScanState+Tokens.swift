import CYajl
import Glibc

private let comma = UInt8(ascii: ",")
private let colon = UInt8(ascii: ":")

extension ScanState {
  // MARK: Locating tokens

  /// Finds the token yajl just reported: sets `tokenStart`/`tokenEnd` in output coordinates and,
  /// when copying, appends it (with its separator) to `text`. Starts a document when the token
  /// is a document's first. Returns the token's span (the same two offsets, handed over in
  /// registers: reading back the two fields just stored as one 16-byte value stalls store
  /// forwarding), or nil when the parse must stop.
  ///
  /// The inline part handles the common case, a token inside a compact document; everything
  /// else (whitespace, copying, document boundaries) is out of line.
  @inline(__always)
  mutating func locateToken() -> Span? {
    locateToken(end: chunkBase &+ yajl_get_bytes_consumed(handle))
  }

  /// ``locateToken()`` for a token whose text yajl hands over: a string or a key (`quoted`, the
  /// text decoded) or a number (the text as written). When that text is the input itself (no
  /// escapes, and the token not split between chunks), the token's end follows from where it
  /// lies, without asking yajl.
  @inline(__always)
  mutating func locateToken(text: UnsafePointer<UInt8>?, count: Int, quoted: Bool) -> Span? {
    if let text {
      let offset = UnsafePointer(input).distance(to: text)
      if offset >= chunkBase && offset < chunkEnd {
        return locateToken(end: offset &+ count &+ (quoted ? 1 : 0))
      }
    }
    return locateToken()
  }

  /// ``locateToken()`` for a token ending at input offset `end`.
  @inline(__always)
  mutating func locateToken(end: Int) -> Span? {
    if fastPath {
      var position = previousEnd
      var byte = input[position]
      if byte == comma || byte == colon {
        position &+= 1
        byte = input[position]
      }
      if byte > 0x20 {
        let token = Span(start: position &- documentStart, end: end &- documentStart)
        tokenInputStart = position
        tokenStart = token.start
        tokenEnd = token.end
        previousEnd = end
        return token
      }
    }
    return locateSlowly(end: end) ? Span(start: tokenStart, end: tokenEnd) : nil
  }

  /// The out-of-line part of ``locateToken()``.
  @inline(never)
  mutating func locateSlowly(end: Int) -> Bool {
    if frames.count <= documentDepth { return locateOutsideDocument(end: end) }
    var position = previousEnd
    guard skipWhitespace(&position) else { return false }
    var separator: UInt8 = 0
    if input[position] == comma || input[position] == colon {
      separator = input[position]
      position += 1
      guard skipWhitespace(&position) else { return false }
    }
    if !copying {
      // Whitespace inside the document: from here on its compact text is copied.
      text.count = 0
      text.append(input + documentStart, count: previousEnd - documentStart)
      copying = true
      fastPath = false
    }
    if separator != 0 { text.append(separator) }
    tokenInputStart = position
    tokenStart = text.count
    text.append(input + position, count: end - position)
    tokenEnd = text.count
    previousEnd = end
    return true
  }

  /// Skips JSON whitespace. yajl also takes form feed and vertical tab as whitespace; JSON does
  /// not, so they are reported as malformed input.
  mutating func skipWhitespace(_ position: inout Int) -> Bool {
    while true {
      switch input[position] {
      case 0x20, 0x0A, 0x0D, 0x09: position += 1
      case 0x0C, 0x0B:
        lexicalProblem = (
          position,
          input[position] == 0x0C
            ? "malformed JSON: a form feed is not JSON whitespace"
            : "malformed JSON: a vertical tab is not JSON whitespace"
        )
        return false
      default: return true
      }
    }
  }

  /// Locates a token at document level: the first token of a document, or (list framing) the
  /// list's own brackets.
  @inline(never)
  mutating func locateOutsideDocument(end: Int) -> Bool {
    var position = previousEnd
    guard skipWhitespace(&position) else { return false }
    if documentDepth == 1 && frames.count == 1 && input[position] == comma {
      position += 1
      guard skipWhitespace(&position) else { return false }
    }
    previousEnd = end
    tokenInputStart = position
    if frames.count == documentDepth && input[position] != UInt8(ascii: "]") {
      documentStart = position
      beginDocument(at: position)
      tokenStart = 0
      tokenEnd = end - position
    } else {
      tokenStart = position
      tokenEnd = end
    }
    return true
  }

  mutating func beginDocument(at position: Int) {
    inDocument = true
    documentStart = position
    copying = false
    advanceLines(to: position)
    documentLine = lineAtCursor
    documentLineStart = lineStartAtCursor
  }

  // MARK: Callbacks

  /// A scalar value: null, boolean, number or string. `text` is what yajl hands over for a
  /// number (its text as written) or a string (its decoded text), else nil.
  @inline(__always)
  mutating func scalar(_ kind: ValueKind, text: UnsafePointer<UInt8>? = nil, count: Int = 0)
    -> Bool
  {
    let located =
      text == nil ? locateToken() : locateToken(text: text, count: count, quoted: kind == .string)
    guard let token = located else { return false }
    let depth = frames.count
    if depth > documentDepth {
      let parent = frames.base + (depth &- 1)
      if parent.pointee.isArray {
        parent.pointee.count &+= 1
      } else if parent.pointee.pendingKey != .other {
        memberValue(
          parent, kind: kind, value: token, string: kind == .string ? text : nil,
          count: count, child: nil)
      }
      return true
    }
    return scalarDocument(kind)
  }

  /// A scalar where a document (or, with list framing, the list) belongs.
  @inline(never)
  mutating func scalarDocument(_ kind: ValueKind) -> Bool {
    if frames.count < documentDepth { return listFramingBroken(found: kind) }
    problems.append(notAnObjectProblem(kind))
    return endDocument(inputEnd: previousEnd - documentStart)
  }

  /// `{` or `[`.
  @inline(__always)
  mutating func open(isArray: Bool) -> Bool {
    guard let token = locateToken() else { return false }
    let depth = frames.count
    guard depth > documentDepth else { return openDocument(isArray: isArray) }
    let parent = frames.base + (depth &- 1)
    if parent.pointee.isArray { parent.pointee.count &+= 1 }
    pushFrame(
      role: childRole(of: parent.pointee, isArray: isArray), isArray: isArray, start: token.start)
    return true
  }

  @inline(__always)
  mutating func pushFrame(role: Role, isArray: Bool, start: Int) {
    frames.push(
      Frame(
        role: role, isArray: isArray, start: start,
        inputStart: tokenInputStart &- documentStart,
        exclusionsStart: exclusions.count, blobsStart: blobs.count))
  }

  /// `{` or `[` where a document (or, with list framing, the list) belongs.
  @inline(never)
  mutating func openDocument(isArray: Bool) -> Bool {
    if frames.count == documentDepth {
      if isArray {
        problems.append(notAnObjectProblem(.array))
        pushFrame(role: .inert, isArray: true, start: tokenStart)
      } else {
        documentIsObject = true
        pushFrame(role: .document, isArray: false, start: tokenStart)
      }
      fastPath = !copying
      return true
    }
    // List framing, outside the list.
    guard isArray, !listClosed else { return listFramingBroken(found: isArray ? .array : .object) }
    openListOutput()
    pushFrame(role: .list, isArray: true, start: tokenStart)
    return true
  }

  /// `}` or `]`.
  @inline(__always)
  mutating func close() -> Bool {
    guard let token = locateToken() else { return false }
    frames.truncate(to: frames.count &- 1)
    let depth = frames.count
    // The popped frame's memory stays valid until the next push.
    let frame = frames.base + depth
    if frame.pointee.role == .candidate {
      if frame.pointee.isBlob {
        recordBlob(frame.pointee)
      } else {
        exclusions.truncate(to: frame.pointee.exclusionsStart)
      }
    }
    if depth > documentDepth {
      let parent = frames.base + (depth &- 1)
      if !parent.pointee.isArray && parent.pointee.pendingKey != .other {
        memberValue(
          parent, kind: frame.pointee.isArray ? .array : .object,
          value: Span(start: frame.pointee.start, end: token.end), string: nil, count: 0,
          child: frame)
      }
      return true
    }
    return closeDocument()
  }

  @inline(never)
  mutating func closeDocument() -> Bool {
    if frames.count < documentDepth {
      listClosed = true
      return true
    }
    return endDocument(inputEnd: previousEnd - documentStart)
  }

  /// An object key (`key` is yajl's decoded text).
  @inline(__always)
  mutating func key(_ key: UnsafePointer<UInt8>, count: Int) -> Bool {
    guard let token = locateToken(text: key, count: count, quoted: true) else { return false }
    let frame = frames.base + (frames.count &- 1)
    frame.pointee.count &+= 1
    frame.pointee.key = token
    let pending = memberRules[frame.pointee.role, KeyWord.identify(key, count: count)]
    if pending == .attachments { attachmentsKeyInput = tokenInputStart - documentStart }
    frame.pointee.pendingKey = pending
    return true
  }

  // MARK: Rules

  @inline(__always)
  func childRole(of parent: Frame, isArray: Bool) -> Role {
    switch parent.role {
    case .document:
      if parent.pendingKey == .attachments { return isArray ? .inert : .attachments }
      return isArray ? .array : .candidate
    case .candidate:
      if parent.isBlob { return .inert }
      return isArray ? .array : .candidate
    case .array:
      return isArray ? .array : .candidate
    case .attachments:
      return isArray ? .inert : .entry
    case .entry, .inert, .list:
      return .inert
    }
  }

  @inline(__always)
  func equals(_ bytes: UnsafePointer<UInt8>, _ literal: StaticString) -> Bool {
    memcmp(bytes, literal.utf8Start, literal.utf8CodeUnitCount) == 0
  }

  /// A value of a member whose key a rule cares about has ended.
  @inline(never)
  mutating func memberValue(
    _ parent: UnsafeMutablePointer<Frame>, kind: ValueKind, value: Span,
    string: UnsafePointer<UInt8>?, count: Int, child: UnsafeMutablePointer<Frame>?
  ) {
    let member = Span(start: parent.pointee.key.start, end: value.end)
    switch parent.pointee.pendingKey {
    case .other:
      break
    case .type:
      exclusions.push(member)
      if kind == .string && count == 4, let string, equals(string, "blob") {
        parent.pointee.isBlob = true
      }
    case .digest:
      parent.pointee.digestRaw = value
      parent.pointee.digest = kind == .string ? value : .none
    case .length:
      parent.pointee.length = value
    case .contentType:
      parent.pointee.contentType = value
    case .stub, .revpos:
      exclusions.push(member)
    case .id:
      identifier = kind == .string ? value : .none
    case .rev:
      revision = kind == .string ? value : .none
    case .attachments:
      attachmentsCount += 1
      let keyInput = attachmentsKeyInput
      if attachmentsCount == 1 {
        attachmentsMember = member
        attachmentsValue = value
        attachmentsIsObject = kind == .object
        attachmentsKind = kind
        attachmentsInputStart = keyInput
      } else if attachmentsCount == 2 {
        problems.append(
          PendingProblem(
            kind: .duplicateAttachments, severity: .error, inputOffset: keyInput,
            message:
              "more than one top-level \"_attachments\" member; refusing to guess which one is meant",
            pointer: "/_attachments"))
      }
    case .entry:
      let synthesized =
        (options.mode == .push || options.mode == .check) && isSynthesizedName(parent.pointee.key)
      entries.push(
        LegacyEntry(
          member: member, key: parent.pointee.key, value: value, isObject: kind == .object,
          isSynthesized: synthesized,
          digest: child?.pointee.digest ?? .none, digestRaw: child?.pointee.digestRaw ?? .none,
          length: child?.pointee.length ?? .none,
          contentType: child?.pointee.contentType ?? .none))
    }
  }

  /// Whether the key token `key` (raw, quoted) decodes to a name push itself makes in the
  /// current naming: `$.…` or `$[…` for `jsonpath`, `blob_…` for `litecore`.
  mutating func isSynthesizedName(_ key: Span) -> Bool {
    let token = UnsafeBufferPointer(start: documentText + key.start, count: key.count)
    var name = UnsafeBufferPointer(rebasing: token[1..<token.count - 1])
    if memchr(token.baseAddress! + 1, Int32(UInt8(ascii: "\\")), min(token.count - 2, 12)) != nil {
      scratch.count = 0
      JSONText.decodeString(token, into: &scratch)
      name = scratch.bytes
    }
    switch options.naming {
    case .jsonpath:
      return name.count >= 2 && name[0] == UInt8(ascii: "$")
        && (name[1] == UInt8(ascii: ".") || name[1] == UInt8(ascii: "["))
    case .litecore:
      return name.count >= 5 && name[0] == UInt8(ascii: "b") && name[1] == UInt8(ascii: "l")
        && name[2] == UInt8(ascii: "o") && name[3] == UInt8(ascii: "b")
        && name[4] == UInt8(ascii: "_")
    }
  }

  /// A blob reference has closed: keep it, with the members its entry leaves out, and drop any
  /// reference found inside it before it was known to be a blob.
  @inline(never)
  mutating func recordBlob(_ frame: Frame) {
    if blobs.count > frame.blobsStart {
      let first = blobs[frame.blobsStart]
      blobExclusions.truncate(to: first.exclusions.start)
      names.count = first.name.start
      blobs.truncate(to: frame.blobsStart)
    }
    let excluded = Span(start: blobExclusions.count, end: 0)
    for index in frame.exclusionsStart..<exclusions.count { blobExclusions.push(exclusions[index]) }
    exclusions.truncate(to: frame.exclusionsStart)
    var reference = BlobReference(
      span: Span(start: frame.start, end: tokenEnd), inputStart: frame.inputStart,
      exclusions: Span(start: excluded.start, end: blobExclusions.count),
      digest: frame.digest, digestRaw: frame.digestRaw, length: frame.length,
      contentType: frame.contentType, name: Span(start: names.count, end: names.count),
      pointer: .none, nameIsPlain: false)
    if needsNames {
      let litecore = options.mode == .push && options.naming == .litecore
      if litecore { names.append("blob_") }
      (reference.name, reference.nameIsPlain) = appendPath(pointer: litecore)
      if litecore { reference.name.start -= 5 }
      if needsPointers { reference.pointer = appendPath(pointer: true).span }
    }
    blobs.push(reference)
  }

  /// Appends the current path (the open containers' keys and indexes) to `names` as a `jsonpath`
  /// name or as a JSON Pointer, and returns where it is and whether it is plain: whether the name
  /// needs no escape as a JSON string (so that it can be written between quotes as it is).
  mutating func appendPath(pointer: Bool) -> (span: Span, isPlain: Bool) {
    let start = names.count
    var isPlain = true
    if !pointer { names.append(UInt8(ascii: "$")) }
    let base = documentText
    for depth in documentDepth..<frames.count {
      // Through the pointer: a copy of the whole frame per step costs more than the step.
      let frame = frames.base + depth
      if frame.pointee.isArray {
        names.append(pointer ? UInt8(ascii: "/") : UInt8(ascii: "["))
        names.appendDecimal(frame.pointee.count - 1)
        if !pointer { names.append(UInt8(ascii: "]")) }
        continue
      }
      names.append(pointer ? UInt8(ascii: "/") : UInt8(ascii: "."))
      let key = frame.pointee.key
      let content = base + key.start + 1
      let length = key.count - 2
      if Self.plainKeyLength(content, count: length, pointer: pointer) == length {
        // The raw key text is the decoded key, has nothing to escape in the name, and (being
        // strictly valid UTF-8 with no backslash, quote or control character) none as a string.
        names.append(content, count: length)
        continue
      }
      isPlain = false
      let token = UnsafeBufferPointer(start: base + key.start, count: key.count)
      var decoded: UnsafeBufferPointer<UInt8>
      if let unescaped = JSONText.unescapedContent(token) {
        decoded = unescaped
      } else {
        scratch.count = 0
        JSONText.decodeString(token, into: &scratch)
        decoded = scratch.bytes
      }
      if pointer {
        JSONText.appendPointerKey(decoded, to: &names)
      } else {
        JSONText.appendPathKey(decoded, to: &names)
      }
    }
    return (Span(start: start, end: names.count), isPlain)
  }

  /// How many leading bytes of a key's raw text need no escaping in a name (`\`, and `.` and
  /// `[` for `jsonpath`, `~` and `/` for pointers, stop the count).
  @inline(__always)
  private static func plainKeyLength(_ bytes: UnsafePointer<UInt8>, count: Int, pointer: Bool)
    -> Int
  {
    var index = 0
    if pointer {
      while index < count {
        let byte = bytes[index]
        if byte == UInt8(ascii: "\\") || byte == UInt8(ascii: "~") || byte == UInt8(ascii: "/") {
          break
        }
        index &+= 1
      }
    } else {
      while index < count {
        let byte = bytes[index]
        if byte == UInt8(ascii: "\\") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "[") {
          break
        }
        index &+= 1
      }
    }
    return index
  }

  func notAnObjectProblem(_ kind: ValueKind) -> PendingProblem {
    var message = "document is not a JSON object (it is \(kind.article))"
    if kind == .array && documentDepth == 0 {
      message += "; for a file holding one array of documents, use --format list"
    }
    return PendingProblem(
      kind: .notAnObject, severity: .error, inputOffset: 0, message: message, pointer: "")
  }

  /// With `--format list`, the input must be exactly one array.
  mutating func listFramingBroken(found kind: ValueKind) -> Bool {
    let offset = tokenStart
    var message: String
    if listClosed {
      message = "with --format list the input must be one JSON array; more follows it"
    } else {
      message =
        "with --format list the input must be one JSON array of documents; it is \(kind.article)"
      if kind == .object { message += " (for one document after another, use --format lines)" }
    }
    // Locate against the line cursor: there is no document here.
    documentLine = lineAtCursor
    documentLineStart = lineStartAtCursor
    documentStart = offset
    advanceLinesForProblem(offset)
    diagnostics.append(
      makeDiagnostic(
        PendingProblem(
          kind: .notAnObject, severity: .error, inputOffset: 0, message: message, pointer: "")))
    statistics.errors += 1
    fatal = true
    return false
  }

  private mutating func advanceLinesForProblem(_ offset: Int) {
    advanceLines(to: offset)
    documentLine = lineAtCursor
    documentLineStart = lineStartAtCursor
  }
}

extension ScanState {
  /// Writes the start of `--format list` output once per run.
  mutating func openListOutput() {
    guard options.mode == .push || options.mode == .pull, !listOpened else { return }
    output.append(UInt8(ascii: "["))
    listOpened = true
  }
}
