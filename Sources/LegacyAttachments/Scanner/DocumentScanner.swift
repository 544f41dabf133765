internal import CYajl

/// What the scanner asks of its caller after a token.
enum TokenOutcome: BitwiseCopyable {
  /// Go on with the next token.
  case next
  /// A document has just ended: its facts are in ``DocumentScanner/document``.
  case documentEnded
  /// Stop the parse; ``DocumentScanner/interruption`` says why.
  case stop
  /// A run of envelope members (``Role/members``) has ended before the current token, which is
  /// outside the documents: the run's text goes to the handler, then the token (in
  /// ``DocumentScanner/envelopeToken``) to the framer.
  case runEnded
  /// The token is outside the documents: ``DocumentScanner/envelopeToken`` is it, located, for
  /// the framer; ``DocumentScanner/apply(_:)`` takes its verdict.
  case envelope
}

/// Why the scanner stopped a parse by itself.
enum ScanInterruption {
  /// yajl accepted something JSON does not (a form feed or vertical tab as whitespace).
  case lexical(offset: StreamOffset, message: String)
  /// The input is not framed as it must be (with list framing: not one array).
  case framing(offset: StreamOffset, message: String)
  /// A skimmed document was not what it seemed (``DocumentSkim``): the engine parses it again,
  /// from its first byte, with the scanner.
  case rescan(documentStart: StreamOffset)
}

/// Which names blobs get while they are scanned.
struct NameRequest: BitwiseCopyable {
  /// The naming of each blob's ``BlobReference/name``, or nil when no mode needs one (pull).
  var naming: AttachmentNaming?
  /// Whether each blob also gets its JSON Pointer (list, check).
  var pointers: Bool

  init(options: ConversionOptions) {
    switch options.mode {
    case .push: naming = AttachmentNaming(options.naming)
    case .pull: naming = options.updateBlobs ? AttachmentNaming(.jsonpath) : nil
    case .list: naming = AttachmentNaming(.jsonpath)
    case .check: naming = AttachmentNaming(options.naming)
    case .upgrade: naming = AttachmentNaming(.jsonpath)
    }
    pointers =
      options.mode == .list || options.mode == .check || options.mode == .upgrade
      || options.updateBlobs
  }
}

/// What the options ask of the scanner, decided once for a run.
struct ScanSettings: ~Copyable {
  /// Whether a top-level array gets the hint to use `--format list` (`lines`, path `.`).
  let suggestsListFormat: Bool
  let nameRequest: NameRequest
  /// What each key means where it is.
  let memberRules: MemberRules
  /// `--upgrade`: the top-level key the new blobs go in (decoded UTF-8).
  let upgradeInto: [UInt8]?
  /// Push with `--blobs`: a blob's inline `data` is left out of its entry's copied members, for
  /// the entry writes it last.
  let movesBlobData: Bool

  init(options: ConversionOptions) {
    suggestsListFormat = options.framing == .lines && options.documents.steps.isEmpty
    nameRequest = NameRequest(options: options)
    memberRules = MemberRules(options: options)
    upgradeInto = options.mode == .upgrade ? Array(options.upgradeInto.utf8) : nil
    movesBlobData = options.mode == .push && options.blobs != nil
  }
}

/// The per-token stage: follows yajl's tokens through a stream of documents and produces the
/// facts of each (``ScannedDocument``).
///
/// It owns the parse position, the open containers and the document's compact text. It reads the
/// input only through the ``InputView`` of the piece being parsed (``view``), by stream offset;
/// it knows nothing of lines, modes, envelopes or output: tokens outside the documents go to the
/// framer (``TokenOutcome/envelope``), which says where documents start. yajl's callbacks (``ScanCallbacks``) call it through
/// a context pointer, so it lives at a fixed address and allocates nothing per token once its
/// buffers have grown to fit.
struct DocumentScanner: ~Copyable {
  /// What the options ask of the scan (fixed for a run).
  let settings: ScanSettings

  // MARK: Parser position (set by the driver before each piece is parsed)

  var handle: yajl_handle? = nil
  /// The input bytes of the piece being parsed (and all before it still held).
  var view: InputView
  /// The piece being parsed.
  var chunk = StreamOffset.zero..<StreamOffset.zero
  /// End of the last token seen.
  var previousEnd = StreamOffset.zero

  // MARK: The current token

  /// The end of the current token in compact-text coordinates.
  var tokenEnd = 0
  /// Where the current token starts in the input.
  var tokenInputStart = StreamOffset.zero

  // MARK: The document being scanned

