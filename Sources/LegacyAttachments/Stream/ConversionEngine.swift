import CYajl
import Glibc

/// How far an input got.
public enum InputOutcome: Sendable, Equatable {
  /// Every document was read (some may have been rejected with `--keep-going`).
  case completed
  /// A bad document stopped the run (no `--keep-going`); everything before it was written.
  case stopped
  /// The input's framing is broken beyond recovery (malformed `--format list` array); the rest
  /// of this input was not read.
  case abandoned
}

/// Writes `output` and `rejects` interleaved at `marks`: the output before each rejected
/// document, then its text.
func writeInOrder<Failure: Error>(
  output: UnsafeRawBufferPointer, rejects: UnsafeRawBufferPointer, marks: [RejectMark],
  output write: (UnsafeRawBufferPointer) throws(Failure) -> Void,
  rejects writeReject: (UnsafeRawBufferPointer) throws(Failure) -> Void
) throws(Failure) {
  var outputDone = 0
  var rejectsDone = 0
  for mark in marks {
    if mark.outputOffset > outputDone {
      try write(UnsafeRawBufferPointer(rebasing: output[outputDone..<mark.outputOffset]))
      outputDone = mark.outputOffset
    }
    try writeReject(UnsafeRawBufferPointer(rebasing: rejects[rejectsDone..<mark.rejectsEnd]))
    rejectsDone = mark.rejectsEnd
  }
  if output.count > outputDone {
    try write(UnsafeRawBufferPointer(rebasing: output[outputDone...]))
  }
}

/// The streaming converter for one thread: bytes in, converted documents, rejected documents and
/// diagnostics out, in one pass with memory bounded by the largest document.
///
/// Feed it an input's bytes in chunks of any size with ``feed(_:)`` (or read straight into it
/// with ``read(from:maximum:)``), then call ``endInput()``; take results with
/// ``takeOutputAndRejects(output:rejects:)`` or ``takeResults(into:)``, and
/// ``takeDiagnostics()``, between calls.
final class ConversionEngine {
  let options: ConversionOptions
  /// Feed yajl one line at a time (for `--unbuffered`), so each document is out as soon as its
  /// line is in.
  var lineAtATime = false

  private var input = ByteBuffer(capacity: 1 << 19)
  private let state: UnsafeMutablePointer<ScanState>
  private let callbacks: UnsafeMutablePointer<yajl_callbacks>
  private var parser: YajlParser
  /// Bytes before this offset have been given to yajl.
  private var parsePosition = 0
  /// Where the last newline-scan stopped (everything before it has no newline past `parsePosition`).
  private var newlineScan = 0
  /// A new input's first bytes, until we know whether they are a byte-order mark.
  private var checkingByteOrderMark = true
  /// After a truncated record: up to this offset the input is parsed one line at a time, and a
  /// document still open at the end of its line when the next line starts with `{` is a
  /// truncated record too. (The lines up to where yajl noticed the first one are parsed once
  /// more this way, never more, so a run of cut records costs linear time.)
  private var recoveryUntil: Int? = nil
  /// While skipping a malformed document's rest: where to look for the next line start.
  private var resyncScan: Int? = nil
  private(set) var outcome: InputOutcome = .completed
  /// Set once the input has ended and what is left is being parsed.
  private var atEndOfInput = false
  /// Where the input really ends (before the newline added for yajl's sake).
  private var endOfInput = 0

  init(options: ConversionOptions) {
    self.options = options
    state = .allocate(capacity: 1)
    callbacks = .allocate(capacity: 1)
    callbacks.initialize(to: ScanCallbacks.make())
    state.initialize(to: ScanState(options: options, input: input.base))
    parser = YajlParser(
      callbacks: callbacks, context: UnsafeMutableRawPointer(state), validateUTF8: false)
    state.pointee.handle = parser.handle
  }

  deinit {
    state.pointee.deallocate()
    state.deinitialize(count: 1)
    state.deallocate()
    callbacks.deallocate()
    input.deallocate()
  }

