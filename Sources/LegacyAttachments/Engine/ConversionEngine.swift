internal import CYajl

/// How far an input got.
public enum InputOutcome: Sendable, Equatable {
  /// Every document was read (some may have been rejected with `--keep-going`).
  case completed
  /// A bad document stopped the run (no `--keep-going`); everything before it was written.
  case stopped
  /// The input's framing is broken (a malformed `--format list` array): the documents before the
  /// break were converted, the rest of the input was not.
  case abandoned
}

/// The sizes the engine's buffers start at. They grow as needed; tests make them tiny so that
/// the input window compacts inside every token and every document.
@_spi(Testing) public struct EngineCapacities: Sendable, Equatable {
  /// The input window (it compacts when full).
  public var input: Int
  /// A document's compact text, when the input has whitespace inside it.
  public var text: Int
  /// Converted output waiting to be written.
  public var output: Int

  public init(input: Int = 1 << 19, text: Int = 1 << 16, output: Int = 1 << 17) {
    self.input = input
    self.text = text
    self.output = output
  }

  /// The defaults.
  public static let standard = EngineCapacities()
  /// 16 bytes each: every boundary is crossed.
  public static let tiny = EngineCapacities(input: 16, text: 16, output: 16)
}

/// Why conversion of the current input ended early.
enum StopReason: Equatable {
  /// A document was rejected without `--keep-going`: nothing after it is read.
  case rejectedDocument
  /// The input's framing is broken (list framing): the documents after the break are not
  /// converted (with `--keep-going`, the rest of the input has gone to the rejects).
  case brokenFraming
}

/// What the driver is doing with the input.
enum Phase {
  /// Complete lines are parsed as they arrive.
  case scanning
  /// After a truncated record, up to `until`: each line is parsed alone, once the first byte of
  /// the next is known, so that another truncated record costs only its own line.
  case recovering(until: StreamOffset)
  /// Rejected input is being skipped.
  case skipping(SkippedInput)
}

/// The streaming converter for one thread: bytes in, converted documents, rejected text and
/// diagnostics out, in one pass, with memory bounded by the largest document.
///
/// The driver of the stages: it owns the input window and the yajl parser, hands the scanner each
/// piece of complete lines to parse, and decides what happens when the input is malformed. Feed
/// it an input's bytes in chunks of any size (``feed(_:)``, or ``read(from:maximum:name:)``), then
/// call ``finishReading()``; hand the results over between calls (``deliver(output:rejects:diagnostic:)``).
final class ConversionEngine {
  let options: ConversionOptions
  /// Feed yajl one line at a time (for `--unbuffered`), so each document is out as soon as its
  /// line is in.
  var lineAtATime: Bool {
    get { cursor.lineAtATime }
    set { cursor.lineAtATime = newValue }
  }

  private var window: InputWindow
  private let context: UnsafeMutablePointer<ScanContext>
  private let callbacks: UnsafeMutablePointer<yajl_callbacks>
  private var parser: YajlParser
  private var phase = Phase.scanning
  private(set) var stop: StopReason? = nil
  /// What has been given to yajl, and how far the next piece may reach.
  private var cursor = ParseCursor()
  /// Bytes before this have been given to yajl (or skipped).
  private var parsePosition: StreamOffset { cursor.position }
  private var endOfInput: StreamOffset? { cursor.endOfInput }
  private var atEndOfInput: Bool { cursor.endOfInput != nil }

  /// `keepsRejects`: whether rejected text is kept for the caller, or only counted (and its
  /// extent reported as skipped).
  /// `store`: the blob store of `--blobs`, shared by the threads of a run (made here when the
  /// options name one and none is given).
  init(
    options: ConversionOptions, keepsRejects: Bool = true,
    capacities: EngineCapacities = .standard, store: BlobStore? = nil
  ) {
    self.options = options
    window = InputWindow(capacity: capacities.input)
    context = .allocate(capacity: 1)
    callbacks = .allocate(capacity: 1)
    callbacks.initialize(to: ScanCallbacks.make())
    context.initialize(
      to: ScanContext(
        scanner: DocumentScanner(
          options: options, view: window.view, textCapacity: capacities.text),
        handler: DocumentHandler(
          options: options, keepsRejects: keepsRejects, outputCapacity: capacities.output,
          store: store ?? options.blobs.map { BlobStore(options: $0) }),
        skim: DocumentSkim(options: options, table: callbacks)))
    parser = YajlParser(
      callbacks: callbacks, context: UnsafeMutableRawPointer(context), validateUTF8: false)
    context.pointee.scanner.handle = parser.handle
  }

  deinit {
    context.deinitialize(count: 1)
    context.deallocate()
    callbacks.deallocate()
  }

  /// Whether documents push and pull leave as they are are skimmed (``DocumentSkim``), and how
  /// many were, and parsed again after a skim that missed. Tests turn skimming off to compare.
  var skimsDocuments: Bool {
    get { context.pointee.skim.allowed }
    set { if !newValue { context.pointee.skim.turnOff() } }
  }
  var skimCounts: (skimmed: Int, rescanned: Int) {
    (context.pointee.skim.documentsSkimmed, context.pointee.skim.documentsRescanned)
  }

  /// How the current input has gone so far.
  var outcome: InputOutcome {
    switch stop {
    case nil: .completed
    case .rejectedDocument: .stopped
    case .brokenFraming: .abandoned
    }
  }