  /// The document's open containers (none between documents).
  var frames = RawStack<Frame>(capacity: 64)
  /// Members of the open candidate objects left out of a blob's entry (`@type`, ...).
  var exclusions = RawStack<Span>(capacity: 16)
  private(set) var inDocument = false
  /// True while the next token is inside a document whose compact text is still the input
  /// itself: the case ``locateToken(end:)`` handles inline.
  var fastPath = false
  /// Whether the compact text is being copied into ``text`` (the input had whitespace).
  var copying = false
  var text: ByteBuffer
  /// Where the current `_attachments` key starts in the input, and the current key of one of its
  /// entries.
  var keyOffsets = (attachments: StreamOffset.zero, entry: StreamOffset.zero)
  /// The facts of the document, complete when ``TokenOutcome/documentEnded`` is returned.
  var document = ScannedDocument()
  var scratch = ByteBuffer(capacity: 256)

  /// The last token outside the documents, for the framer.
  var envelopeToken = EnvelopeToken(
    kind: .close, separator: 0, start: .zero, end: .zero,
    key: UnsafeBufferPointer(start: nil, count: 0))

  /// The member name that ends the run of envelope members being read (``Role/members``).
  var runStop = UnsafeBufferPointer<UInt8>(start: nil, count: 0)

  /// Why the last parse was stopped by the scanner, if it was.
  var interruption: ScanInterruption? = nil

  init(options: ConversionOptions, view: InputView, textCapacity: Int) {
    settings = ScanSettings(options: options)
    self.view = view
    text = ByteBuffer(capacity: textCapacity)
  }

  /// The compact text of the current document (valid until the next token).
  @inline(__always)
  var documentText: UnsafeMutablePointer<UInt8> {
    copying ? text.base : UnsafeMutablePointer(mutating: view.pointer(at: document.start))
  }

  /// The whole compact text of a document that has just ended.
  var finishedText: UnsafeBufferPointer<UInt8> {
    UnsafeBufferPointer(start: documentText, count: tokenEnd)
  }

  /// Whether the innermost container the scanner has open is an array (a run's object
  /// included); nil when it has none open (the framer may have).
  var innermostIsArray: Bool? { frames.isEmpty ? nil : frames[frames.count - 1].isArray }

  /// Where the document being scanned starts in the input, if one is open.
  var openDocumentStart: StreamOffset? { inDocument ? document.start : nil }

  /// Starts a document whose first byte is at `offset`.
  mutating func beginDocument(at offset: StreamOffset) {
    inDocument = true
    document.start = offset
    copying = false
  }

  /// Forgets the current document (after it ended or was abandoned), keeping buffers' memory.
  mutating func resetDocument() {
    closeValue()
    exclusions.removeAll()
    document.reset()
  }

  /// Forgets the open containers and the compact text of the value just handed over.
  private mutating func closeValue() {
    frames.removeAll()
    inDocument = false
    fastPath = false
    copying = false
    text.count = 0
  }

  /// Forgets a run of envelope members that has just been handed over. A run holds only inert
  /// containers, so of the document's facts only its kind and place were set.
  mutating func resetEnvelopeValue() {
    closeValue()
    document.rootKind = .null
    document.textIsInput = true
    document.isEnvelopeValue = false
    document.isMemberRun = false
  }

  /// Prepares for a new input: positions restart at 0, list framing restarts.
  mutating func restart(at offset: StreamOffset = .zero) {
    resetDocument()
    frames.removeAll()
    previousEnd = offset
    chunk = offset..<offset
    tokenInputStart = offset
    interruption = nil
  }

  /// A skimmed document (``DocumentSkim``) has ended at `end`, compact: the scanner's state is
  /// as if it had followed it.
  mutating func skimmedDocumentEnded(at end: StreamOffset) {
    tokenInputStart = end - 1
    tokenEnd = end - document.start
    previousEnd = end
    document.end = end
  }

  /// The parser was replaced after an error: no container is open any more.
  mutating func parserReplaced() { frames.removeAll() }
}

private let comma = UInt8(ascii: ",")
private let colon = UInt8(ascii: ":")

extension DocumentScanner {
  /// Finds the token yajl just reported: sets ``tokenEnd`` in compact-text coordinates and,
  /// when copying, appends the token (with its separator) to ``text``. Returns the token's span
  /// in compact-text coordinates (in registers: its start is kept nowhere else), or nil when the
  /// parse must stop.
  ///
  /// The inline part handles the common case, a token inside a compact document; everything
  /// else (whitespace, copying, document boundaries) is out of line.
  @inline(__always)
  mutating func locateToken() -> Span? {
    locateToken(end: chunk.lowerBound + yajl_get_bytes_consumed(handle))
  }