  var statistics: Statistics {
    get { state.pointee.statistics }
    set { state.pointee.statistics = newValue }
  }

  // MARK: Input

  /// Appends `bytes` of the current input and converts every complete line.
  func feed(_ bytes: UnsafeRawBufferPointer) {
    guard outcome == .completed, bytes.count > 0 else { return }
    makeRoom(for: bytes.count)
    input.append(bytes)
    statistics.bytesIn += bytes.count
    parseAvailable(final: false)
  }

  /// Reads up to `maximum` bytes from `descriptor` into the input and converts every complete
  /// line. Returns the number of bytes read (0 at end of file).
  func read(from descriptor: Int32, maximum: Int, name: String = "") throws(IOError) -> Int {
    makeRoom(for: maximum)
    while true {
      let count = Glibc.read(descriptor, input.base + input.count, maximum)
      if count < 0 {
        if errno == EINTR { continue }
        throw IOError(operation: .read, code: errno, target: name)
      }
      guard outcome == .completed else { return count }
      input.count += count
      statistics.bytesIn += count
      if count > 0 { parseAvailable(final: false) }
      return count
    }
  }

  /// The current input has ended: converts what is left, reports a truncated document, gets
  /// ready for the next input and returns how this one went.
  func finishReading() -> InputOutcome {
    endInput()
    return outcome
  }

  /// The current input has ended: converts what is left and reports a truncated document.
  func endInput() {
    atEndOfInput = true
    endOfInput = input.count
    if outcome == .completed {
      if input.count > parsePosition && input.base[input.count - 1] != 0x0A {
        // A final newline lets yajl end a number that ends the input.
        input.append(0x0A)
        state.pointee.input = input.base
      }
      // A truncated record may resume parsing at an earlier line: parse until nothing is left.
      repeat {
        parseAvailable(final: true)
        if outcome == .completed { finishInput() }
      } while outcome == .completed && parsePosition < input.count
    }
    startNextInput()
  }

  /// Makes `count` bytes of room at the end of the input buffer, first discarding what no
  /// longer needs to be kept (everything before the current document's line).
  private func makeRoom(for count: Int) {
    if input.count + count > input.capacity {
      var keepFrom = min(parsePosition, state.pointee.previousEnd)
      if let resyncScan { keepFrom = min(keepFrom, resyncScan) }
      if state.pointee.inDocument { keepFrom = min(keepFrom, state.pointee.documentLineStart) }
      state.pointee.advanceLines(to: keepFrom)
      keepFrom = min(keepFrom, state.pointee.lineStartAtCursor)
      if keepFrom > 0 {
        input.removeFirst(keepFrom)
        parsePosition -= keepFrom
        newlineScan = max(newlineScan - keepFrom, parsePosition)
        if let until = recoveryUntil { recoveryUntil = until - keepFrom }
        if let scan = resyncScan { resyncScan = scan - keepFrom }
        state.pointee.shiftInput(by: keepFrom)
      }
      input.reserve(count)
      state.pointee.input = input.base
    }
  }

  // MARK: Parsing

  /// Gives yajl every complete line (or, at the end, everything) not yet parsed.
  private func parseAvailable(final: Bool) {
    if checkingByteOrderMark {
      guard input.count - parsePosition >= 3 || final else { return }
      checkingByteOrderMark = false
      if input.count - parsePosition >= 3 && input.base[parsePosition] == 0xEF
        && input.base[parsePosition + 1] == 0xBB && input.base[parsePosition + 2] == 0xBF
      {
        parsePosition += 3
        state.pointee.previousEnd = parsePosition
        state.pointee.lineCursor = parsePosition
        state.pointee.lineStartAtCursor = parsePosition
        newlineScan = parsePosition
      }
    }
    while outcome == .completed {
      if resyncScan != nil && !resync(final: final) { return }
      if let until = recoveryUntil {
        guard parsePosition < until else {
          recoveryUntil = nil
          continue
        }
        guard parseRecoveringLine(final: final) else { return }
        continue
      }
      let end: Int
      if final {
        end = input.count
      } else if let lineEnd = lastLineEnd() {
        end = lineEnd
      } else {
        return
      }
      guard end > parsePosition else { return }
      parse(upTo: end)
    }
  }

