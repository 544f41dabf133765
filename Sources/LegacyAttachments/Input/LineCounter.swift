/// A place in the input as people count it: the 1-based line, and the 1-based column in
/// characters (Unicode scalars) from the start of that line.
struct TextPosition: Equatable, CustomStringConvertible {
  var line: Int
  var column: Int

  var description: String { "\(line):\(column)" }
}

/// Follows the lines of one input as the engine moves through it, so that any place at or after
/// its cursor can be located by a short scan, without keeping the input since its start.
///
/// It remembers one *anchor*: a stream offset whose line and column it knows, normally the start
/// of the line it has reached. When the window is about to discard the bytes the anchor needs,
/// ``forget(before:in:)`` moves the anchor forward first, so a very long line costs no memory.
struct LineCounter {
  /// Everything before here has been counted.
  private(set) var cursor = StreamOffset.zero
  /// A place at or before the cursor, on the cursor's line, whose position is known.
  private var anchor = StreamOffset.zero
  private var anchorPosition = TextPosition(line: 1, column: 1)

  /// Starts over for a new input (or a piece of one) whose first byte, at offset 0, is at
  /// `first` (1:1 for a whole input).
  init(first: TextPosition = TextPosition(line: 1, column: 1)) {
    anchorPosition = first
  }

  /// Makes `offset` (just after a byte-order mark at the start of the input) column 1: the mark
  /// is not a character of the text.
  mutating func startLine(at offset: StreamOffset) {
    cursor = offset
    anchor = offset
    anchorPosition.column = 1
  }

  /// The line the cursor is on.
  var line: Int { anchorPosition.line }

  /// Counts the lines up to `target` (never backwards). Everything from the cursor to `target`
  /// must be in `view`.
  @inline(__always)
  mutating func advance(to target: StreamOffset, in view: InputView) {
    guard target > cursor else { return }
    if target - cursor <= 8 {
      // The common case: from the end of one compact document to the start of the next, or
      // across the few bytes of an envelope between two.
      var position = cursor
      while position < target {
        if view[position] == 0x0A { newLine(startingAt: position + 1) }
        position += 1
      }
      cursor = target
      return
    }
    advanceScanning(to: target, in: view)
  }

  @inline(never)
  private mutating func advanceScanning(to target: StreamOffset, in view: InputView) {
    var position = cursor
    while let newline = view.firstNewline(from: position, to: target) {
      newLine(startingAt: newline + 1)
      position = newline + 1
    }
    cursor = target
  }

  @inline(__always)
  private mutating func newLine(startingAt offset: StreamOffset) {
    anchor = offset
    anchorPosition = TextPosition(line: anchorPosition.line + 1, column: 1)
  }

  /// Moves the cursor to `target` over text known to hold no newline (a compact document).
  @inline(__always)
  mutating func skipNewlineFree(to target: StreamOffset) {
    if target > cursor { cursor = target }
  }

  /// Where `target` is. It must be at or after the anchor and held by `view` from the anchor on.
  /// Does not move the cursor, so a document's problems can be located in any order.
  func position(of target: StreamOffset, in view: InputView) -> TextPosition {
    Self.position(of: target, after: anchor, at: anchorPosition, in: view)
  }

  /// Where `target` is, counted from `known`, a place at or before it whose position is
  /// `knownPosition`, with everything from `known` on held by `view`.
  static func position(
    of target: StreamOffset, after known: StreamOffset, at knownPosition: TextPosition,
    in view: InputView
  ) -> TextPosition {
    var position = knownPosition
    var lineStart = known
    var scan = known
    let limit = min(target, view.end)
    while let newline = view.firstNewline(from: scan, to: limit) {
      position = TextPosition(line: position.line + 1, column: 1)
      lineStart = newline + 1
      scan = lineStart
    }
    var column = position.column
    var index = lineStart
    while index < limit {
      if view[index] & 0xC0 != 0x80 { column += 1 }
      index += 1
    }
    return TextPosition(line: position.line, column: column)
  }

  /// Makes the counter independent of the bytes before `offset`, which the window is about to
  /// discard: counts up to it and, on a long line, moves the anchor to it.
  mutating func forget(before offset: StreamOffset, in view: InputView) {
    advance(to: offset, in: view)
    guard anchor < offset else { return }
    anchorPosition = position(of: offset, in: view)
    anchor = offset
  }

  /// Counts up to `offset`, makes it the anchor and returns its position: for a place that the
  /// counter will pass (a unit's start, before the documents in it) but that is located later.
  mutating func place(_ offset: StreamOffset, in view: InputView) -> TextPosition {
    forget(before: offset, in: view)
    return anchor == offset ? anchorPosition : position(of: offset, in: view)
  }
}
