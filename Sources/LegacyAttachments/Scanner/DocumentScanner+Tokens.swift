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
      switch kind {
      case .null: locateToken(length: 4)
      case .boolean: locateToken(length: 0)
      default: locateToken(text: text, count: count, quoted: kind == .string)
      }
    guard let token = located else { return .stop }
    let depth = frames.count
    guard depth > 0 else { return outside(.scalar(kind)) }
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

  /// `{` or `[`.
  @inline(__always)
  mutating func open(isArray: Bool) -> TokenOutcome {
    guard let token = locateToken(length: 1) else { return .stop }
    let depth = frames.count
    guard depth > 0 else { return outside(.open(isArray: isArray)) }
    let parent = frames.base + (depth &- 1)
    if parent.pointee.isArray { parent.pointee.count &+= 1 }
    pushFrame(
      role: childRole(of: parent.pointee, isArray: isArray), isArray: isArray, start: token.start)
    return .next
  }

  // MARK: The quick paths (the callbacks try them first)
  //
  // Each handles the common case of its token, a token inside a compact document, whole or not
  // at all: it returns false, having changed nothing, when the general path must take the
  // token. None makes a call except on its one rare branch (a member a rule cares about, a
  // blob), so that a callback needs no stack frame, or a small one, for them.

  /// ``scalar(_:text:count:)``'s quick path: a scalar inside a compact document.
  @inline(__always)
  mutating func scalarQuickly(_ kind: ValueKind, text: UnsafePointer<UInt8>? = nil, count: Int = 0)
    -> Bool
  {
    guard let position = compactTokenStart() else { return false }
    let end: StreamOffset
    switch kind {
    case .null: end = fixedTokenEnd(from: position, length: 4)
    case .boolean: end = fixedTokenEnd(from: position, length: 0)
    default:
      guard let textEnd = inputTokenEnd(text: text, count: count, quoted: kind == .string)
      else { return false }
      end = textEnd
    }
    let parent = frames.base + (frames.count &- 1)
    if parent.pointee.isArray {
      parent.pointee.count &+= 1
      tokenLocated(at: position, end: end)
    } else if parent.pointee.pendingKey == .other {
      tokenLocated(at: position, end: end)
    } else {
      // The one call: only on this branch does the callback need a stack frame.
      memberValue(
        parent, kind: kind, value: tokenLocated(at: position, end: end),
        string: kind == .string ? text : nil, count: count, child: nil)
    }
    return true
  }

  /// ``open(isArray:)``'s quick path: a container inside a document, with room for its frame.
  @inline(__always)
  mutating func openQuickly(isArray: Bool) -> Bool {
    guard let position = compactTokenStart(), frames.hasRoom else { return false }
    let token = tokenLocated(at: position, end: fixedTokenEnd(from: position, length: 1))
    let parent = frames.base + (frames.count &- 1)
    if parent.pointee.isArray { parent.pointee.count &+= 1 }
    frames.pushWithinCapacity(
      newFrame(
        role: childRole(of: parent.pointee, isArray: isArray), isArray: isArray,
        start: token.start))
    return true
  }

  /// ``close()``'s quick path: a container that is not the root.
  @inline(__always)
  mutating func closeQuickly() -> Bool {
    guard let position = compactTokenStart(), frames.count > 1 else { return false }
    let token = tokenLocated(at: position, end: fixedTokenEnd(from: position, length: 1))
    frames.truncate(to: frames.count &- 1)
    // The popped frame's memory stays valid until the next push.
    let frame = frames.base + frames.count
    closed(frame, token: token, parent: frame - 1)
    return true
  }

  /// The container of `frame` has just closed with `token`, inside `parent`: a blob is
  /// recorded, and the value goes to the member that holds it.
  @inline(__always)
  mutating func closed(
    _ frame: UnsafeMutablePointer<Frame>, token: Span, parent: UnsafeMutablePointer<Frame>
  ) {
    if frame.pointee.role == .candidate {
      if frame.pointee.isBlob {
        recordBlob(frame)
      } else {
        exclusions.truncate(to: frame.pointee.exclusionsStart)
      }
    }
    if !parent.pointee.isArray && parent.pointee.pendingKey != .other {
      memberValue(
        parent, kind: frame.pointee.isArray ? .array : .object,
        value: Span(start: frame.pointee.start, end: token.end), string: nil, count: 0,
        child: frame)
    }
  }

  @inline(__always)
  mutating func pushFrame(role: Role, isArray: Bool, start: Int) {
    frames.push(newFrame(role: role, isArray: isArray, start: start))
  }

  /// The frame of a container that opens with the current token.
  @inline(__always)
  func newFrame(role: Role, isArray: Bool, start: Int) -> Frame {
    Frame(
      role: role, isArray: isArray, start: start, inputStart: tokenInputStart,
      exclusionsStart: exclusions.count, blobsStart: document.blobs.count)
  }

  /// `}` or `]`.
  @inline(__always)
  mutating func close() -> TokenOutcome {
    guard let token = locateToken(length: 1) else { return .stop }
    guard frames.count > 0 else { return outside(.close) }
    frames.truncate(to: frames.count &- 1)
    let depth = frames.count
    // The popped frame's memory stays valid until the next push.
    let frame = frames.base + depth
    if depth > 0 {
      closed(frame, token: token, parent: frame - 1)
      return .next
    }
    // The root: a document, a rejected one, a container of the envelope or a run.
    if frame.pointee.role == .members {
      return endMemberRun(before: token, kind: .close, separator: 0, key: nil, count: 0)
    }
    return endDocument()
  }

  /// An object key (`key` is yajl's decoded text).
  @inline(__always)
  mutating func key(_ key: UnsafePointer<UInt8>, count: Int) -> TokenOutcome {
    guard let token = locateToken(text: key, count: count, quoted: true) else { return .stop }
    guard frames.count > 0 else {
      envelopeToken.key = UnsafeBufferPointer(start: key, count: count)
      return outside(.key)
    }
    let frame = frames.base + (frames.count &- 1)
    var pending = settings.memberRules[frame.pointee.role, KeyWord.identify(key, count: count)]
    if pending == .runMember {
      frame.pointee.count &+= 1
      frame.pointee.key = token
      frame.pointee.pendingKey = .other
      return memberOfRun(key, count: count, token: token)
    }
    if pending == .intoCandidate { pending = isUpgradeInto(key, count: count) ? .into : .other }
    keyLocated(token, in: frame, meaning: pending)
    return .next
  }

  /// The key callback's common case, done whole or not at all: a key inside a compact
  /// document, whose meaning its key word settles (not a run's member, nor a candidate for
  /// `--into`). Returns false, having changed nothing, when ``key(_:count:)`` must take it.
  ///
  /// It makes no call, so that the callback needs no stack frame for it.
  @inline(__always)
  mutating func keyQuickly(_ key: UnsafePointer<UInt8>, count: Int) -> Bool {
    guard let position = compactTokenStart(),
      let end = inputTokenEnd(text: key, count: count, quoted: true)
    else { return false }
    let frame = frames.base + (frames.count &- 1)
    let pending = settings.memberRules[frame.pointee.role, KeyWord.identify(key, count: count)]
    guard !pending.needsTheWholeKey else { return false }
    keyLocated(tokenLocated(at: position, end: end), in: frame, meaning: pending)
    return true
  }

  /// Records the key `token` of the innermost object, `frame`, which means `pending`.
  @inline(__always)
  mutating func keyLocated(
    _ token: Span, in frame: UnsafeMutablePointer<Frame>, meaning pending: MemberKey
  ) {
    frame.pointee.count &+= 1
    frame.pointee.key = token
    if pending == .entry {
      keyOffsets.entry = tokenInputStart
    } else if pending == .attachments {
      keyOffsets.attachments = tokenInputStart
    }
    frame.pointee.pendingKey = pending
  }

  /// Whether a key (decoded) is `--into`'s property.
  @inline(never)
  func isUpgradeInto(_ key: UnsafePointer<UInt8>, count: Int) -> Bool {
    guard let into = settings.upgradeInto, into.count == count else { return false }
    return into.withUnsafeBufferPointer { count == 0 || memcmp($0.baseAddress!, key, count) == 0 }
  }

  // MARK: Runs of envelope members

  /// A key of the object a run of envelope members is reading: the run goes on, or, at the
  /// member the path names, ends before it.
  @inline(never)
  mutating func memberOfRun(_ key: UnsafePointer<UInt8>, count: Int, token: Span) -> TokenOutcome {
    guard runStop.count == count, count == 0 || memcmp(runStop.baseAddress!, key, count) == 0
    else { return .next }
    return endMemberRun(
      before: token, kind: .key, separator: UInt8(ascii: ","), key: key, count: count)
  }

  /// Ends the run of envelope members before `token` (and its separator), which becomes the
  /// framer's next token.
  @inline(never)
  mutating func endMemberRun(
    before token: Span, kind: EnvelopeToken.Kind, separator: UInt8, key: UnsafePointer<UInt8>?,
    count: Int
  ) -> TokenOutcome {
    let end = token.start - (separator == 0 ? 0 : 1)
    document.end = document.textIsInput ? document.start + end : tokenInputStart
    tokenEnd = end
    envelopeToken = EnvelopeToken(
      kind: kind, separator: separator, start: tokenInputStart, end: previousEnd,
      key: UnsafeBufferPointer(start: key, count: count), endsRun: kind == .key)
    return .runEnded
  }

  // MARK: Outside the documents

  /// A token outside the documents: the framer decides what it is.
  @inline(never)
  mutating func outside(_ kind: EnvelopeToken.Kind) -> TokenOutcome {
    envelopeToken.kind = kind
    return .envelope
  }

  /// Takes the framer's verdict on ``envelopeToken``: a document starts with it, or it was
  /// the envelope's, or the framing is broken.
  @inline(never)
  mutating func apply(_ verdict: EnvelopeVerdict) -> TokenOutcome {
    switch verdict {
    case .envelope:
      return .next
    case .framingBroken(let problem):
      interruption = .framing(offset: tokenInputStart, message: problem.message)
      return .stop
    case .members(let stopAt):
      // A run starts with this key: its compact text is the key and what follows.
      beginDocument(at: tokenInputStart)
      tokenEnd = envelopeToken.end - tokenInputStart
      document.isEnvelopeValue = true
      document.isMemberRun = true
      document.rootKind = .object
      runStop = stopAt
      pushFrame(role: .members, isArray: false, start: 0)
      frames[0].count = 1
      frames[0].key = Span(start: 0, end: tokenEnd)
      fastPath = !copying
      return .next
    case .copy:
      guard case .open(let isArray) = envelopeToken.kind else {
        preconditionFailure("only a container is read through")
      }
      beginDocument(at: tokenInputStart)
      tokenEnd = envelopeToken.end - tokenInputStart
      document.isEnvelopeValue = true
      document.rootKind = isArray ? .array : .object
      pushFrame(role: .inert, isArray: isArray, start: 0)
      fastPath = !copying
      return .next
    case .document:
      beginDocument(at: tokenInputStart)
      tokenEnd = envelopeToken.end - tokenInputStart
      switch envelopeToken.kind {
      case .open(let isArray):
        openRoot(isArray: isArray)
        return .next
      case .scalar(let kind):
        document.rootKind = kind
        document.problems.append(notAnObjectProblem(kind))
        return endDocument()
      case .close, .key:
        preconditionFailure("a document cannot start with a closing bracket or a key")
      }
    }
  }

  /// `{` or `[` between documents when every value is a document (`lines`, path `.`): a
  /// document starts with it, as on the framer's ``EnvelopeVerdict/document``, without the
  /// round trip through the framer.
  @inline(never)
  mutating func openDocument(isArray: Bool) -> TokenOutcome {
    var position = previousEnd
    guard let separator = skipToToken(&position) else { return .stop }
    outsideTokenLocated(
      at: position, end: fixedTokenEnd(from: position, length: 1), separator: separator)
    envelopeToken.kind = .open(isArray: isArray)
    beginDocument(at: tokenInputStart)
    tokenEnd = 1
    openRoot(isArray: isArray)
    return .next
  }

  /// The root container of the document just begun: an object is a document, an array is not.
  @inline(__always)
  private mutating func openRoot(isArray: Bool) {
    if isArray {
      document.rootKind = .array
      document.problems.append(notAnObjectProblem(.array))
      pushFrame(role: .inert, isArray: true, start: 0)
    } else {
      document.rootKind = .object
      pushFrame(role: .document, isArray: false, start: 0)
    }
    fastPath = !copying
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
    case .entry, .inert, .members:
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
    case .other, .runMember, .intoCandidate:
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
      if settings.movesBlobData && parent.pointee.role == .candidate { exclusions.push(member) }
    case .encoding:
      parent.pointee.members.encoding = value
    case .follows:
      parent.pointee.members.follows = kind == .boolean && value.count == 4
    case .into:
      document.into.count += 1
      if document.into.count == 1 {
        document.into.member = member
        document.into.value = value
        document.into.kind = kind
      }
    case .stub, .revpos:
      stubOrRevpos(parent, kind: kind, value: value, member: member)
    case .id:
      document.identifier = kind == .string ? value : .none
    case .rev:
      document.revision = kind == .string ? value : .none
    case .attachments:
      attachmentsValue(member: member, value: value, kind: kind)
    case .entry:
      document.entries.push(
        LegacyEntry(
          member: member, key: parent.pointee.key, keyOffset: keyOffsets.entry, value: value,
          kind: kind, members: child?.pointee.members ?? AttachmentMembers()))
    }
  }

  /// `stub` or `revpos`: an entry's, for `--check`; elsewhere, left out of a blob's entry.
  private mutating func stubOrRevpos(
    _ parent: UnsafeMutablePointer<Frame>, kind: ValueKind, value: Span, member: Span
  ) {
    guard parent.pointee.role == .entry else {
      exclusions.push(member)
      return
    }
    if parent.pointee.pendingKey == .stub {
      parent.pointee.members.hasStub = true
      parent.pointee.members.isStub = kind == .boolean && value.count == 4
    } else {
      parent.pointee.members.revpos = value
    }
  }

  /// The document's `_attachments` (a second one is an error).
  private mutating func attachmentsValue(member: Span, value: Span, kind: ValueKind) {
    document.attachments.count += 1
    if document.attachments.count == 1 {
      document.attachments.member = member
      document.attachments.value = value
      document.attachments.kind = kind
      document.attachments.keyOffset = keyOffsets.attachments
    } else if document.attachments.count == 2 {
      document.problems.append(
        Problem(
          kind: .duplicateAttachments, severity: .error, offset: keyOffsets.attachments,
          message: Messages.duplicateAttachments, pointer: "/_attachments"))
    }
  }

  func notAnObjectProblem(_ kind: ValueKind) -> Problem {
    Problem(
      kind: .notAnObject, severity: .error, offset: document.start,
      message: Messages.notAnObject(kind, suggestListFormat: settings.suggestsListFormat),
      pointer: "",
      advice: kind == .array && settings.suggestsListFormat ? .listFraming : nil)
  }
}

