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
  private var batches = 0
  /// Newlines in the batches cut so far: the next batch starts on the line after them.
  private var newlinesBefore = 0

  init(batchBytes: Int, startsBetweenElements: Bool = false) {
    self.batchBytes = batchBytes
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
    let bytes = BatchBytes(taking: window.split(at: split, capacity: batchBytes * 2))
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

extension StreamConverter {
  /// Converts `descriptor` with ``jobs`` worker threads. Results are written in input order. A
  /// document that runs past its batch is converted again together with the next batch, so the
  /// output is the same as with one thread.
  func convertInParallel(_ descriptor: SystemFileDescriptor, name: String, queue: WorkQueue)
    throws(ConversionIOError) -> InputOutcome
  {
    let local = ConversionEngine(
      options: options, keepsRejects: rejects != nil, capacities: capacities, store: store)
    var reader = BatchReader(
      batchBytes: batchBytes,
      startsBetweenElements: PathMatcher.firstStepBatchesStartAt(options: options) != nil)
    var submitted = 0
    var written = 0
    var endOfInput = false
    var total = 0
    var kept: [Int: Batch] = [:]
    var carry: (bytes: [UInt8], first: TextPosition)? = nil
    let maximumInFlight = max(2, 2 * jobs)
    // Documents found in the batches written, for the report of an input with none.
    var documentsFound = 0

    func submit(_ batch: Batch) {
      var batch = batch
      batch.listElementsBefore = engine.listElements
      kept[batch.index] = batch
      queue.submit(batch)
      submitted += 1
    }

    /// Where one pass would go on that batches cannot: from here, the input is converted on
    /// this thread (the bytes from this place to the end of what was read, where they start,
    /// whether that is the start of the input, and where in its structure).
    var resume:
      (
        bytes: [UInt8], first: TextPosition, atInputStart: Bool, start: BatchStart,
        elementsBefore: Int
      )? = nil
    /// Where the next batch starts in the input's structure, as the batch before it ended (nil
    /// while a carry is open).
    var nextStart: BatchStart? = .topLevel
    /// Starting between elements: how many of the array's elements came before the next batch
    /// (rows' paths count them).
    var elementsBefore = 0
    let rowPathPrefix = PathMatcher.rowPathBeforeFirstIndex(options: options)
    /// A read that failed: what was read before it is converted first, as on one thread.
    var readFailure: SystemErrno? = nil

    /// Writes the next batch's result (converted again after the previous one's carry), or,
    /// once the rest goes on on this thread, adds the batch's bytes to that rest.
    func deliverNext() throws(ConversionIOError) -> (outcome: InputOutcome, isLast: Bool) {
      var result = queue.result(for: written)
      let batch = kept.removeValue(forKey: written)!
      written += 1
      if resume != nil {
        resume!.bytes.append(contentsOf: batch.bytes.buffer.bytes)
        return (.completed, batch.isLast)
      }
      let carriedIn = carry
      if let previous = carry {
        result = convertBatch(
          batch, carry: previous.bytes, carryStart: previous.first, start: .topLevel,
          listElementsBefore: engine.listElements, with: local)
      } else if let nextStart,
        nextStart != result.startedAt
          || (nextStart == .topLevel
            && (result.listElementsBefore > 0) != (engine.listElements > 0))
      {
        // The reader guessed wrong where the batch starts: converted again from where the one
        // before it ended.
        result = convertBatch(
          batch, start: nextStart, elementsBefore: elementsBefore,
          listElementsBefore: engine.listElements, with: local)
      } else if case .betweenElements = batch.start {
        batchesStartedBetweenElements += 1
      }
      carry = nil
      nextStart = result.next
      if let end = result.rowsIndexedFromBatchStart, let rowPathPrefix,
        elementsBefore != result.elementsBefore
      {
        result.addToRowIndexes(
          elementsBefore - result.elementsBefore, after: rowPathPrefix, before: end)
      }
      let batchElementsBefore = elementsBefore
      if case .betweenElements = result.next {
        elementsBefore =
          result.elementsCountFromBatchStart
          ? elementsBefore + result.elementsRead - result.elementsBefore : result.elementsRead
      } else {
        elementsBefore = 0
      }
      if result.outcome == .abandoned && !batch.isLast {
        // The envelope broke (its path iterates): one pass skips from the break to the end of
        // the input, the batch only to its own end. Its result is dropped; from its start on,
        // the input is converted on this thread.
        resume = (
          (carriedIn?.bytes ?? []) + batch.bytes.buffer.bytes, carriedIn?.first ?? batch.first,
          batch.atInputStart && carriedIn == nil, result.startedAt, batchElementsBefore
        )
        return (.completed, batch.isLast)
      }
      if let carried = result.carry {
        if result.carryIsEnvelope {
          // One envelope, cut nowhere: from its start on, the input goes on on this thread.
          resume = (
            carried, result.carryStart, false, result.carryStartsAt,
            result.carryStartsAt == .topLevel ? 0 : batchElementsBefore
          )
        } else {
          carry = (carried, result.carryStart)
        }
      }
      documentsFound += result.documentsFound
      engine.addListElements(result.listElementsWritten)
      try deliver(result)
      if let failure = result.fatalFailure { throw failure }
      if batch.isLast && result.outcome == .completed && documentsFound == 0 {
        reportNoDocument()
      }
      // The documents of a batch count once it is written (reads run ahead of them).
      progressHandler?(total, statistics)
      return (result.outcome, batch.isLast)
    }

    /// Converts the rest of the input on this thread: from `resume` (with the batches read
    /// after it), or from the open carry and what is pending.
    func goOnOnThisThread() throws(ConversionIOError) -> InputOutcome {
      while written < submitted {
        let next = try deliverNext()
        if next.outcome != .completed { return next.outcome }
      }
      if let resume {
        return try continueOnThisThread(
          descriptor, name: name, carry: resume.bytes, pending: reader.pendingBytes,
          first: resume.first, atInputStart: resume.atInputStart, start: resume.start,
          elementsBefore: resume.elementsBefore, alreadyRead: total,
          documentsBefore: documentsFound, readFailure: readFailure)
      }
      return try continueOnThisThread(
        descriptor, name: name, carry: carry?.bytes, pending: reader.pendingBytes,
        first: carry?.first ?? reader.pendingStart,
        atInputStart: reader.atInputStart && carry == nil,
        start: carry == nil ? nextStart ?? .topLevel : .topLevel,
        elementsBefore: carry == nil ? elementsBefore : 0, alreadyRead: total,
        documentsBefore: documentsFound, readFailure: readFailure)
    }

    while true {
      // Read and hand out batches while there is room.
      while !endOfInput && submitted - written < maximumInFlight {
        let count: Int
        do {
          count = try reader.read(from: descriptor)
        } catch {
          // One thread would have converted everything read before the failure: the batches
          // in flight are written, and what was read after them is converted on this thread.
          readFailure = error
          return try goOnOnThisThread()
        }
        total += count
        statisticsOffset.bytesIn += count
        progressHandler?(total, statistics)
        if count == 0 {
          endOfInput = true
          submit(reader.cutRest())
          break
        }
        let dataWaiting = count == batchBytes || descriptor.hasInputReady()
        guard reader.pendingCount >= batchBytes || !dataWaiting else { continue }
        if let batch = reader.cutAtBoundary() {
          submit(batch)
        } else if reader.pendingCount >= 4 * batchBytes {
          // No line starts with `{` in several batches: one huge document (held in memory
          // once, rather than once per copy between threads), or documents that do not start
          // their lines. A cut anywhere else could split a document, or the skipping after a
          // malformed one, differently from one pass. Finish the batches in flight, then
          // convert the rest of this input on this thread.
          return try goOnOnThisThread()
        }
      }
      guard written < submitted else { break }
      let next = try deliverNext()
      // A bad document stopped the run: nothing after it is written.
      if next.outcome != .completed { return next.outcome }
      if resume != nil { return try goOnOnThisThread() }
      if next.isLast { break }
    }
    return .completed
  }
}