  /// Called with the results after a document whose output is large, to hand them over at once
  /// (see ``DocumentHandler/drain``).
  var drain: ((inout Results) -> Bool)? {
    get { context.pointee.handler.drain }
    set { context.pointee.handler.drain = newValue }
  }

  /// A failure of the blob store that ended the run (status 2), once one happened.
  var fatalFailure: ConversionIOError? { context.pointee.handler.fatalFailure }

  var statistics: ConversionStatistics {
    get { context.pointee.handler.results.statistics }
    set { context.pointee.handler.results.statistics = newValue }
  }

  /// Whether the end of an input reports a path that found no document (not for batches).
  var reportsNoDocument: Bool {
    get { context.pointee.handler.reportsNoDocument }
    set { context.pointee.handler.reportsNoDocument = newValue }
  }

  /// What the path found in the earlier pieces of the current input, converted elsewhere.
  var foundBefore: PathFindings {
    get { context.pointee.handler.foundBefore }
    set { context.pointee.handler.foundBefore = newValue }
  }

  /// The merged list's elements so far (`--format list`): written here, or added by the
  /// driver of a `-j` run for what workers wrote.
  var listElements: Int { context.pointee.handler.framer.listElements }

  /// Counts elements of the merged list that another engine wrote.
  func addListElements(_ count: Int) { context.pointee.handler.framer.addListElements(count) }

  /// The elements of the merged list the last batch wrote.
  private(set) var listElementsInLastBatch = 0

  /// The bytes the input window has room for (it grows to the longest stretch needed at once).
  var inputCapacity: Int { window.capacity }

  /// What the path found in the last input (or batch) that ended.
  private(set) var foundInLastInput = PathFindings()

  // MARK: Input

  /// Appends `bytes` of the current input and converts every complete line.
  func feed(_ bytes: UnsafeRawBufferPointer) {
    guard stop == nil, bytes.count > 0 else { return }
    appendWholeInput(bytes)
    parseAvailable(final: false)
  }

  /// ``feed(_:)`` for a batch's input: an empty window reads it in place instead of copying it
  /// (``InputWindow/adopt(_:)``).
  func feed(adopting bytes: BatchBytes) {
    guard stop == nil, bytes.buffer.count > 0 else { return }
    guard window.end == window.start else {
      return feed(UnsafeRawBufferPointer(bytes.buffer.bytes))
    }
    window.adopt(bytes)
    windowChanged()
    statistics.bytesIn += bytes.buffer.count
    parseAvailable(final: false)
  }

  /// Appends `bytes` of the current input without converting anything yet: for an input that
  /// is whole in memory and ends now (``finishReading()`` converts it), where looking for line
  /// ends first would only read it twice.
  func appendWholeInput(_ bytes: UnsafeRawBufferPointer) {
    guard stop == nil, bytes.count > 0 else { return }
    makeRoom(for: bytes.count)
    window.append(bytes)
    windowChanged()
    statistics.bytesIn += bytes.count
  }

  /// Reads up to `maximum` bytes from `descriptor` into the input and converts every complete
  /// line. Returns the number of bytes read (0 at the end of the file).
  func read(from descriptor: SystemFileDescriptor, maximum: Int, name: String)
    throws(ConversionIOError) -> Int
  {
    makeRoom(for: maximum)
    let count: Int
    do {
      count = try window.read(from: descriptor, maximum: maximum)
    } catch {
      inputUnreadable()
      throw ConversionIOError(operation: .read, errno: error, target: name)
    }
    windowChanged()
    guard stop == nil else { return count }
    statistics.bytesIn += count
    if count > 0 { parseAvailable(final: false) }
    return count
  }

  /// Reading the current input failed: what was read of it and not converted cannot be
  /// finished, and the next input starts afresh.
  func inputUnreadable() {
    // Rejected text being skipped is reported and saved as far as it was read.
    if case .skipping = phase { finishSkipping(at: window.end, reachedEnd: false) }
    startNextInput()
  }

  /// The current input has ended: converts what is left, reports a truncated document, gets
  /// ready for the next input and returns how this one went.
  func finishReading() -> InputOutcome {
    cursor.endOfInput = window.end
    if stop == nil {
      // A final newline lets yajl end a number that ends the input, and leaves it no partial
      // token to hold, however much of the input was parsed before (with a path that iterates,
      // everything read may have been). (While skipping, nothing is parsed any more.)
      let parsing: Bool
      if case .skipping = phase { parsing = false } else { parsing = true }
      if parsing, let last = window.lastByte, last != 0x0A {
        window.append(0x0A)
        windowChanged()
      }
      // A truncated record may resume parsing at an earlier line: parse until nothing is left.
      repeat {
        parseAvailable(final: true)
        if stop == nil { finishInput() }
      } while stop == nil && parsePosition < window.end
      if stop == nil { context.pointee.handler.inputEnded() }
    }
    let outcome = self.outcome
    startNextInput()
    return outcome
  }

  /// Makes room for `count` more bytes: when the window is full, first discards everything no
  /// stage needs any more. The line counter goes past those bytes first, so that it never needs
  /// them again.
  private func makeRoom(for count: Int) {
    guard window.isFull(adding: count) else { return }
    if case .skipping(var skip) = phase {
      saveSkipped(&skip, upTo: window.end)
      phase = .skipping(skip)
    }
    let keep = retainedFrom()
    context.pointee.handler.lines.forget(before: keep, in: window.view)
    window.discard(before: keep)
    windowChanged()
    cursor.discarded(before: keep)
  }