extension DocumentScanner {
  /// A blob reference has closed: keep it, with the members its entry leaves out and the names
  /// asked for, and drop any reference found inside it before it was known to be a blob.
  @inline(never)
  mutating func recordBlob(_ frame: UnsafeMutablePointer<Frame>) {
    if document.blobs.count > frame.pointee.blobsStart {
      let first = document.blobs[frame.pointee.blobsStart]
      document.blobExclusions.truncate(to: first.exclusions.start)
      document.names.count = first.name.start
      document.blobs.truncate(to: frame.pointee.blobsStart)
    }
    let excludedStart = document.blobExclusions.count
    for index in frame.pointee.exclusionsStart..<exclusions.count {
      document.blobExclusions.push(exclusions[index])
    }
    exclusions.truncate(to: frame.pointee.exclusionsStart)
    let noName = Span(start: document.names.count, end: document.names.count)
    var reference = BlobReference(
      span: Span(start: frame.pointee.start, end: tokenEnd), inputStart: frame.pointee.inputStart,
      exclusions: Span(start: excludedStart, end: document.blobExclusions.count),
      members: frame.pointee.members, name: noName, pointer: .none, nameIsPlain: false)
    if let naming = settings.nameRequest.naming {
      let nameStart = document.names.count
      document.names.append(naming.prefix)
      let path = appendPath(style: naming.style)
      reference.name = Span(start: nameStart, end: path.span.end)
      reference.nameIsPlain = path.isPlain
      if settings.nameRequest.pointers {
        reference.pointer = naming.style == .pointer ? path.span : appendPath(style: .pointer).span
      }
    }
    document.blobs.push(reference)
  }