  /// In recovery after a truncated record: parses the next line alone, once the first byte of
  /// the line after it is known, and rejects the document still open at its end if that line
  /// starts with `{`. Returns false when more input is needed.
  /// At the end of a batch the next line is known to start with `{` (batches are cut there).
  private func parseRecoveringLine(final: Bool, atBatchEnd: Bool = false) -> Bool {
    var end = input.count
    if let found = memchr(input.base + parsePosition, 0x0A, input.count - parsePosition) {
      end = input.base.distance(to: found.assumingMemoryBound(to: UInt8.self)) + 1
    }
    guard end < input.count || final || atBatchEnd else { return false }
    guard end > parsePosition else {
      recoveryUntil = nil
      return true
    }
    parse(upTo: end)
    let nextLineStartsObject =
      end < input.count ? input.base[end] == UInt8(ascii: "{") : atBatchEnd
    guard outcome == .completed, resyncScan == nil, parsePosition == end,
      state.pointee.inDocument, nextLineStartsObject
    else { return true }
    let start = state.pointee.documentStart
    var lineEnd = end - 1
    if lineEnd > start && input.base[lineEnd - 1] == 0x0D { lineEnd -= 1 }
    report(malformedAt: lineEnd, message: Self.truncatedRecordMessage)
    replaceParser()
    guard options.continuesAfterBadDocument else {
      rejectStart = start
      finishReject(upTo: end)
      outcome = .stopped
      return true
    }
    rejectStart = start
    finishReject(upTo: end)
    return true
  }

  static let truncatedRecordMessage =
    "malformed JSON: the document is cut short at the end of its line (a truncated record?);"
    + " the next line starts a new document"

  /// One past the last newline after `parsePosition` (the first one, one line at a time).
  private func lastLineEnd() -> Int? {
    if lineAtATime {
      guard input.count > parsePosition,
        let found = memchr(input.base + parsePosition, 0x0A, input.count - parsePosition)
      else { return nil }
      return input.base.distance(to: found.assumingMemoryBound(to: UInt8.self)) + 1
    }
    let from = max(parsePosition, newlineScan)
    guard input.count > from else { return nil }
    newlineScan = input.count
    var index = input.count - 1
    while index >= from {
      if input.base[index] == 0x0A { return index + 1 }
      index -= 1
    }
    return nil
  }

  private func parse(upTo end: Int) {
    var end = end
    let chunk = input.base + parsePosition
    // UTF-8 is checked here, strictly, rather than by yajl: yajl parses up to the first bad
    // byte, and unless it finds an earlier error, that byte is the error.
    let invalid = UTF8Validator.firstInvalid(chunk, count: end - parsePosition)
    if let invalid { end = parsePosition + invalid }
    let length = end - parsePosition
    state.pointee.input = input.base
    state.pointee.chunkBase = parsePosition
    state.pointee.chunkEnd = end
    let status = length > 0 ? parser.parse(chunk, count: length) : .ok
    if status == .ok, let invalid {
      let offset = parsePosition + invalid
      let byte = input.base[offset]
      malformed(
        at: offset,
        message:
          "malformed JSON: invalid UTF-8 (byte 0x\(String(byte, radix: 16, uppercase: true)))",
        final: atEndOfInput)
      return
    }
    switch status {
    case .ok:
      parsePosition = end
    case .cancelled:
      let scan = state.pointee
      if scan.stopRequested {
        outcome = .stopped
      } else if scan.fatal {
        outcome = .abandoned
      } else if let problem = scan.lexicalProblem {
        state.pointee.lexicalProblem = nil
        malformed(at: problem.offset, message: problem.message, final: atEndOfInput)
      }
    case .error:
      let yajlMessage = parser.errorMessage(for: chunk, count: length)
      var message = Self.describe(yajlMessage)
      // yajl's own offset depends on the error and on where its chunk started; find the place
      // from the input instead: the refused token, or the bad character inside a string.
      var offset = refusedTokenOffset(limit: input.count)
      if yajlMessage.hasPrefix("lexical error") && atEndOfInput && tokenRunsToEnd(from: offset) {
        // The input ends inside this token (`tru`, `-1.5e`, `"abc\`).
        offset = endOfInput
      } else if yajlMessage.hasPrefix("lexical error") && offset < input.count
        && input.base[offset] == UInt8(ascii: "\"")
      {
        offset = firstBadStringByte(from: offset)
      }
      if input.count - offset >= 3 && input.base[offset] == 0xEF && input.base[offset + 1] == 0xBB
        && input.base[offset + 2] == 0xBF
      {
        message =
          "malformed JSON: a byte-order mark (U+FEFF) inside the input; only its very start may have one"
      }
      malformed(at: offset, message: message, final: atEndOfInput)
    }
  }