  /// The window has changed (bytes read or discarded, its buffer perhaps moved): the scanner's
  /// view of it is renewed at once, so that no stage ever holds a view of bytes that moved.
  @inline(__always)
  private func windowChanged() {
    context.pointee.scanner.view = window.view
  }

  /// The first input byte some stage still needs.
  private func retainedFrom() -> StreamOffset {
    if case .skipping(let skip) = phase { return skip.savedTo }
    // The last token is kept whole: locating a refused separator looks at its last byte.
    var keep = min(parsePosition, context.pointee.scanner.tokenInputStart)
    if let start = context.pointee.scanner.openDocumentStart { keep = min(keep, start) }
    if let start = context.pointee.handler.framer.retainedFrom { keep = min(keep, start) }
    return keep
  }

  /// Whether a value (a document, or the envelope holding it) has begun and not ended.
  var isInsideValue: Bool { openValueStart != nil }

  /// Where the value being read started: the open document, or the input value holding it when
  /// the path iterates nothing (what a truncated record or a malformed value is skipped from).
  private var openValueStart: StreamOffset? {
    context.pointee.handler.framer.openValueStart ?? context.pointee.scanner.openDocumentStart
  }

  // MARK: Parsing

  /// Decides whether the input starts with a byte-order mark as soon as its first bytes tell:
  /// at once unless they are the start of one, or at the end (`force`). Returns false while it
  /// cannot tell yet.
  private func resolveByteOrderMark(force: Bool) -> Bool {
    switch cursor.resolveByteOrderMark(in: window.view, force: force) {
    case .undecided: return false
    case .absent: return true
    case .skipped:
      context.pointee.scanner.restart(at: parsePosition)
      context.pointee.handler.lines.startLine(at: parsePosition)
      return true
    }
  }

  /// Gives yajl every complete line (or, at the end, everything) not yet parsed.
  private func parseAvailable(final: Bool) {
    guard resolveByteOrderMark(force: final) else { return }
    while stop == nil {
      switch phase {
      case .skipping:
        guard continueSkipping(final: final) else { return }
      case .recovering(let until):
        guard parsePosition < until else {
          phase = .scanning
          continue
        }
        guard parseRecoveringLine(final: final) else { return }
      case .scanning:
        let end: StreamOffset
        if final {
          end = window.end
        } else if parsesAnywhere {
          // yajl lexes a token it holds part of again from its start at every call: a long one
          // (a 60 MB `data` string) waits until as much again has been read, so that it is
          // lexed a few times, not once per read.
          let held = max(0, parsePosition - context.pointee.scanner.previousEnd)
          guard window.end - parsePosition >= held else { return }
          end = cursor.lastCharacterEnd(in: window.view)
        } else if let lineEnd = cursor.lastLineEnd(in: window.view) {
          end = lineEnd
        } else {
          return
        }
        guard end > parsePosition else { return }
        parse(upTo: end)
      }
    }
  }

  /// Whether what has been read is parsed up to its end rather than to its last line end: with
  /// a path that iterates (or the list framing), a malformed input is skipped to its end, never
  /// resumed at a line, so nothing needs whole lines; and a compact envelope is one line, which
  /// must not be held whole (`--push` writes each envelope as one line).
  private var parsesAnywhere: Bool {
    !lineAtATime && context.pointee.handler.framer.iterates
  }

  /// In recovery after a truncated record: parses the next line alone, once the first byte of
  /// the line after it is known, and rejects the document still open at its end if that line
  /// starts with `{`. Returns false when more input is needed. At the end of a batch the next line
  /// is known to start with `{` (batches are cut there).
  private func parseRecoveringLine(final: Bool, atBatchEnd: Bool = false) -> Bool {
    guard case .recovering(let until) = phase else { return true }
    var view = window.view
    var end = view.end
    if let newline = view.firstNewline(from: parsePosition, to: view.end) { end = newline + 1 }
    guard end < view.end || final || atBatchEnd else { return false }
    guard end > parsePosition else {
      phase = .scanning
      return true
    }
    parse(upTo: end)
    view = window.view
    let nextLineStartsObject = end < view.end ? view[end] == UInt8(ascii: "{") : atBatchEnd
    guard stop == nil, case .recovering = phase, parsePosition == end,
      let start = openValueStart, nextLineStartsObject
    else { return true }
    let lineEnd = view.lineEnd(beforeLineAt: end, notBefore: start)
    let point = context.pointee.handler.abandonEnvelope()
    let report = malformedReport(at: lineEnd, message: Messages.truncatedRecord, start: start)
    replaceParser()
    beginSkipping(
      from: start, startPosition: point?.startPosition, report: report, recoverUntil: until)
    finishSkipping(at: end, reachedEnd: false)
    return true
  }