  /// Appends the path of the open containers (their current keys and indexes) to the document's
  /// names in `style`, and returns where it is and whether it is plain: whether it needs no
  /// escape as a JSON string (so that it can be written between quotes as it is).
  mutating func appendPath(style: PathStyle) -> (span: Span, isPlain: Bool) {
    let start = document.names.count
    var isPlain = true
    let base = documentText
    for depth in 0..<frames.count {
      // Through the pointer: a copy of the whole frame per step costs more than the step.
      let frame = frames.base + depth
      if frame.pointee.isArray {
        style.appendIndexStep(frame.pointee.count - 1, to: &document.names)
        continue
      }
      let key = frame.pointee.key
      let content = base + key.start + 1
      let length = key.count - 2
      if style.plainPrefixLength(content, count: length) == length {
        // The raw key text is the decoded key, has nothing to escape in the step, and (being
        // strictly valid UTF-8 with no backslash, quote or control character) none as a string.
        document.names.append(style.keySeparator)
        document.names.append(content, count: length)
        continue
      }
      isPlain = false
      let token = UnsafeBufferPointer(start: base + key.start, count: key.count)
      if let unescaped = JSONText.unescapedContent(token) {
        style.appendKeyStep(unescaped, to: &document.names)
      } else {
        scratch.count = 0
        JSONText.decodeString(token, into: &scratch)
        style.appendKeyStep(scratch.bytes, to: &document.names)
      }
    }
    return (Span(start: start, end: document.names.count), isPlain)
  }
}
