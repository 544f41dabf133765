/// Finds where the parallel reader may cut its input: just before a line that starts with `{`
/// (or with `,`, where the rows of an envelope may start: ``cutsBeforeCommas``); and counts the
/// newlines before each cut, for the next batch's first line number.
///
/// It remembers what it has scanned, by stream offset, so that a long line without a boundary
/// (one huge document) is scanned once, not again after every read, and no byte is counted
/// twice for newlines.
struct BoundaryFinder {
  /// Everything before here has been looked at.
  private var scanned = StreamOffset.zero
  /// Newlines before ``scanned``.
  private var newlinesScanned = 0
  /// One past the last newline followed by `{`, and the newlines before it (its own included).
  private var boundary: (end: StreamOffset, newlines: Int)? = nil
  /// One past the last newline, and the newlines before it.
  private var lastNewline: (end: StreamOffset, newlines: Int)? = nil
  /// Whether a line that starts with `,` is a boundary too (Sync Gateway writes each row of a
  /// response on its own line, after the comma that separates it from the last).
  var cutsBeforeCommas = false

  /// Whether the line starting at `start` starts a batch: with `{`, or with `,` after anything
  /// but another comma (two commas are malformed, and one pass locates the error at the first,
  /// which a batch starting at the second could not see).
  @inline(__always)
  private func startsBoundary(at start: StreamOffset, in view: InputView) -> Bool {
    let byte = view[start]
    if byte == UInt8(ascii: "{") { return true }
    guard cutsBeforeCommas && byte == UInt8(ascii: ",") else { return false }
    guard let before = view.lastNonSpaceByte(before: start) else { return false }
    return before != UInt8(ascii: ",")
  }

  /// One past the last newline in `view` that is followed by `{`, or nil when there is none.
  ///
  /// What is new since the last call is counted for newlines in one pass, and searched for the
  /// cut from its end: the cut is normally the last line, a few hundred bytes back.
  mutating func lastBoundary(in view: InputView) -> StreamOffset? {
    // A newline that ended the last scan may only now be seen to be followed by `{`.
    if let last = lastNewline, last.end == scanned, scanned < view.end,
      startsBoundary(at: scanned, in: view)
    {
      boundary = last
    }
    let from = max(scanned, view.start)
    let newlines = newlinesScanned + view.newlineCount(from: from, to: view.end)
    var searchEnd = view.end
    // Newlines from the one looked at to the end of the view, its own excluded.
    var newlinesAfter = 0
    while let newline = view.lastNewline(from: from, to: searchEnd) {
      let end = newline + 1
      if newlinesAfter == 0 { lastNewline = (end, newlines) }
      if end < view.end && startsBoundary(at: end, in: view) {
        boundary = (end, newlines - newlinesAfter)
        break
      }
      newlinesAfter += 1
      searchEnd = newline
    }
    newlinesScanned = newlines
    scanned = view.end
    // A boundary already cut at is the start of the view now, not a place to cut.
    guard let boundary, boundary.end > view.start else { return nil }
    return boundary.end
  }

  /// The number of newlines before `split`, which is the last boundary found or the end of
  /// `view` (the end of the input).
  mutating func newlines(before split: StreamOffset, in view: InputView) -> Int {
    if let boundary, boundary.end == split { return boundary.newlines }
    precondition(split == view.end, "a batch is cut only at the last boundary or at the end")
    _ = lastBoundary(in: view)
    return newlinesScanned
  }
}