  /// Parses `parsePosition..<end` (complete lines, or the rest of the input). A skimmed
  /// document that was not what it seemed is parsed again from its start by a new parser
  /// (``DocumentSkim``); what came before it stands.
  private func parse(upTo end: StreamOffset) {
    // UTF-8 is checked here, strictly, rather than by yajl: yajl parses up to the first bad
    // byte, and unless it finds an earlier error, that byte is the error. A window that holds
    // exactly a batch the parallel reader found valid is not checked twice: the batch starts at
    // the input's start or after a newline, and every piece of it parsed here ends at a
    // character's end, so each piece of a valid whole is valid.
    let invalid =
      window.holdsValidUTF8
      ? nil
      : UTF8Validator.firstInvalid(
        window.view.pointer(at: parsePosition), count: end - parsePosition
      ).map { parsePosition + $0 }
    while let start = parseOnce(upTo: invalid ?? end, invalid: invalid) {
      parser = YajlParser(
        callbacks: callbacks, context: UnsafeMutableRawPointer(context), validateUTF8: false)
      context.pointee.scanner.handle = parser.handle
      context.pointee.scanner.restart(at: start)
      cursor.parsed(to: start)
    }
  }

  /// ``parse(upTo:)`` once, up to `end` (the first invalid UTF-8 byte, `invalid`, if there is
  /// one): returns where a document to parse again starts, or nil.
  private func parseOnce(upTo end: StreamOffset, invalid: StreamOffset?) -> StreamOffset? {
    let view = window.view
    let chunk = view.pointer(at: parsePosition)
    let length = end - parsePosition
    context.pointee.scanner.view = view
    context.pointee.scanner.chunk = parsePosition..<end
    let status = length > 0 ? parser.parse(chunk, count: length) : .ok
    if let start = context.pointee.documentToRescan() { return start }
    settle(status, chunk: chunk, length: length, end: end, invalid: invalid)
    return nil
  }

  /// What follows a call to yajl that parsed `length` bytes at `chunk`, up to `end`, short of
  /// the invalid UTF-8 at `invalid` if there is some: the cursor moves on, or the error or stop
  /// is handled.
  private func settle(
    _ status: YajlStatus, chunk: UnsafePointer<UInt8>, length: Int, end: StreamOffset,
    invalid: StreamOffset?
  ) {
    let view = window.view
    if status == .ok, let offset = invalid {
      let (message, advice) = describingInput(Messages.invalidUTF8(byte: view[offset]), at: offset)
      malformed(at: offset, message: message, advice: advice)
      return
    }
    switch status {
    case .ok:
      cursor.parsed(to: end)
    case .cancelled:
      switch context.pointee.scanner.interruption {
      case nil:
        // The handler rejected a document, without `--keep-going`.
        stop = .rejectedDocument
      case .lexical(let offset, let message):
        context.pointee.scanner.interruption = nil
        malformed(at: offset, message: message)
      case .framing(let offset, let message):
        context.pointee.scanner.interruption = nil
        framingBroken(at: offset, message: message)
      case .rescan:
        preconditionFailure("a rescan is taken before the status is settled")
      }
    case .error:
      let yajlMessage = parser.errorMessage(for: chunk, count: length)
      var message = Messages.malformed(yajlMessage: yajlMessage)
      var offset = view.refusedTokenOffset(
        previousEnd: context.pointee.scanner.previousEnd,
        lastTokenStart: context.pointee.scanner.tokenInputStart,
        innermostIsArray: context.pointee.scanner.innermostIsArray
          ?? context.pointee.handler.framer.innermostIsArray, before: envelopeTokenBefore)
      // A form feed or vertical tab before the refused token, or as it (yajl's whitespace, not
      // JSON's), is the first byte that is not JSON: reported as the scanner reports one before
      // a token it takes, and as a batch that ends after it does.
      if reportedSpaceYajlTakes(before: min(offset + 1, view.end)) { return }
      let lexical = yajlMessage.hasPrefix("lexical error")
      if lexical, let end = endOfInput, view.tokenRunsToEnd(from: offset, inputEnd: end) {
        // The input ends inside this token (`tru`, `-1.5e`, `"abc\`): it was cut short, as
        // when it ends between tokens.
        if reportInputCutShort() { return }
        offset = end
      } else if lexical && offset < view.end && view[offset] == UInt8(ascii: "\"") {
        offset = view.firstBadStringByte(from: offset)
      }
      if view.hasByteOrderMark(at: offset) { message = Messages.byteOrderMarkInside }
      let (described, advice) = describingInput(message, at: offset)
      malformed(at: offset, message: described, advice: advice)
    }
  }

  /// `message`, or, when `offset` is where the input's first value starts and the input looks
  /// like something else than JSON (``InputSniffer``: a multipart body, HTTP headers, a
  /// compressed stream, an HTML page), what it is and what to do.
  private func describingInput(_ message: String, at offset: StreamOffset)
    -> (String, ConversionDiagnostic.Advice?)
  {
    let view = window.view
    // Only an input whose start is still held (the first batch of one) can tell.
    guard view.start == .zero, offset < view.end else { return (message, nil) }
    let before = view.bytes(from: .zero, to: offset)
    let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
    let leading = before.starts(with: bom) ? before.dropFirst(3) : before[...]
    guard leading.allSatisfy(JSONText.isWhitespace) else { return (message, nil) }
    let first = view.bytes(from: offset, to: min(view.end, offset + 80))
    guard let kind = InputSniffer.kind(of: first) else { return (message, nil) }
    if case .multipart = kind { return (Messages.notJSON(kind), .multipart) }
    return (Messages.notJSON(kind), nil)
  }

  // MARK: Malformed input

