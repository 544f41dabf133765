import Glibc

extension ScanState {
  /// Counts lines up to input offset `target` (never backwards).
  @inline(__always)
  mutating func advanceLines(to target: Int) {
    guard target > lineCursor else { return }
    if target - lineCursor <= 2 {
      // The common case: from the end of one compact document to the start of the next.
      var position = lineCursor
      while position < target {
        if input[position] == 0x0A {
          lineAtCursor += 1
          lineStartAtCursor = position + 1
        }
        position += 1
      }
      lineCursor = target
      return
    }
    advanceLinesScanning(to: target)
  }

  /// ``advanceLines(to:)`` over a longer stretch.
  @inline(never)
  private mutating func advanceLinesScanning(to target: Int) {
    var position = lineCursor
    while position < target,
      let found = memchr(input + position, 0x0A, target - position)
    {
      let newline = input.distance(to: found.assumingMemoryBound(to: UInt8.self))
      lineAtCursor += 1
      lineStartAtCursor = newline + 1
      position = newline + 1
    }
    lineCursor = target
  }

  /// Line and column (1-based; the column in Unicode scalars) of input offset `offset`, which
  /// must not be before the current document's line.
  func location(ofInput offset: Int) -> (line: Int, column: Int) {
    var line = documentLine
    var lineStart = documentLineStart
    if offset < lineStart { return (line, 1) }
    var position = lineStart
    while position < offset, let found = memchr(input + position, 0x0A, offset - position) {
      let newline = input.distance(to: found.assumingMemoryBound(to: UInt8.self))
      line += 1
      lineStart = newline + 1
      position = newline + 1
    }
    var column = 1
    var index = lineStart
    while index < offset {
      if input[index] & 0xC0 != 0x80 { column += 1 }
      index += 1
    }
    return (line, column)
  }
}
