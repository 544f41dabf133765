/// Where the engine is in its input: what has been given to yajl, and how far the next piece
/// may reach (complete lines, a whole character, or the rest of the input at its end).
///
/// It reads the input window's bytes but holds none of them, in the spirit of a JSON scanner's
/// cursor kept apart from its sink. Its invariants: ``position`` never moves back within an
/// input except to a line the engine resumes at (``resume(at:)``), and no newline lies in
/// `max(position, newlineScan)..<` the end of what was held when ``lastLineEnd(in:)`` last
/// looked, so a long line is searched once, not once per read.
struct ParseCursor {
  /// Feed yajl one line at a time (`--unbuffered`), so each document is out as soon as its
  /// line is in.
  var lineAtATime = false
  /// Bytes before this have been given to yajl (or skipped).
  private(set) var position = StreamOffset.zero
  /// Where the last search for a line end stopped.
  private var newlineScan = StreamOffset.zero
  /// A new input's first bytes, until it is known whether they are a byte-order mark.
  var checkingByteOrderMark = true
  /// Where the input really ends (before the newline added for yajl's sake), once it has ended
  /// and what is left is being parsed.
  var endOfInput: StreamOffset? = nil

  /// What ``resolveByteOrderMark(in:force:)`` found.
  enum ByteOrderMark: Equatable {
    /// The bytes so far are the start of one: wait for more.
    case undecided
    /// Decided (now or before): there is none to skip.
    case absent
    /// There is one, and the cursor has moved past it.
    case skipped
  }

  /// Decides whether the input starts with a byte-order mark as soon as its first bytes tell:
  /// at once unless they are the start of one, or at the end (`force`).
  mutating func resolveByteOrderMark(in view: InputView, force: Bool) -> ByteOrderMark {
    guard checkingByteOrderMark else { return .absent }
    let mark: [UInt8] = [0xEF, 0xBB, 0xBF]
    let available = min(view.end - position, 3)
    if available < 3 && !force && (0..<available).allSatisfy({ view[position + $0] == mark[$0] }) {
      return .undecided
    }
    checkingByteOrderMark = false
    guard view.hasByteOrderMark(at: position) else { return .absent }
    resume(at: position + 3)
    return .skipped
  }

  /// The end of what has been read, less a character it ends inside (checked when it is whole).
  func lastCharacterEnd(in view: InputView) -> StreamOffset {
    guard view.end > position else { return view.end }
    let last = view.lastCharacter(before: view.end, notBefore: position)
    let lead = view[last]
    let length = lead < 0xC0 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4
    return view.end - last >= length ? view.end : last
  }

  /// One past the last newline after ``position`` (the first one, one line at a time).
  mutating func lastLineEnd(in view: InputView) -> StreamOffset? {
    if lineAtATime {
      return view.firstNewline(from: position, to: view.end).map { $0 + 1 }
    }
    let from = max(position, newlineScan)
    guard view.end > from else { return nil }
    newlineScan = view.end
    return view.lastNewline(from: from, to: view.end).map { $0 + 1 }
  }

  /// yajl took everything up to `end`.
  mutating func parsed(to end: StreamOffset) { position = end }

  /// Parsing goes on at `offset`, a line the engine skipped or resumed to.
  mutating func resume(at offset: StreamOffset) {
    position = offset
    newlineScan = offset
  }

  /// The window dropped the bytes before `offset`: no search starts before it again.
  mutating func discarded(before offset: StreamOffset) {
    newlineScan = max(newlineScan, offset)
  }

  /// A new input, from its first byte.
  mutating func restart() {
    position = .zero
    newlineScan = .zero
    checkingByteOrderMark = true
    endOfInput = nil
  }
}