  /// Locates malformed JSON at `offset` in the document starting at `start`.
  private func malformedReport(at offset: StreamOffset, message: String, start: StreamOffset)
    -> MalformedReport
  {
    let open = context.pointee.scanner.openDocumentStart != nil
    return context.pointee.handler.malformedReport(
      at: offset, message: message, documentStart: start,
      identifier: open ? context.pointee.scanner.document.identifier : .none,
      text: open ? context.pointee.scanner.finishedText : nil, view: window.view)
  }

  /// Reports malformed JSON found at `offset`, then stops, skips or resumes (docs/guide.md, "Bad input"
  /// and "Envelopes"). `truncation` is the message for an input that ends inside an envelope.
  private func malformed(
    at offset: StreamOffset, message: String, truncation: String? = nil,
    countsDocument: Bool = true, advice: ConversionDiagnostic.Advice? = nil
  ) {
    let view = window.view
    // An open envelope is closed first, at the last complete element or before the open unit.
    let point = context.pointee.handler.abandonEnvelope()
    let (start, startPosition) = rejectedTextStart(before: offset, abandoned: point)
    var problemMessage = message
    var problemOffset = offset
    if let end = endOfInput, offset >= end {
      problemMessage = truncation ?? Messages.truncatedDocument
      problemOffset = end
    }
    var truncatedRecordEnd: StreamOffset? = nil
    if !context.pointee.handler.framer.iterates,
      let next = view.firstLine(startingWith: UInt8(ascii: "{"), from: start, to: offset)
    {
      // The document's line ended early and the next line starts another document: a
      // truncated NDJSON record. Point at the end of its line, not where yajl noticed.
      truncatedRecordEnd = next
      problemOffset = view.lineEnd(beforeLineAt: next, notBefore: start)
      problemMessage = Messages.truncatedRecord
    }
    var report = malformedReport(at: problemOffset, message: problemMessage, start: start)
    if problemMessage == message { report.diagnostic.advice = advice }
    replaceParser()
    skipRejected(
      RejectedText(
        start: start, position: startPosition, report: report, errorOffset: offset,
        truncatedRecordEnd: truncatedRecordEnd, countsDocument: countsDocument))
  }

  /// Where the text rejected for an error at `offset` starts, and its position when it is
  /// known here: the envelope's unit or open document, or after the separators that follow the
  /// last thing converted.
  private func rejectedTextStart(before offset: StreamOffset, abandoned point: AbandonPoint?)
    -> (StreamOffset, TextPosition?)
  {
    let view = window.view
    var start: StreamOffset
    if let point, point.startPosition != nil {
      start = point.start
    } else if let documentStart = context.pointee.scanner.openDocumentStart, point == nil {
      start = documentStart
    } else {
      // Between documents, after an element inside a unit, or after the envelope's last
      // complete value (a member off the path may follow: its key is not converted either):
      // the bad text starts after the separators.
      start = point?.start ?? context.pointee.scanner.previousEnd
      while start < offset, JSONText.isWhitespace(view[start]) || view[start] == 0x2C {
        start += 1
      }
      start = min(start, offset)
    }
    var startPosition = point?.start == start ? point?.startPosition : nil
    if let point, point.afterElement, let known = point.knownPlace {
      // The line counter may have passed it (the unit's lines).
      startPosition = LineCounter.position(
        of: start, after: known.offset, at: known.position, in: view)
    }
    return (start, startPosition)
  }

  /// A malformed value's text, reported: where it starts, where the error is, and where the
  /// line of a truncated record ends (at the next line, which starts a document).
  private struct RejectedText {
    let start: StreamOffset
    let position: TextPosition?
    let report: MalformedReport
    let errorOffset: StreamOffset
    let truncatedRecordEnd: StreamOffset?
    let countsDocument: Bool
  }

  /// Rejects `rejected` and goes on as the options say: stops after its text (no
  /// `--keep-going`), skips to the end of the input (a path that iterates), recovers line by line
  /// after a truncated record, or resumes at the next line that starts with `{`.
  private func skipRejected(_ rejected: RejectedText) {
    let view = window.view
    let (start, position, report) = (rejected.start, rejected.position, rejected.report)
    var recoverUntil: StreamOffset? = nil
    if case .recovering(let until) = phase { recoverUntil = until }
    guard options.continuesAfterBadDocument else {
      // The document's text goes with the rejects: a truncated record's line, or up to the end
      // of the error's line.
      var end = min(rejected.errorOffset, view.end)
      if let next = rejected.truncatedRecordEnd {
        end = next
      } else if parsesAnywhere {
        // What was read is parsed whole lines or not, so the error's line may not all be read
        // yet (and may never end): the text ends where the error is, at every read size.
      } else if let newline = view.firstNewline(from: end, to: view.end) {
        end = newline + 1
      } else {
        end = view.end
      }
      beginSkipping(
        from: start, startPosition: position, report: report,
        countsDocument: rejected.countsDocument)
      finishSkipping(at: end, reachedEnd: false)
      stop = .rejectedDocument
      return
    }
    if context.pointee.handler.framer.iterates {
      beginSkipping(
        from: start, startPosition: position, report: report, toEndOfInput: true,
        countsDocument: rejected.countsDocument)
      _ = continueSkipping(final: atEndOfInput)
    } else if let next = rejected.truncatedRecordEnd {
      beginSkipping(
        from: start, startPosition: position, report: report,
        recoverUntil: max(recoverUntil ?? .zero, rejected.errorOffset + 1))
      finishSkipping(at: next, reachedEnd: false)
    } else {
      // Otherwise resume on the first line after the error's line that starts with `{`.
      beginSkipping(
        from: start, startPosition: position, report: report, recoverUntil: recoverUntil,
        scanFrom: rejected.errorOffset)
      _ = continueSkipping(final: atEndOfInput)
    }
  }

