/// Rejected input being skipped: from a malformed document's start to where conversion resumes
/// (the next line that starts with `{`) or, in list framing, to the end of the input.
///
/// Its text is saved (or counted) as it goes, so a long stretch is never held in memory; only
/// trailing whitespace waits, because a rejected text ends at its last non-space byte.
struct SkippedInput {
  /// Where the skipped text starts.
  let startPosition: TextPosition
  let report: MalformedReport
  /// `--format list`: nothing resumes; the rest of the input is not converted.
  let toEndOfInput: Bool
  /// After a truncated record: resume recovering, line by line, up to here.
  let recoverUntil: StreamOffset?
  /// The rejected text before this has been saved or counted.
  var savedTo: StreamOffset
  /// Where the last saved piece ends (its last character's position), if one was saved.
  var lastSaved: TextPosition? = nil
  /// Where to look on for a line that starts with `{`.
  var scanFrom: StreamOffset
  /// Whether the error counts as a document (not for a list's framing).
  let countsDocument: Bool
}

extension SkippedInput {
  /// Looks on, from ``scanFrom``, for the line the skip ends at: the first whose first byte is
  /// `{` (never with ``toEndOfInput``). Returns its start, or nil when none is held yet; then
  /// ``scanFrom`` is where to look on, a newline at the very end included, so that the next
  /// line's first byte is checked when it arrives.
  mutating func resumeLine(in view: InputView) -> StreamOffset? {
    guard !toEndOfInput else { return nil }
    var position = scanFrom
    scanFrom = view.end
    while let newline = view.firstNewline(from: position, to: view.end) {
      let lineStart = newline + 1
      guard lineStart < view.end else {
        scanFrom = newline
        return nil
      }
      if view[lineStart] == UInt8(ascii: "{") { return lineStart }
      position = lineStart
    }
    return nil
  }

  /// The skipped text not yet saved before `end`, up to its last non-space byte (trailing
  /// space waits: a rejected text ends at its last byte); nil when there is none. `last` is
  /// that piece's last character, and `movesLastSaved` whether it moves ``lastSaved``: a piece
  /// may start inside a character the read split, and only one where a character starts can
  /// move where the text ends.
  func unsavedPiece(upTo end: StreamOffset, in view: InputView)
    -> (end: StreamOffset, last: StreamOffset, movesLastSaved: Bool)?
  {
    var contentEnd = end
    while contentEnd > savedTo, JSONText.isWhitespace(view[contentEnd - 1]) {
      contentEnd = contentEnd - 1
    }
    guard contentEnd > savedTo else { return nil }
    let last = view.lastCharacter(before: contentEnd, notBefore: savedTo)
    return (contentEnd, last, view[last] & 0xC0 != 0x80 || lastSaved == nil)
  }

  /// What the error's report says of the skipped text when the skip ends (at the end of the
  /// input when `reachedEnd`): the rest not converted, or the lines skipped.
  func reportSuffix(reachedEnd: Bool, reportsSkippedInput: Bool) -> String {
    if toEndOfInput {
      guard let last = lastSaved else { return "" }
      return Messages.restNotConverted(from: startPosition, to: last)
    }
    guard reportsSkippedInput else { return "" }
    return Messages.skipped(from: startPosition, to: reachedEnd ? nil : lastSaved ?? startPosition)
  }
}