  /// Where the token yajl refused starts: the first thing after the last token it accepted,
  /// past the separator that was due there (a separator that was not due is itself the refused
  /// token). Worked out from the accepted input alone, so it does not depend on chunking.
  private func refusedTokenOffset(limit: Int) -> Int {
    let scan = state.pointee
    var index = max(scan.previousEnd, 0)
    func skipSpace() {
      while index < limit, [0x20, 0x0A, 0x0D, 0x09].contains(input.base[index]) { index += 1 }
    }
    skipSpace()
    guard index < limit else { return min(index, limit) }
    let separator = input.base[index]
    guard separator == UInt8(ascii: ",") || separator == UInt8(ascii: ":") else { return index }
    guard let top = scan.frames.count > 0 ? scan.frames[scan.frames.count - 1] : nil,
      scan.previousEnd > 0
    else { return index }
    let lastByte = input.base[scan.previousEnd - 1]
    let afterOpen =
      (lastByte == UInt8(ascii: "{") || lastByte == UInt8(ascii: "["))
      && scan.tokenInputStart == scan.previousEnd - 1
    if afterOpen { return index }
    var due = UInt8(ascii: ",")
    if !top.isArray && lastByte == UInt8(ascii: "\"") {
      // A string in an object is a key when it follows `{` or `,`, a value when it follows `:`.
      var before = scan.tokenInputStart - 1
      while before >= 0, [0x20, 0x0A, 0x0D, 0x09].contains(input.base[before]) { before -= 1 }
      if before >= 0 && input.base[before] != UInt8(ascii: ":") { due = UInt8(ascii: ":") }
    }
    guard separator == due else { return index }
    index += 1
    skipSpace()
    return min(index, limit)
  }