  /// With list framing, the input is not one array: the rest of it is not converted.
  private func framingBroken(at offset: StreamOffset, message: String) {
    let report = context.pointee.handler.reportInputError(
      at: offset, message: message, kind: .notAnObject, view: window.view)
    replaceParser()
    guard options.continuesAfterBadDocument else {
      context.pointee.handler.report(report, suffix: "", countsDocument: false)
      stop = .brokenFraming
      return
    }
    beginSkipping(from: offset, report: report, toEndOfInput: true, countsDocument: false)
    _ = continueSkipping(final: atEndOfInput)
  }

  /// Starts skipping rejected input from `start`: to the end of the input (`toEndOfInput`), or
  /// to the next line after `scanFrom` that starts with `{`; then recovering up to `recoverUntil`.
  private func beginSkipping(
    from start: StreamOffset, startPosition: TextPosition? = nil, report: MalformedReport,
    toEndOfInput: Bool = false, recoverUntil: StreamOffset? = nil, scanFrom: StreamOffset? = nil,
    countsDocument: Bool = true
  ) {
    context.pointee.scanner.resetDocument()
    phase = .skipping(
      SkippedInput(
        startPosition: startPosition
          ?? context.pointee.handler.lines.position(of: start, in: window.view),
        report: report, toEndOfInput: toEndOfInput, recoverUntil: recoverUntil, savedTo: start,
        scanFrom: scanFrom ?? start, countsDocument: countsDocument))
  }

  /// Looks on for the line to resume at. Returns true when the skip has ended.
  private func continueSkipping(final: Bool) -> Bool {
    guard case .skipping(var skip) = phase else { return true }
    let resumeLine = skip.resumeLine(in: window.view)
    phase = .skipping(skip)
    if let resumeLine {
      finishSkipping(at: resumeLine, reachedEnd: false)
      return true
    }
    if final {
      finishSkipping(at: window.end, reachedEnd: true)
      return true
    }
    return false
  }

  /// Saves (or counts) the skipped text from ``SkippedInput/savedTo`` up to its last non-space
  /// byte before `end`; the trailing space waits, since a rejected text ends at its last byte.
  private func saveSkipped(_ skip: inout SkippedInput, upTo end: StreamOffset) {
    let view = window.view
    guard let piece = skip.unsavedPiece(upTo: end, in: view) else { return }
    if piece.movesLastSaved {
      skip.lastSaved = context.pointee.handler.lines.position(of: piece.last, in: view)
    }
    context.pointee.handler.reject(view.bytes(from: skip.savedTo, to: piece.end), ends: false)
    skip.savedTo = piece.end
  }

  /// Ends the skip at `end` (a line that starts with `{`, or the end of the input when
  /// `reachedEnd`): saves the rest of its text, reports the error with what was skipped, and
  /// resumes there.
  private func finishSkipping(at end: StreamOffset, reachedEnd: Bool) {
    guard case .skipping(var skip) = phase else { return }
    saveSkipped(&skip, upTo: end)
    if skip.lastSaved != nil {
      context.pointee.handler.reject(UnsafeBufferPointer(start: nil, count: 0), ends: true)
    }
    let suffix = skip.reportSuffix(
      reachedEnd: reachedEnd, reportsSkippedInput: context.pointee.handler.reportsSkippedInput)
    context.pointee.handler.report(skip.report, suffix: suffix, countsDocument: skip.countsDocument)
    cursor.resume(at: end)
    context.pointee.scanner.resetDocument()
    context.pointee.scanner.previousEnd = end
    context.pointee.scanner.tokenInputStart = end
    context.pointee.handler.lines.advance(to: end, in: window.view)
    if skip.toEndOfInput {
      stop = .brokenFraming
    }
    if let until = skip.recoverUntil, end < until {
      phase = .recovering(until: until)
    } else {
      phase = .scanning
    }
  }

  private func replaceParser() {
    parser = YajlParser(
      callbacks: callbacks, context: UnsafeMutableRawPointer(context), validateUTF8: false)
    context.pointee.scanner.handle = parser.handle
    context.pointee.scanner.parserReplaced()
    context.pointee.handler.framer.restart()
  }

  /// End of input with everything parsed: a document still open was cut short. (yajl's own
  /// end-of-input check is not needed: the last piece always ends with a newline, so yajl holds
  /// no partial token.)
  private func finishInput() {
    reportInputCutShort()
  }

  /// At the end of the input (everything parsed, or yajl refusing a token the input ends
  /// inside): reports the document, envelope or list that was cut short, if one was. Returns
  /// whether it reported one.
  @discardableResult
  private func reportInputCutShort() -> Bool {
    guard let endOfInput else { return false }
    // What the scanner reads through of an envelope whose path iterates (a run of a row's
    // members, a container off the path) is no document: the envelope is what was cut short.
    let inEnvelopeValue =
      context.pointee.handler.framer.iterates && context.pointee.scanner.document.isEnvelopeValue
    if openValueStart != nil && !inEnvelopeValue {
      malformed(at: endOfInput, message: Messages.truncatedDocument)
      return true
    }
    if reportedSpaceYajlTakes(before: endOfInput) { return true }
    if context.pointee.handler.framer.envelopeOpen {
      let truncation =
        options.framing == .list ? Messages.truncatedList : Messages.truncatedEnvelope
      malformed(
        at: endOfInput, message: truncation, truncation: truncation, countsDocument: false)
      if stop == nil { stop = .brokenFraming }
      return true
    }
    return false
  }

