// Unit tests reach internal types through @testable, which only debug builds allow; the release
// run of `make test` covers the build that ships with ConformanceTests and CLITests.
#if DEBUG

import Testing

@testable import LegacyAttachments

/// The engine's parts on their own: the cursor that decides how far each piece given to yajl
/// reaches, and the skip over rejected input.
@Suite("Engine parts: the parse cursor and the skip over rejected input")
struct ParseCursorTests {
  private func window(_ text: String, capacity: Int = 16) -> InputWindow {
    var window = InputWindow(capacity: capacity)
    append(text, to: &window)
    return window
  }

  private func append(_ text: String, to window: inout InputWindow) { window.append(text) }

  @Test("a byte-order mark split over reads is decided when its third byte comes, and skipped")
  func byteOrderMarkOverReads() {
    var input = InputWindow(capacity: 16)
    var cursor = ParseCursor()
    input.append(0xEF)
    #expect(cursor.resolveByteOrderMark(in: input.view, force: false) == .undecided)
    input.append(0xBB)
    #expect(cursor.resolveByteOrderMark(in: input.view, force: false) == .undecided)
    input.append(0xBF)
    append("{}\n", to: &input)
    #expect(cursor.resolveByteOrderMark(in: input.view, force: false) == .skipped)
    #expect(cursor.position == StreamOffset(3))
    // Decided once: never again for this input.
    #expect(cursor.resolveByteOrderMark(in: input.view, force: false) == .absent)
    cursor.restart()
    #expect(cursor.position == .zero && cursor.checkingByteOrderMark)
  }

  @Test("an input that starts like a mark and ends is decided at its end: no mark")
  func byteOrderMarkForced() {
    var input = InputWindow(capacity: 16)
    input.append(0xEF)
    var cursor = ParseCursor()
    #expect(cursor.resolveByteOrderMark(in: input.view, force: true) == .absent)
    #expect(cursor.position == .zero)
    var plain = ParseCursor()
    #expect(plain.resolveByteOrderMark(in: window("{").view, force: false) == .absent)
  }

  @Test("line ends: the last newline, searched once; one line at a time with --unbuffered")
  func lineEnds() {
    var input = window("{\"a\":1}\n{\"b\":2}\n{\"c\"")
    var cursor = ParseCursor()
    #expect(cursor.lastLineEnd(in: input.view) == StreamOffset(16))
    // Nothing new held: no search, no line end.
    #expect(cursor.lastLineEnd(in: input.view) == nil)
    append(":3}", to: &input)
    // The bytes searched before are not searched again, and hold no newline after 16.
    #expect(cursor.lastLineEnd(in: input.view) == nil)
    append("\n", to: &input)
    #expect(cursor.lastLineEnd(in: input.view) == StreamOffset(24))
    var unbuffered = ParseCursor()
    unbuffered.lineAtATime = true
    #expect(unbuffered.lastLineEnd(in: input.view) == StreamOffset(8))
    unbuffered.parsed(to: StreamOffset(8))
    #expect(unbuffered.lastLineEnd(in: input.view) == StreamOffset(16))
  }

  @Test("a resumed cursor searches from where it resumed; a discard moves the search on")
  func resumeAndDiscard() {
    let input = window("ab\ncd\nef\n")
    var cursor = ParseCursor()
    cursor.resume(at: StreamOffset(3))
    #expect(cursor.position == StreamOffset(3))
    #expect(cursor.lastLineEnd(in: input.view) == StreamOffset(9))
    var discarded = ParseCursor()
    discarded.discarded(before: StreamOffset(7))
    // Position 0 is before the discard, but the search starts at 7: only the last newline.
    #expect(discarded.lastLineEnd(in: input.view) == StreamOffset(9))
  }

  @Test("a piece never ends inside a character: é split over reads is held back")
  func characterEnds() {
    var input = window("\"caf")
    input.append(0xC3)
    let cursor = ParseCursor()
    #expect(cursor.lastCharacterEnd(in: input.view) == StreamOffset(4))
    input.append(0xA9)
    #expect(cursor.lastCharacterEnd(in: input.view) == StreamOffset(6))
  }

  private func skip(
    from start: Int, scanFrom: Int? = nil, toEndOfInput: Bool = false, in view: InputView
  ) -> SkippedInput {
    SkippedInput(
      startPosition: TextPosition(line: 1, column: start + 1),
      report: MalformedReport(
        diagnostic: ConversionDiagnostic(
          severity: .error, kind: .malformedJSON, line: 1, column: 1, message: "bad"),
        identifierToken: nil, line: 1),
      toEndOfInput: toEndOfInput, recoverUntil: nil, savedTo: StreamOffset(start),
      scanFrom: StreamOffset(scanFrom ?? start), countsDocument: true)
  }

  @Test("the skip resumes at the next line that starts with {, and waits at a final newline")
  func resumeLine() {
    var input = window("{bad\n x\n")
    var skipped = skip(from: 0, in: input.view)
    #expect(skipped.resumeLine(in: input.view) == nil)
    // The newline at the very end is looked at again when the next byte comes.
    #expect(skipped.scanFrom == StreamOffset(7))
    append("{\"ok\":1}\n", to: &input)
    #expect(skipped.resumeLine(in: input.view) == StreamOffset(8))
    var toEnd = skip(from: 0, toEndOfInput: true, in: input.view)
    #expect(toEnd.resumeLine(in: input.view) == nil)
  }

  @Test("saved pieces end at their last non-space byte; a split character does not move the end")
  func unsavedPieces() {
    var input = window("{bad  \n")
    var skipped = skip(from: 0, in: input.view)
    let piece = skipped.unsavedPiece(upTo: input.end, in: input.view)
    #expect(piece?.end == StreamOffset(4) && piece?.last == StreamOffset(3))
    #expect(piece?.movesLastSaved == true)
    skipped.savedTo = StreamOffset(4)
    skipped.lastSaved = TextPosition(line: 1, column: 4)
    #expect(skipped.unsavedPiece(upTo: input.end, in: input.view) == nil)
    // A piece that is only a character's last byte continues the character before it.
    input.append(0xC3)
    input.append(0xA9)
    skipped.savedTo = StreamOffset(8)
    let tail = skipped.unsavedPiece(upTo: input.end, in: input.view)
    #expect(tail?.end == StreamOffset(9) && tail?.movesLastSaved == false)
  }

  @Test("the report's suffix: the rest not converted, or the lines skipped, or nothing")
  func suffixes() {
    let input = window("x")
    var toEnd = skip(from: 0, toEndOfInput: true, in: input.view)
    #expect(toEnd.reportSuffix(reachedEnd: true, reportsSkippedInput: true) == "")
    toEnd.lastSaved = TextPosition(line: 3, column: 2)
    #expect(
      toEnd.reportSuffix(reachedEnd: true, reportsSkippedInput: false)
        == Messages.restNotConverted(
          from: TextPosition(line: 1, column: 1), to: TextPosition(line: 3, column: 2)))
    let lines = skip(from: 0, in: input.view)
    #expect(lines.reportSuffix(reachedEnd: false, reportsSkippedInput: false) == "")
    #expect(
      lines.reportSuffix(reachedEnd: true, reportsSkippedInput: true)
        == Messages.skipped(from: TextPosition(line: 1, column: 1), to: nil))
  }
}

#endif
