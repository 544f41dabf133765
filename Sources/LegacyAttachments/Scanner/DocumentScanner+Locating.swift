internal import CYajl

private let comma = UInt8(ascii: ",")
private let colon = UInt8(ascii: ":")

extension DocumentScanner {
  /// Finds the token yajl just reported: sets ``tokenStart``/``tokenEnd`` in compact-text
  /// coordinates and, when copying, appends it (with its separator) to ``text``. Starts a
  /// document when the token is a document's first. Returns the token's span (the same two
  /// offsets, handed over in registers: reading back the two fields just stored as one 16-byte
  /// value stalls store forwarding), or nil when the parse must stop.
  ///
  /// The inline part handles the common case, a token inside a compact document; everything
  /// else (whitespace, copying, document boundaries) is out of line.
  @inline(__always)
  mutating func locateToken() -> Span? {
    locateToken(end: chunkStart + yajl_get_bytes_consumed(handle))
  }

  /// ``locateToken()`` for a token whose text yajl hands over: a string or a key (`quoted`, the
  /// text decoded) or a number (the text as written). When that text is the input itself (no
  /// escapes, and the token not split between pieces), the token's end follows from where it
  /// lies, without asking yajl.
  @inline(__always)
  mutating func locateToken(text: UnsafePointer<UInt8>?, count: Int, quoted: Bool) -> Span? {
    if let text {
      let offset = view.offset(of: text)
      if offset >= chunkStart && offset < chunkEnd {
        return locateToken(end: offset + count + (quoted ? 1 : 0))
      }
    }
    return locateToken()
  }

  /// ``locateToken()`` for a token ending at `end`.
  @inline(__always)
  mutating func locateToken(end: StreamOffset) -> Span? {
    if fastPath {
      var position = previousEnd
      var byte = view[position]
      if byte == comma || byte == colon {
        position += 1
        byte = view[position]
      }
      if byte > 0x20 {
        let token = Span(start: position - document.start, end: end - document.start)
        tokenInputStart = position
        tokenStart = token.start
        tokenEnd = token.end
        previousEnd = end
        return token
      }
    }
    return locateSlowly(end: end) ? Span(start: tokenStart, end: tokenEnd) : nil
  }

  /// The out-of-line part of ``locateToken(end:)``.
  @inline(never)
  mutating func locateSlowly(end: StreamOffset) -> Bool {
    if frames.count == 0 { return locateOutsideDocument(end: end) }
    var position = previousEnd
    guard skipWhitespace(&position) else { return false }
    var separator: UInt8 = 0
    if view[position] == comma || view[position] == colon {
      separator = view[position]
      position += 1
      guard skipWhitespace(&position) else { return false }
    }
    if !copying {
      // Whitespace inside the document: from here on its compact text is copied.
      text.count = 0
      text.append(view.pointer(at: document.start), count: previousEnd - document.start)
      copying = true
      fastPath = false
      document.textIsInput = false
    }
    if separator != 0 { text.append(separator) }
    tokenInputStart = position
    tokenStart = text.count
    text.append(view.pointer(at: position), count: end - position)
    tokenEnd = text.count
    previousEnd = end
    return true
  }

  /// Skips JSON whitespace. yajl also takes form feed and vertical tab as whitespace; JSON does
  /// not, so they stop the parse as malformed input.
  mutating func skipWhitespace(_ position: inout StreamOffset) -> Bool {
    while true {
      switch view[position] {
      case 0x20, 0x0A, 0x0D, 0x09: position += 1
      case 0x0C:
        interruption = .lexical(offset: position, message: Messages.formFeed)
        return false
      case 0x0B:
        interruption = .lexical(offset: position, message: Messages.verticalTab)
        return false
      default: return true
      }
    }
  }

  /// Locates a token outside the documents, for the framer (``envelopeToken``): its separator
  /// and where it is. If the framer says a document starts with it, ``apply(_:)`` begins one.
  @inline(never)
  mutating func locateOutsideDocument(end: StreamOffset) -> Bool {
    var position = previousEnd
    guard skipWhitespace(&position) else { return false }
    var separator: UInt8 = 0
    if view[position] == comma || view[position] == colon {
      separator = view[position]
      position += 1
      guard skipWhitespace(&position) else { return false }
    }
    previousEnd = end
    tokenInputStart = position
    tokenStart = 0
    tokenEnd = 0
    envelopeToken.separator = separator
    envelopeToken.endsRun = false
    envelopeToken.start = position
    envelopeToken.end = end
    return true
  }
}