  /// ``locateToken()`` for a token whose text yajl does not hand over, `{`, `[`, `}`, `]`,
  /// `null`, `true` or `false`, which is `length` bytes long (0: a boolean, whose first byte
  /// says). Inside a compact document its end follows from where it starts, without a call to
  /// yajl.
  @inline(__always)
  mutating func locateToken(length: Int) -> Span? {
    if let position = compactTokenStart() {
      return tokenLocated(at: position, end: fixedTokenEnd(from: position, length: length))
    }
    let end = chunk.lowerBound + yajl_get_bytes_consumed(handle)
    return locateSlowly(end: end)
  }

  /// ``locateToken()`` for a token whose text yajl hands over: a string or a key (`quoted`, the
  /// text decoded) or a number (the text as written). When that text is the input itself (no
  /// escapes, and the token not split between pieces), the token's end follows from where it
  /// lies, without asking yajl.
  @inline(__always)
  mutating func locateToken(text: UnsafePointer<UInt8>?, count: Int, quoted: Bool) -> Span? {
    if let end = inputTokenEnd(text: text, count: count, quoted: quoted) {
      return locateToken(end: end)
    }
    return locateToken()
  }

  /// Where a token whose text yajl hands over ends, when that text is the input itself (in
  /// the piece being parsed); nil when it is yajl's decoded copy or there is none.
  @inline(__always)
  func inputTokenEnd(text: UnsafePointer<UInt8>?, count: Int, quoted: Bool) -> StreamOffset? {
    guard let text else { return nil }
    let offset = view.offset(of: text)
    guard chunk.contains(offset) else { return nil }
    return offset + count + (quoted ? 1 : 0)
  }

  /// ``locateToken()`` for a token ending at `end`.
  @inline(__always)
  mutating func locateToken(end: StreamOffset) -> Span? {
    if let position = compactTokenStart() { return tokenLocated(at: position, end: end) }
    return locateSlowly(end: end)
  }

  /// Where the current token starts, when it is inside a document whose compact text is the
  /// input (``fastPath``) and nothing but its separator comes before it; else nil.
  @inline(__always)
  func compactTokenStart() -> StreamOffset? {
    guard fastPath else { return nil }
    var position = previousEnd
    var byte = view[position]
    if byte == comma || byte == colon {
      position += 1
      byte = view[position]
    }
    return byte > 0x20 ? position : nil
  }

  /// Where a token of ``locateToken(length:)`` that starts at `position` ends.
  @inline(__always)
  func fixedTokenEnd(from position: StreamOffset, length: Int) -> StreamOffset {
    let count = length != 0 ? length : (view[position] == UInt8(ascii: "f") ? 5 : 4)
    let end = position + count
    assert(end == chunk.lowerBound + yajl_get_bytes_consumed(handle), "token end at \(end)")
    return end
  }

  /// The fast path's bookkeeping: the token at `position..<end` of a compact document.
  @inline(__always) @discardableResult
  mutating func tokenLocated(at position: StreamOffset, end: StreamOffset) -> Span {
    let token = Span(start: position - document.start, end: end - document.start)
    tokenInputStart = position
    tokenEnd = token.end
    previousEnd = end
    return token
  }

  /// The out-of-line part of ``locateToken(end:)``.
  @inline(never)
  mutating func locateSlowly(end: StreamOffset) -> Span? {
    if frames.count == 0 {
      return locateOutsideDocument(end: end) ? Span(start: 0, end: 0) : nil
    }
    var position = previousEnd
    guard let separator = skipToToken(&position) else { return nil }
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
    let start = text.count
    text.append(view.pointer(at: position), count: end - position)
    tokenEnd = text.count
    previousEnd = end
    return Span(start: start, end: tokenEnd)
  }

  /// Skips from `position` the whitespace, the separator (`,` or `:`) if one is there, and the
  /// whitespace after it. Returns the separator (0 for none), or nil when a byte JSON does not
  /// take as whitespace stops the parse.
  @inline(__always)
  mutating func skipToToken(_ position: inout StreamOffset) -> UInt8? {
    guard skipWhitespace(&position) else { return nil }
    var separator: UInt8 = 0
    if view[position] == comma || view[position] == colon {
      separator = view[position]
      position += 1
      guard skipWhitespace(&position) else { return nil }
    }
    return separator
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
    guard let separator = skipToToken(&position) else { return false }
    outsideTokenLocated(at: position, end: end, separator: separator)
    return true
  }

  /// Records the token at `position..<end`, outside the documents, in ``envelopeToken``.
  @inline(__always)
  mutating func outsideTokenLocated(at position: StreamOffset, end: StreamOffset, separator: UInt8)
  {
    previousEnd = end
    tokenInputStart = position
    tokenEnd = 0
    envelopeToken.separator = separator
    envelopeToken.endsRun = false
    envelopeToken.start = position
    envelopeToken.end = end
  }
}
