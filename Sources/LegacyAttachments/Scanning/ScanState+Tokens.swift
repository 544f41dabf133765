import CYajl
import Glibc

private let comma = UInt8(ascii: ",")
private let colon = UInt8(ascii: ":")

extension ScanState {
  // MARK: Locating tokens

  /// Finds the token yajl just reported: sets `tokenStart`/`tokenEnd` in output coordinates and,
  /// when copying, appends it (with its separator) to `text`. Starts a document when the token
  /// is a document's first. Returns false when the parse must stop.
  @inline(__always)
  mutating func locateToken() -> Bool {
    let end = chunkBase + yajl_get_bytes_consumed(handle)
    if frames.count <= documentDepth { return locateOutsideDocument(end: end) }
    var position = previousEnd
    var byte = input[position]
    var separator: UInt8 = 0
    if byte == comma || byte == colon {
      separator = byte
      position += 1
      byte = input[position]
    }
    if byte <= 0x20 { return locateAfterWhitespace(end: end) }
    tokenInputStart = position
    if copying {
      if separator != 0 { text.append(separator) }
      tokenStart = text.count
      text.append(input + position, count: end - position)
      tokenEnd = text.count
    } else {
      tokenStart = position - documentStart
      tokenEnd = end - documentStart
    }
    previousEnd = end
    return true
  }