  /// Between documents the scanner sees whitespace only when a token follows it, so a form feed
  /// or vertical tab (yajl's whitespace, not JSON's) at the end of an input or of a batch would go
  /// unseen: it is looked for here, and reported as the scanner would. Returns whether one was.
  private func reportedSpaceYajlTakes(before end: StreamOffset) -> Bool {
    let view = window.view
    var position = max(context.pointee.scanner.previousEnd, view.start)
    while position < end {
      let byte = view[position]
      if byte == 0x0C || byte == 0x0B {
        malformed(at: position, message: byte == 0x0C ? Messages.formFeed : Messages.verticalTab)
        return true
      }
      position += 1
    }
    return false
  }

  /// Gets ready for the next input: fresh parser, positions and window (results are kept).
  private func startNextInput() {
    replaceParser()
    window.restart()
    cursor.restart()
    phase = .scanning
    stop = nil
    context.pointee.scanner.restart()
    context.pointee.handler.lines = LineCounter()
    foundInLastInput = context.pointee.handler.framer.findings
    rowsIndexedFromBatchStart = rowsIndexedFromCurrentBatchStart
    listElementsInLastBatch = context.pointee.handler.framer.listElementsWrittenInBatch
    batchStart = .topLevel
    context.pointee.handler.foundBefore = PathFindings()
    context.pointee.handler.framer.startInput()
  }

  // MARK: Batches (for several threads)

  /// Starts a batch: the bytes fed next are a piece of an input whose first byte is at `first`,
  /// and at `start` in its structure. Only the piece at the very start of an input may have a
  /// byte-order mark.
  ///
  /// `elementsBefore`: with a `start` between elements, how many elements of the array came
  /// before, when it is known (0 otherwise: rows then count from the batch's start).
  ///
  /// `listElementsBefore`: for a worker, the elements the merged list (`--format list`) had
  /// before the batch (only whether there were any matters; nil on the thread that writes).
  func beginBatch(
    first: TextPosition, atInputStart: Bool, start: BatchStart = .topLevel, elementsBefore: Int = 0,
    listElementsBefore: Int? = nil
  ) {
    stop = nil
    if let listElementsBefore {
      context.pointee.handler.framer.setListElementsBefore(listElementsBefore)
    }
    cursor.checkingByteOrderMark = atInputStart
    context.pointee.handler.lines = LineCounter(first: first)
    batchStart = start
    if start == .afterList { context.pointee.handler.framer.startAfterList() }
    guard case .betweenElements(let place, let anyWritten) = start else { return }
    // yajl is put between the elements by text it parses without calling back; the framer is
    // put there directly.
    cursor.checkingByteOrderMark = false
    let priming = context.pointee.handler.framer.primingText(at: place)
    let status = parser.parseWithoutCallbacks(priming.bytes, callbacks: callbacks)
    precondition(status == .ok, "the priming text is JSON's start")
    context.pointee.handler.framer.startBetweenElements(
      anyWritten: anyWritten, elementsBefore: elementsBefore, position: first,
      results: &context.pointee.handler.results)
    batchOutputStart = context.pointee.handler.results.outputPosition
  }

  /// Where the current batch started (``beginBatch(first:atInputStart:start:elementsBefore:)``).
  private var batchStart = BatchStart.topLevel

  /// Outside the documents (in the envelope), what the last token before a refused one was: the
  /// envelope token the framer last had, a value the scanner read through (a document, a
  /// container off the path), or the place a `-j` batch started at. The bytes before it may be
  /// gone (the window keeps the envelope only from its last complete element). Nil inside a
  /// value the scanner is reading, whose bytes are all held.
  private var envelopeTokenBefore: TokenBefore? {
    guard context.pointee.scanner.innermostIsArray == nil else { return nil }
    let previousEnd = context.pointee.scanner.previousEnd
    if previousEnd == .zero {
      if case .betweenElements(let place, _) = batchStart { return TokenBefore(place) }
      return nil
    }
    let token = context.pointee.scanner.envelopeToken
    guard token.end == previousEnd else { return .value }
    switch token.kind {
    case .key: return .key
    case .open: return .open
    case .close, .scalar: return .value
    }
  }
  /// The output position where a batch started between elements began.
  private var batchOutputStart = 0

  /// With rows that say where each document is, in the last batch, if it started between
  /// elements: the end (in the batch's output) of the rows whose paths index that envelope's
  /// array from the batch's start (nil when there are none to correct).
  private(set) var rowsIndexedFromBatchStart: Int? = nil

  private var rowsIndexedFromCurrentBatchStart: Int? {
    guard context.pointee.handler.framer.rowsSayWhere, case .betweenElements = batchStart else {
      return nil
    }
    let end =
      context.pointee.handler.framer.primedEnvelopeOpen
      ? context.pointee.handler.results.outputPosition
      : context.pointee.handler.framer.primedRowsEnd ?? batchOutputStart
    return end - batchOutputStart
  }