  /// Whether the token starting at `start` is still going on where the input ends: a string
  /// with no closing quote, or a literal or number with nothing after it.
  private func tokenRunsToEnd(from start: Int) -> Bool {
    guard start < endOfInput else { return true }
    if input.base[start] == UInt8(ascii: "\"") {
      var index = start + 1
      while index < endOfInput {
        if input.base[index] == UInt8(ascii: "\\") {
          index += 2
          continue
        }
        if input.base[index] == UInt8(ascii: "\"") || input.base[index] < 0x20 { return false }
        index += 1
      }
      return true
    }
    for index in start..<endOfInput {
      let byte = input.base[index]
      let continues =
        (byte >= 0x30 && byte <= 0x39) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x7A)
        || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-")
      if !continues { return false }
    }
    return true
  }

  /// In the string token starting at `quote`, the first byte that is not allowed there: a
  /// control character, or the backslash of an invalid escape.
  private func firstBadStringByte(from quote: Int) -> Int {
    var index = quote + 1
    while index < input.count {
      let byte = input.base[index]
      if byte == UInt8(ascii: "\"") || byte < 0x20 { return index }
      guard byte == UInt8(ascii: "\\") else {
        index += 1
        continue
      }
      guard index + 1 < input.count else { return index }
      switch input.base[index + 1] {
      case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"),
        UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
        index += 2
      case UInt8(ascii: "u"):
        guard index + 6 <= input.count else { return index }
        for digit in 2..<6 where !isHexDigit(input.base[index + digit]) { return index }
        index += 6
      default:
        return index
      }
    }
    return index
  }

  private func isHexDigit(_ byte: UInt8) -> Bool {
    (byte >= 0x30 && byte <= 0x39) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x66)
  }

  /// Turns yajl's wording into this tool's.
  static func describe(_ yajlMessage: String) -> String {
    var text = yajlMessage
    for prefix in ["lexical error: ", "parse error: "] where text.hasPrefix(prefix) {
      text.removeFirst(prefix.count)
    }
    if text.hasSuffix(".") { text.removeLast() }
    switch text {
    case "invalid bytes in UTF8 string": return "malformed JSON: invalid UTF-8 in a string"
    case "invalid char in json text": return "malformed JSON: invalid character"
    case "invalid string in json text":
      return "malformed JSON: invalid literal (only true, false and null are)"
    case "probable comment found in input text, comments are not enabled":
      return "malformed JSON: a comment (JSON has none)"
    case "client cancelled parse": return "malformed JSON"
    default: return "malformed JSON: " + text
    }
  }

  // MARK: Malformed input

  /// Reports malformed JSON found at input offset `offset`, then stops or resumes.
  private func malformed(at offset: Int, message: String, final: Bool) {
    var start: Int
    let scan = state
    if scan.pointee.inDocument {
      start = scan.pointee.documentStart
    } else {
      start = scan.pointee.previousEnd
      while start < offset, [0x20, 0x0A, 0x0D, 0x09, 0x2C].contains(input.base[start]) {
        start += 1
      }
      scan.pointee.beginDocument(at: min(start, offset))
      start = scan.pointee.documentStart
    }
    var problemMessage = message
    var problemOffset = offset
    if final && offset >= endOfInput {
      problemMessage = "malformed JSON: truncated document (the input ends inside it)"
      problemOffset = endOfInput
    }
    var truncatedRecordEnd: Int? = nil
    if options.framing == .lines,
      let next = nextObjectLine(after: start, before: offset)
    {
      // The document's line ended early and the next line starts another document: a
      // truncated NDJSON record. Point at the end of its line, not where yajl noticed.
      truncatedRecordEnd = next
      problemOffset = next - 1
      if problemOffset > start && input.base[problemOffset - 1] == 0x0D { problemOffset -= 1 }
      problemMessage = Self.truncatedRecordMessage
    }
    report(malformedAt: problemOffset, message: problemMessage)
    replaceParser()
    guard options.continuesAfterBadDocument else {
      // Keep the text up to the end of the error's line with the rejects, as for any other
      // rejected document.
      rejectStart = start
      var end = min(offset, input.count)
      while end < input.count && input.base[end] != 0x0A { end += 1 }
      finishReject(upTo: min(end + 1, input.count))
      outcome = .stopped
      return
    }
    guard options.framing == .lines else {
      outcome = .abandoned
      return
    }
    rejectStart = start
    parsePosition = start
    if let next = truncatedRecordEnd {
      finishReject(upTo: next)
      recoveryUntil = max(recoveryUntil ?? 0, offset + 1)
      return
    }
    // Otherwise resume on the first line after the error's line that starts with `{`.
    resyncScan = offset
    _ = resync(final: final)
  }

  /// The start of the first line after the one holding `start`, and before `limit`, whose
  /// first byte is `{`.
  private func nextObjectLine(after start: Int, before limit: Int) -> Int? {
    var position = start
    while position < limit,
      let found = memchr(input.base + position, 0x0A, limit - position)
    {
      let lineStart = input.base.distance(to: found.assumingMemoryBound(to: UInt8.self)) + 1
      if lineStart <= limit && lineStart < input.count && input.base[lineStart] == UInt8(ascii: "{")
      {
        return lineStart
      }
      position = lineStart
    }
    return nil
  }

  /// Start of the text to save in `--rejects` for the document being skipped.
  private var rejectStart = 0

  /// Looks for the line to resume at; returns true when parsing can go on.
  private func resync(final: Bool) -> Bool {
    guard var position = resyncScan else { return true }
    while true {
      guard let found = memchr(input.base + position, 0x0A, input.count - position) else { break }
      let lineStart = input.base.distance(to: found.assumingMemoryBound(to: UInt8.self)) + 1
      position = lineStart
      if lineStart < input.count && input.base[lineStart] == UInt8(ascii: "{") {
        finishReject(upTo: lineStart)
        return true
      }
      if lineStart >= input.count { break }
    }
    if final {
      finishReject(upTo: input.count)
      return true
    }
    // Look again from the last newline seen, to check the next line's first byte when it arrives.
    if position > (resyncScan ?? 0) { resyncScan = position - 1 }
    return false
  }

  private func finishReject(upTo end: Int) {
    resyncScan = nil
    var text = UnsafeBufferPointer(start: input.base + rejectStart, count: end - rejectStart)
    while let last = text.last, last == 0x0A || last == 0x0D || last == 0x20 || last == 0x09 {
      text = UnsafeBufferPointer(rebasing: text.dropLast())
    }
    state.pointee.addReject(text)
    parsePosition = end
    newlineScan = end
    state.pointee.resetDocument()
    state.pointee.previousEnd = end
    state.pointee.advanceLines(to: min(end, max(state.pointee.lineCursor, end)))
  }

  private func report(malformedAt offset: Int, message: String) {
    let scan = state
    scan.pointee.statistics.documents += 1
    let problem = PendingProblem(
      kind: .malformedJSON, severity: .error,
      inputOffset: offset - scan.pointee.documentStart, message: message, pointer: "")
    if options.mode == .check {
      scan.pointee.statistics.errors += 1
      scan.pointee.appendFinding(problem: problem.kind.rawValue, pointer: "", detail: message)
    } else {
      scan.pointee.statistics.errors += 1
      scan.pointee.diagnostics.append(scan.pointee.makeDiagnostic(problem))
    }
  }

  private func replaceParser() {
    parser = YajlParser(
      callbacks: callbacks, context: UnsafeMutableRawPointer(state), validateUTF8: false)
    state.pointee.handle = parser.handle
    state.pointee.frames.removeAll()
  }

  /// End of input with everything parsed: a document still open was cut short. (yajl's own
  /// end-of-input check is not needed: the last chunk always ends with a newline, so yajl holds
  /// no partial token.)
  private func finishInput() {
    let scan = state
    if scan.pointee.inDocument {
      malformed(
        at: endOfInput, message: "malformed JSON: truncated document (the input ends inside it)",
        final: true)
      return
    }
    if options.framing == .list && scan.pointee.frames.count > 0 {
      scan.pointee.beginDocument(at: endOfInput)
      report(
        malformedAt: endOfInput,
        message: "malformed JSON: truncated list (the input ends inside the array)")
      outcome = options.continuesAfterBadDocument ? .abandoned : .stopped
    }
  }

  /// Gets ready for the next input: fresh parser, positions and buffer (results are kept).
  private func startNextInput() {
    replaceParser()
    input.count = 0
    input.shrink(ifAbove: 1 << 22)
    atEndOfInput = false
    parsePosition = 0
    newlineScan = 0
    checkingByteOrderMark = true
    recoveryUntil = nil
    resyncScan = nil
    state.pointee.resetInput()
    state.pointee.input = input.base
  }

  /// Clears the outcome so that a later input can be read (after an abandoned one).
  func resetOutcome() { outcome = .completed }

  // MARK: Batches (for several threads)

  /// Starts a batch: the bytes fed next are a piece of an input whose first line is numbered
  /// `firstLine`. Only the piece at the very start of an input may have a byte-order mark.
  func beginBatch(firstLine: Int, atInputStart: Bool) {
    outcome = .completed
    checkingByteOrderMark = atInputStart
    state.pointee.lineAtCursor = firstLine
  }

  /// Ends a batch that is not the end of its input (it ends just before a line starting with
  /// `{`). A document still open continues past the batch: its bytes and first line are
  /// returned, to be converted again in front of the next batch. A malformed document being
  /// skipped ends here, where the next `{` line begins, exactly as in one pass.
  func finishBatch() -> (carry: [UInt8], line: Int)? {
    defer { startNextInput() }
    guard outcome == .completed else { return nil }
    // Lines held back in recovery (waiting to see how the next line starts) are parsed now.
    while outcome == .completed, resyncScan == nil, let until = recoveryUntil,
      parsePosition < until, parsePosition < input.count
    {
      _ = parseRecoveringLine(final: false, atBatchEnd: true)
    }
    if outcome == .completed && recoveryUntil != nil && parsePosition < input.count {
      recoveryUntil = nil
      parseAvailable(final: false)
    }
    guard outcome == .completed else { return nil }
    if resyncScan != nil { finishReject(upTo: input.count) }
    guard state.pointee.inDocument else { return nil }
    let start = state.pointee.documentStart
    let carry = Array(UnsafeBufferPointer(start: input.base + start, count: input.count - start))
    return (carry, state.pointee.documentLine)
  }

  // MARK: Results

  var pendingOutputCount: Int { state.pointee.output.count }

  var pendingRejectsCount: Int { state.pointee.rejectMarks.count }

  /// Hands over the converted text and the rejected documents' original text so far, in input
  /// order (output up to a rejected document, its text, and so on), and clears both.
  func takeOutputAndRejects<Failure: Error>(
    output write: (UnsafeRawBufferPointer) throws(Failure) -> Void,
    rejects writeReject: (UnsafeRawBufferPointer) throws(Failure) -> Void
  ) throws(Failure) {
    let scan = state
    defer {
      scan.pointee.output.count = 0
      scan.pointee.output.shrink(ifAbove: 1 << 22)
      scan.pointee.rejects.count = 0
      scan.pointee.rejectMarks.removeAll(keepingCapacity: true)
    }
    try writeInOrder(
      output: UnsafeRawBufferPointer(scan.pointee.output.bytes),
      rejects: UnsafeRawBufferPointer(scan.pointee.rejects.bytes), marks: scan.pointee.rejectMarks,
      output: write, rejects: writeReject)
  }

  /// Appends everything produced so far to `result` (marks moved to its coordinates), and
  /// clears it.
  func takeResults(into result: inout BatchResult) {
    let scan = state
    for mark in scan.pointee.rejectMarks {
      result.rejectMarks.append(
        RejectMark(
          outputOffset: result.output.count + mark.outputOffset,
          rejectsEnd: result.rejects.count + mark.rejectsEnd))
    }
    result.output.append(contentsOf: scan.pointee.output.bytes)
    result.rejects.append(contentsOf: scan.pointee.rejects.bytes)
    result.diagnostics.append(contentsOf: takeDiagnostics())
    scan.pointee.output.count = 0
    scan.pointee.output.shrink(ifAbove: 1 << 22)
    scan.pointee.rejects.count = 0
    scan.pointee.rejectMarks.removeAll(keepingCapacity: true)
  }

  /// Hands over the diagnostics so far and clears them.
  func takeDiagnostics() -> [Diagnostic] {
    guard !state.pointee.diagnostics.isEmpty else { return [] }
    defer { state.pointee.diagnostics.removeAll() }
    return state.pointee.diagnostics
  }

  /// Closes `--format list` output: writes the array's end (and its start, if no input had one).
  func finishOutput() {
    guard options.framing == .list, options.mode == .push || options.mode == .pull else { return }
    let scan = state
    if !scan.pointee.listOpened { scan.pointee.output.append(UInt8(ascii: "[")) }
    scan.pointee.output.append("\n]\n")
    scan.pointee.listOpened = true
  }
}
