import Glibc

private let blobWord: StaticString = "blob"

extension DocumentScanner {
  // MARK: Tokens (called by the yajl callbacks)

  /// A scalar value: null, boolean, number or string. `text` is what yajl hands over for a
  /// number (its text as written) or a string (its decoded text), else nil.
  @inline(__always)
  mutating func scalar(_ kind: ValueKind, text: UnsafePointer<UInt8>? = nil, count: Int = 0)
    -> TokenOutcome
  {
    let located =
      text == nil ? locateToken() : locateToken(text: text, count: count, quoted: kind == .string)
    guard let token = located else { return .stop }
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
      return .next
    }
    return scalarDocument(kind)
  }

  /// A scalar where a document (or, with list framing, the list) belongs.
  @inline(never)
  mutating func scalarDocument(_ kind: ValueKind) -> TokenOutcome {
    if frames.count < documentDepth { return listFramingBroken(found: kind) }
    document.rootKind = kind
    document.problems.append(notAnObjectProblem(kind))
    return endDocument()
  }

  /// `{` or `[`.
  @inline(__always)
  mutating func open(isArray: Bool) -> TokenOutcome {
    guard let token = locateToken() else { return .stop }
    let depth = frames.count
    guard depth > documentDepth else { return openDocument(isArray: isArray) }
    let parent = frames.base + (depth &- 1)
    if parent.pointee.isArray { parent.pointee.count &+= 1 }
    pushFrame(
      role: childRole(of: parent.pointee, isArray: isArray), isArray: isArray, start: token.start)
    return .next
  }

  @inline(__always)
  mutating func pushFrame(role: Role, isArray: Bool, start: Int) {
    frames.push(
      Frame(
        role: role, isArray: isArray, start: start, inputStart: tokenInputStart,
        exclusionsStart: exclusions.count, blobsStart: document.blobs.count))
  }

  /// `{` or `[` where a document (or, with list framing, the list) belongs.
  @inline(never)
  mutating func openDocument(isArray: Bool) -> TokenOutcome {
    if frames.count == documentDepth {
      if isArray {
        document.rootKind = .array
        document.problems.append(notAnObjectProblem(.array))
        pushFrame(role: .inert, isArray: true, start: tokenStart)
      } else {
        document.rootKind = .object
        pushFrame(role: .document, isArray: false, start: tokenStart)
      }
      fastPath = !copying
      return .next
    }
    // List framing, outside the list.
    guard isArray, !listClosed else { return listFramingBroken(found: isArray ? .array : .object) }
    pushFrame(role: .list, isArray: true, start: tokenStart)
    return .next
  }

  /// `}` or `]`.
  @inline(__always)
  mutating func close() -> TokenOutcome {
    guard let token = locateToken() else { return .stop }
    frames.truncate(to: frames.count &- 1)
    let depth = frames.count
    // The popped frame's memory stays valid until the next push.
    let frame = frames.base + depth
    if frame.pointee.role == .candidate {
      if frame.pointee.isBlob {
        recordBlob(frame)
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
      return .next
    }
    return closeDocument()
  }

  @inline(never)
  mutating func closeDocument() -> TokenOutcome {
    if frames.count < documentDepth {
      listClosed = true
      return .next
    }
    return endDocument()
  }

  /// An object key (`key` is yajl's decoded text).
  @inline(__always)
  mutating func key(_ key: UnsafePointer<UInt8>, count: Int) -> TokenOutcome {
    guard let token = locateToken(text: key, count: count, quoted: true) else { return .stop }
    let frame = frames.base + (frames.count &- 1)
    frame.pointee.count &+= 1
    frame.pointee.key = token
    let pending = memberRules[frame.pointee.role, KeyWord.identify(key, count: count)]
    if pending == .entry {
      entryKeyOffset = tokenInputStart
    } else if pending == .attachments {
      attachmentsKeyOffset = tokenInputStart
    }
    frame.pointee.pendingKey = pending
    return .next
  }

  /// The document has ended with the current token.
  @inline(__always)
  private mutating func endDocument() -> TokenOutcome {
    document.end = previousEnd
    return .documentEnded
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
      if kind == .string && count == 4, let string, memcmp(string, blobWord.utf8Start, 4) == 0 {
        parent.pointee.isBlob = true
      }
    case .digest:
      parent.pointee.members.digest = value
      parent.pointee.members.digestIsString = kind == .string
    case .length:
      parent.pointee.members.length = value
    case .contentType:
      parent.pointee.members.contentType = value
    case .data:
      parent.pointee.members.data = value
      parent.pointee.members.dataKind = kind
    case .stub, .revpos:
      exclusions.push(member)
    case .id:
      document.identifier = kind == .string ? value : .none
    case .rev:
      document.revision = kind == .string ? value : .none
    case .attachments:
      document.attachments.count += 1
      if document.attachments.count == 1 {
        document.attachments.member = member
        document.attachments.value = value
        document.attachments.kind = kind
        document.attachments.keyOffset = attachmentsKeyOffset
      } else if document.attachments.count == 2 {
        document.problems.append(
          Problem(
            kind: .duplicateAttachments, severity: .error, offset: attachmentsKeyOffset,
            message: Messages.duplicateAttachments, pointer: "/_attachments"))
      }
    case .entry:
      document.entries.push(
        LegacyEntry(
          member: member, key: parent.pointee.key, keyOffset: entryKeyOffset, value: value,
          isObject: kind == .object, members: child?.pointee.members ?? AttachmentMembers()))
    }
  }

  func notAnObjectProblem(_ kind: ValueKind) -> Problem {
    Problem(
      kind: .notAnObject, severity: .error, offset: document.start,
      message: Messages.notAnObject(kind, suggestListFormat: documentDepth == 0), pointer: "")
  }

  /// With `--format list`, the input must be exactly one array.
  mutating func listFramingBroken(found kind: ValueKind) -> TokenOutcome {
    interruption = .framing(
      offset: tokenInputStart,
      message: listClosed ? Messages.listMoreFollows : Messages.listNotArray(kind))
    return .stop
  }
}