  /// The slow path of ``locateToken()``: whitespace inside a document. From here on the
  /// document's compact text is copied.
  @inline(never)
  mutating func locateAfterWhitespace(end: Int) -> Bool {
    var position = previousEnd
    guard skipWhitespace(&position) else { return false }
    var separator: UInt8 = 0
    if input[position] == comma || input[position] == colon {
      separator = input[position]
      position += 1
      guard skipWhitespace(&position) else { return false }
    }
    if !copying {
      text.count = 0
      text.append(input + documentStart, count: previousEnd - documentStart)
      copying = true
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
            ? "a form feed is not JSON whitespace" : "a vertical tab is not JSON whitespace"
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

  /// A scalar value: null, boolean, number or string (`string` holds yajl's decoded text).
  @inline(__always)
  mutating func scalar(_ kind: ValueKind, string: UnsafePointer<UInt8>? = nil, count: Int = 0)
    -> Bool
  {
    guard locateToken() else { return false }
    let depth = frames.count
    if depth <= documentDepth {
      if depth < documentDepth { return listFramingBroken(found: kind) }
      problems.append(notAnObjectProblem(kind))
      return endDocument(inputEnd: previousEnd - documentStart)
    }
    let parent = frames.pointer(at: depth - 1)
    if parent.pointee.isArray {
      parent.pointee.count += 1
    } else if parent.pointee.pendingKey != .other {
      memberValue(
        parent, kind: kind, value: Span(start: tokenStart, end: tokenEnd), string: string,
        count: count, child: nil)
    }
    return true
  }

  /// `{` or `[`.
  @inline(__always)
  mutating func open(isArray: Bool) -> Bool {
    guard locateToken() else { return false }
    let depth = frames.count
    var role: Role
    if depth > documentDepth {
      let parent = frames.pointer(at: depth - 1)
      if parent.pointee.isArray { parent.pointee.count += 1 }
      role = childRole(of: parent.pointee, isArray: isArray)
    } else if depth == documentDepth {
      if isArray {
        problems.append(notAnObjectProblem(.array))
        role = .inert
      } else {
        documentIsObject = true
        role = .document
      }
    } else {
      // List framing, outside the list.
      guard isArray, !listClosed else { return listFramingBroken(found: isArray ? .array : .object) }
      role = .list
      openListOutput()
    }
    frames.push(
      Frame(
        role: role, isArray: isArray, start: tokenStart,
        inputStart: previousEnd - 1 - documentStart,
        exclusionsStart: exclusions.count, blobsStart: blobs.count))
    return true
  }

  /// `}` or `]`.
  @inline(__always)
  mutating func close() -> Bool {
    guard locateToken() else { return false }
    let frame = frames.pop()
    let depth = frames.count
    if depth < documentDepth {
      listClosed = true
      return true
    }
    if frame.role == .candidate {
      if frame.isBlob {
        recordBlob(frame)
      } else {
        exclusions.truncate(to: frame.exclusionsStart)
      }
    }
    if depth == documentDepth {
      return endDocument(inputEnd: previousEnd - documentStart)
    }
    let parent = frames.pointer(at: depth - 1)
    if !parent.pointee.isArray && parent.pointee.pendingKey != .other {
      memberValue(
        parent, kind: frame.isArray ? .array : .object,
        value: Span(start: frame.start, end: tokenEnd), string: nil, count: 0, child: frame)
    }
    return true
  }

  /// An object key (`key` is yajl's decoded text).
  @inline(__always)
  mutating func key(_ key: UnsafePointer<UInt8>, count: Int) -> Bool {
    guard locateToken() else { return false }
    let frame = frames.pointer(at: frames.count - 1)
    frame.pointee.count += 1
    frame.pointee.key = Span(start: tokenStart, end: tokenEnd)
    let pending = classify(key, count: count, in: frame.pointee.role)
    frame.pointee.pendingKey = pending
    if pending == .attachments { attachmentsKeyInput = tokenInputStart - documentStart }
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

  /// Which rule, if any, cares about a member with this (decoded) key.
  @inline(__always)
  func classify(_ key: UnsafePointer<UInt8>, count: Int, in role: Role) -> MemberKey {
    switch role {
    case .candidate:
      switch count {
      case 5 where equals(key, "@type"): return .type
      case 6:
        if equals(key, "digest") { return .digest }
        if equals(key, "length") { return needsPointers ? .length : .other }
        if equals(key, "revpos") { return options.naming == .litecore ? .revpos : .other }
        return .other
      case 4 where equals(key, "stub"): return options.naming == .litecore ? .stub : .other
      case 12 where equals(key, "content_type"): return needsPointers ? .contentType : .other
      default: return .other
      }
    case .document:
      switch count {
      case 12 where equals(key, "_attachments"): return .attachments
      case 3 where equals(key, "_id"): return .id
      case 4 where equals(key, "_rev"): return .rev
      default: return .other
      }
    case .attachments:
      return .entry
    case .entry:
      switch count {
      case 6:
        if equals(key, "digest") { return .digest }
        if equals(key, "length") { return needsPointers ? .length : .other }
        return .other
      case 12 where equals(key, "content_type"): return needsPointers ? .contentType : .other
      default: return .other
      }
    case .array, .inert, .list:
      return .other
    }
  }

  @inline(__always)
  func equals(_ bytes: UnsafePointer<UInt8>, _ literal: StaticString) -> Bool {
    memcmp(bytes, literal.utf8Start, literal.utf8CodeUnitCount) == 0
  }

  /// A value of a member whose key a rule cares about has ended.
  mutating func memberValue(
    _ parent: UnsafeMutablePointer<Frame>, kind: ValueKind, value: Span,
    string: UnsafePointer<UInt8>?, count: Int, child: Frame?
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
      entries.push(
        LegacyEntry(
          member: member, key: parent.pointee.key, value: value, isObject: kind == .object,
          isSynthesized: (options.mode == .push || options.mode == .check) && isSynthesizedName(parent.pointee.key),
          digest: child?.digest ?? .none, digestRaw: child?.digestRaw ?? .none,
          length: child?.length ?? .none, contentType: child?.contentType ?? .none))
    }
  }

  /// Whether the key token `key` (raw, quoted) decodes to a name push itself makes in the
  /// current naming: `$.…` or `$[…` for `jsonpath`, `blob_…` for `litecore`.
  func isSynthesizedName(_ key: Span) -> Bool {
    let token = UnsafeBufferPointer(start: documentText + key.start, count: key.count)
    var prefix: [UInt8]
    if token.prefix(8).contains(UInt8(ascii: "\\")) {
      prefix = JSONText.decodeString(token)
    } else {
      prefix = Array(token.dropFirst().dropLast())
    }
    switch options.naming {
    case .jsonpath:
      return prefix.count >= 2 && prefix[0] == UInt8(ascii: "$")
        && (prefix[1] == UInt8(ascii: ".") || prefix[1] == UInt8(ascii: "["))
    case .litecore:
      return prefix.starts(with: "blob_".utf8)
    }
  }

  /// A blob reference has closed: keep it, with the members its entry leaves out, and drop any
  /// reference found inside it before it was known to be a blob.
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
      pointer: .none)
    if needsNames {
      let litecore = options.mode == .push && options.naming == .litecore
      if litecore { names.append("blob_") }
      reference.name = appendPath(pointer: litecore)
      if litecore { reference.name.start -= 5 }
      if needsPointers { reference.pointer = appendPath(pointer: true) }
    }
    blobs.push(reference)
  }

  /// Appends the current path (the open containers' keys and indexes) to `names` as a `jsonpath`
  /// name or as a JSON Pointer, and returns where it is.
  mutating func appendPath(pointer: Bool) -> Span {
    let start = names.count
    if !pointer { names.append(UInt8(ascii: "$")) }
    let base = documentText
    for depth in documentDepth..<frames.count {
      let frame = frames[depth]
      if frame.isArray {
        if pointer {
          names.append(UInt8(ascii: "/"))
          names.appendDecimal(frame.count - 1)
        } else {
          names.append(UInt8(ascii: "["))
          names.appendDecimal(frame.count - 1)
          names.append(UInt8(ascii: "]"))
        }
      } else {
        scratch.count = 0
        JSONText.decodeString(
          UnsafeBufferPointer(start: base + frame.key.start, count: frame.key.count),
          into: &scratch)
        if pointer {
          names.append(UInt8(ascii: "/"))
          JSONText.appendPointerKey(scratch.bytes, to: &names)
        } else {
          names.append(UInt8(ascii: "."))
          JSONText.appendPathKey(scratch.bytes, to: &names)
        }
      }
    }
    return Span(start: start, end: names.count)
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
      message = "with --format list the input must be one JSON array of documents; it is \(kind.article)"
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
