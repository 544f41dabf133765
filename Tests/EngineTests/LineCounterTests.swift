// Unit tests reach internal types through @testable, which only debug builds allow; the release
// run of `make test` covers the build that ships with ConformanceTests and CLITests.
#if DEBUG

import Testing

@testable import LegacyAttachments

@Suite("Line counter: positions from stream offsets, long lines forgotten safely")
struct LineCounterTests {
  /// A window holding `text` from stream offset 0.
  private func window(_ text: String) -> InputWindow {
    var window = InputWindow(capacity: 16)
    var text = text
    text.withUTF8 { window.append(UnsafeRawBufferPointer($0)) }
    return window
  }

  @Test("lines and columns (columns count characters, not bytes)")
  func positions() {
    let window = window("ab\né€x\n\nz")
    var lines = LineCounter()
    let view = window.view
    #expect(lines.position(of: .zero, in: view) == TextPosition(line: 1, column: 1))
    #expect(lines.position(of: StreamOffset(1), in: view) == TextPosition(line: 1, column: 2))
    // é is 2 bytes, € 3: x is the third character of line 2.
    #expect(lines.position(of: StreamOffset(8), in: view) == TextPosition(line: 2, column: 3))
    #expect(lines.position(of: StreamOffset(10), in: view) == TextPosition(line: 3, column: 1))
    #expect(lines.position(of: StreamOffset(11), in: view) == TextPosition(line: 4, column: 1))
    lines.advance(to: StreamOffset(11), in: view)
    #expect(lines.line == 4)
    #expect(lines.position(of: StreamOffset(11), in: view) == TextPosition(line: 4, column: 1))
  }

  @Test("forgetting the start of a long line keeps every later column right")
  func forgetLongLine() {
    var window = window(String(repeating: "é", count: 50) + "X\nY")
    var lines = LineCounter()
    lines.advance(to: StreamOffset(3), in: window.view)
    // The window is about to drop the first 60 bytes (30 characters) of the line.
    lines.forget(before: StreamOffset(60), in: window.view)
    window.discard(before: StreamOffset(60))
    let view = window.view
    #expect(lines.position(of: StreamOffset(100), in: view) == TextPosition(line: 1, column: 51))
    #expect(lines.position(of: StreamOffset(102), in: view) == TextPosition(line: 2, column: 1))
  }

  @Test("a piece of an input starts where it is in the input; a byte-order mark is not a column")
  func firstPositionAndByteOrderMark() {
    let piece = window("{\n  x")
    let lines = LineCounter(first: TextPosition(line: 41, column: 7))
    #expect(lines.position(of: .zero, in: piece.view) == TextPosition(line: 41, column: 7))
    #expect(
      lines.position(of: StreamOffset(4), in: piece.view) == TextPosition(line: 42, column: 3))
    var marked = LineCounter()
    marked.startLine(at: StreamOffset(3))
    let withMark = window("\u{FEFF}{x")
    #expect(
      marked.position(of: StreamOffset(4), in: withMark.view) == TextPosition(line: 1, column: 2))
  }

  @Test("moving past newline-free text counts nothing, and later positions are still right")
  func skipNewlineFree() {
    let window = window("{\"a\":1} {\"b\":2}\n{")
    var lines = LineCounter()
    lines.skipNewlineFree(to: StreamOffset(7))
    #expect(lines.cursor == StreamOffset(7))
    #expect(
      lines.position(of: StreamOffset(8), in: window.view) == TextPosition(line: 1, column: 9))
    lines.advance(to: StreamOffset(16), in: window.view)
    #expect(lines.line == 2)
  }
}

#endif