  /// Ends a batch that is not the end of its input (it ends just before a line starting with
  /// `{`). A document still open continues past the batch: its bytes and where it starts are
  /// returned, to be converted again in front of the next batch; so does an envelope value
  /// still open (a path that iterates nothing), whose output so far is taken back. A malformed
  /// document being skipped ends here, where the next `{` line begins, exactly as in one pass.
  ///
  /// An envelope whose documents are array elements, left open between two elements of the
  /// path's first array, goes on in the next batch (``BatchEnd/next``); left open anywhere else,
  /// it is carried whole as well, and ``BatchEnd/carriesEnvelope`` says so: its batches cannot
  /// go on in parallel.
  func finishBatch() -> BatchEnd {
    defer { startNextInput() }
    guard stop == nil, parseToBatchEnd() else { return BatchEnd(outcome: outcome) }
    // A skip ends here, where the next batch's `{` line begins.
    if case .skipping = phase { finishSkipping(at: window.end, reachedEnd: false) }
    if stop == nil, case .scanning = phase, context.pointee.scanner.openDocumentStart == nil,
      let next = nextBatchStart()
    {
      return next
    }
    let view = window.view
    if let open = context.pointee.handler.framer.takeBackOpenValue(
      results: &context.pointee.handler.results)
    {
      let start = open.startsBatch ? batchStart : .topLevel
      return BatchEnd(
        outcome: outcome,
        carry: (Array(view.bytes(from: open.start, to: view.end)), open.position, start),
        carriesEnvelope: open.isArrayEnvelope)
    }
    guard let start = context.pointee.scanner.openDocumentStart else {
      return BatchEnd(outcome: outcome, next: .topLevel)
    }
    return BatchEnd(
      outcome: outcome,
      carry: (
        Array(view.bytes(from: start, to: view.end)),
        context.pointee.handler.lines.position(of: start, in: view), .topLevel
      ))
  }

  /// Parses everything the batch holds, the lines recovery held back (waiting to see how the
  /// next line starts) included, and looks at what follows its last token. Returns false when a
  /// document stopped the input.
  private func parseToBatchEnd() -> Bool {
    // A first batch shorter than a byte-order mark is decided now: the next does not continue it.
    _ = resolveByteOrderMark(force: true)
    parseAvailable(final: false)
    while stop == nil, case .recovering(let until) = phase, parsePosition < until,
      parsePosition < window.end
    {
      _ = parseRecoveringLine(final: false, atBatchEnd: true)
    }
    if stop == nil, case .recovering = phase, parsePosition < window.end {
      phase = .scanning
      parseAvailable(final: false)
    }
    guard stop == nil else { return false }
    // A recovery that parsed to the batch's end is over: the next batch starts afresh, so what
    // follows the last token here (a form feed) must be looked at now, as in scanning.
    if case .recovering = phase, parsePosition >= window.end { phase = .scanning }
    if case .scanning = phase, openValueStart == nil {
      _ = reportedSpaceYajlTakes(before: window.end)
      return stop == nil
    }
    return true
  }

  /// With no document open at the batch's end: where the next batch starts, when nothing is
  /// carried (no envelope open, or between the elements of an envelope that goes on).
  private func nextBatchStart() -> BatchEnd? {
    if !context.pointee.handler.framer.envelopeOpen {
      let listClosed = context.pointee.handler.framer.listHasClosed
      return BatchEnd(outcome: outcome, next: listClosed ? .afterList : .topLevel)
    }
    guard let anyWritten = context.pointee.handler.framer.betweenElementsWritten else { return nil }
    // Everything written is final: the next batch goes on from here.
    context.pointee.handler.results.undeliverableFrom = nil
    // (The batch holds the token before its end: the `[` at least.)
    let place = ElementsPlace(
      after: window.view.lastNonSpaceByte(before: window.end) ?? UInt8(ascii: "["))
    return BatchEnd(
      outcome: outcome, next: .betweenElements(place, anyWritten: anyWritten),
      elementsRead: context.pointee.handler.framer.elementsRead,
      elementsCountFromBatchStart: context.pointee.handler.framer.primedEnvelopeOpen)
  }

  // MARK: Results

  /// Output bytes ready to be handed over.
  var pendingOutputCount: Int { context.pointee.handler.results.deliverableCount }

  /// Whether a reject or a diagnostic is waiting.
  var hasPendingMarks: Bool { context.pointee.handler.results.hasMarks }

  /// Hands over the output, rejected text and diagnostics so far, in input order, and clears
  /// them.
  func deliver<Failure: Error>(
    output: (UnsafeRawBufferPointer) throws(Failure) -> Void,
    rejects: (UnsafeRawBufferPointer, _ completesDocument: Bool) throws(Failure) -> Void,
    diagnostic: (ConversionDiagnostic) -> Void
  ) throws(Failure) {
    try context.pointee.handler.results.deliver(
      output: output, rejects: rejects, diagnostic: diagnostic)
  }

  /// Appends everything produced so far to `batch` and clears it.
  func moveResults(into batch: inout BatchResult, buffers pool: BufferPool? = nil) {
    context.pointee.handler.results.move(into: &batch, buffers: pool)
  }

  /// Closes `--format list` output: writes the array's end (and its start, if no element had
  /// one).
  func finishOutput() {
    context.pointee.handler.finishOutput()
  }
}
