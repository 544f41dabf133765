/// The reading side of a parallel run: reads an input into a window and cuts it into batches just
/// before lines that start with `{` (document boundaries in NDJSON and in pretty-printed dumps),
/// handing each batch the very buffer it was read into. When an envelope's batches may start
/// between its elements (``PathMatcher/firstStepBatchesStartAt(options:)``), lines that start with
/// `,` are cut before too, and each batch says where it is likely to start from the bytes
/// around its cut.
struct BatchReader: ~Copyable {
  private var window: InputWindow
  private var boundaries = BoundaryFinder()
  private let batchBytes: Int
  /// Whether batches may start between the elements of an envelope.
  private let guessesElements: Bool
  /// Where the batch cut next is guessed to start.
  private var nextStart = BatchStart.topLevel
  /// Where the buffers of batches done with come back, to read the next ones into.
  private let buffers: BufferPool?
  private var batches = 0
  /// Newlines in the batches cut so far: the next batch starts on the line after them.
  private var newlinesBefore = 0

  init(batchBytes: Int, startsBetweenElements: Bool = false, buffers: BufferPool? = nil) {
    self.batchBytes = batchBytes
    self.buffers = buffers
    guessesElements = startsBetweenElements
    boundaries.cutsBeforeCommas = startsBetweenElements
    window = InputWindow(capacity: batchBytes * 2)
  }

  /// Bytes read and not yet cut into a batch.
  var pendingCount: Int { window.end - window.start }

  /// Whether nothing has been cut yet (the pending bytes start the input).
  var atInputStart: Bool { batches == 0 }

  /// Where the pending bytes start in their input.
  var pendingStart: TextPosition { TextPosition(line: newlinesBefore + 1, column: 1) }

  /// The pending bytes (valid until the next read or cut).
  var pendingBytes: UnsafeRawBufferPointer {
    UnsafeRawBufferPointer(window.view.bytes(from: window.start, to: window.end))
  }

  /// Reads up to one batch's worth.
  mutating func read(from descriptor: SystemFileDescriptor) throws(SystemErrno) -> Int {
    try window.read(from: descriptor, maximum: batchBytes)
  }

  /// Cuts a batch at the last boundary, if there is one.
  mutating func cutAtBoundary() -> Batch? {
    guard let split = boundaries.lastBoundary(in: window.view) else { return nil }
    return cut(at: split, isLast: false)
  }

  /// Cuts what is pending as the input's last batch.
  mutating func cutRest() -> Batch { cut(at: window.end, isLast: true) }

  private mutating func cut(at split: StreamOffset, isLast: Bool) -> Batch {
    let newlines = boundaries.newlines(before: split, in: window.view)
    let first = pendingStart
    let start = nextStart
    nextStart = guessStart(at: split, in: window.view)
    let taken = window.split(at: split, capacity: batchBytes * 2, into: buffers?.take())
    // Checked here, where the read has just left them in this core's cache, rather than by the
    // worker's engine on another core (docs/performance.md). Bytes that are not valid are
    // checked again by the engine that converts them, which locates and reports the error.
    let isValid =
      taken.count == 0
      || UTF8Validator.firstInvalid(taken.bytes.baseAddress!, count: taken.count) == nil
    let bytes = BatchBytes(taking: taken, returningTo: buffers, isValidUTF8: isValid)
    let batch = Batch(
      index: batches, bytes: bytes, first: first, atInputStart: batches == 0, isLast: isLast,
      start: start)
    newlinesBefore = newlines
    batches += 1
    return batch
  }
}

extension BatchReader {
  /// Where a batch cut at `split` probably starts: after an element when its first byte is a
  /// comma, after the comma or the `[` when the byte before it is one (outside an envelope,
  /// neither is JSON); between input values otherwise.
  private func guessStart(at split: StreamOffset, in view: InputView) -> BatchStart {
    guard guessesElements, split < view.end else { return .topLevel }
    if view[split] == UInt8(ascii: ",") { return .betweenElements(.afterElement, anyWritten: true) }
    guard let before = view.lastNonSpaceByte(before: split) else { return .topLevel }
    switch ElementsPlace(after: before) {
    case .afterOpen: return .betweenElements(.afterOpen, anyWritten: false)
    case .afterComma: return .betweenElements(.afterComma, anyWritten: true)
    case .afterElement: return .topLevel
    }
  }
}
