/// One input converted on several threads (``StreamConverter``'s `jobs`): this thread reads it
/// and cuts it into batches (``BatchReader``), the workers (`jobs - 1` threads) and this one,
/// while it waits for the next result, convert them (``WorkQueue``), and this thread writes
/// their results in input order. A document that runs past its batch is converted
/// again together with the next batch, so the output is the same as with one thread.
///
/// Its invariants: batches are written in the order they were cut (`written` counts them, never
/// more than `submitted`); at most `maximumInFlight` are read ahead; once a batch cannot be
/// taken as a worker converted it and the input cannot go on in parallel (a broken envelope,
/// one envelope cut nowhere, a read failure, a very long line), everything from there is
/// converted on this thread, and nothing is converted twice.
final class ParallelRun {
  private unowned let converter: StreamConverter
  private let descriptor: SystemFileDescriptor
  private let name: String
  private let queue: WorkQueue
  /// Converts, on this thread, batches no worker has taken yet, and again a batch whose worker
  /// did not know what came before it.
  private let local: ConversionEngine
  private var reader: BatchReader
  private let maximumInFlight: Int
  /// How many batches' worth of input holding no boundary make the rest of the input go on on
  /// this thread (4 MiB of 256 KiB batches).
  static let batchesWithoutBoundary = 16
  private var submitted = 0
  private var written = 0
  private var endOfInput = false
  /// Bytes read of the input.
  private var total = 0
  /// The batches handed out and not yet written, by index.
  private var kept: [Int: Batch] = [:]
  /// A document still open at the end of the last batch written, for the next.
  private var carry: (bytes: [UInt8], first: TextPosition)? = nil
  /// What the path found in the batches written, for the report of an input with no document.
  private var found = PathFindings()
  /// Where one pass would go on that batches cannot: from here, the input is converted on this
  /// thread (the bytes from this place to the end of what was read, where they start, whether
  /// that is the start of the input, and where in its structure).
  private var resume: Resume? = nil
  /// Where the next batch starts in the input's structure, as the batch before it ended (nil
  /// while a carry is open), and, between elements, how many of the array's elements came
  /// before it (rows' paths count them).
  private var nextStart: BatchStart? = .topLevel
  private var elementsBefore = 0
  private let rowPathPrefix: [UInt8]?
  /// A read that failed: what was read before it is converted first, as on one thread.
  private var readFailure: SystemErrno? = nil

  private struct Resume {
    var bytes: [UInt8]
    let first: TextPosition
    let atInputStart: Bool
    let start: BatchStart
    let elementsBefore: Int
  }

  init(
    converter: StreamConverter, descriptor: SystemFileDescriptor, name: String, queue: WorkQueue
  ) {
    self.converter = converter
    self.descriptor = descriptor
    self.name = name
    self.queue = queue
    let options = converter.options
    local = ConversionEngine(
      options: options, keepsRejects: converter.rejects != nil,
      capacities: converter.capacities, store: converter.store)
    reader = BatchReader(
      batchBytes: converter.batchBytes,
      startsBetweenElements: PathMatcher.firstStepBatchesStartAt(options: options) != nil,
      buffers: queue.inputBuffers)
    maximumInFlight = max(2, 2 * converter.jobs)
    rowPathPrefix = PathMatcher.rowPathBeforeFirstIndex(options: options)
  }

  /// Reads, hands out and writes batches until the input ends or a document stops it.
  func run() throws(ConversionIOError) -> InputOutcome {
    while true {
      if let outcome = try readAhead() { return outcome }
      guard written < submitted else { break }
      let next = try deliverNext()
      // A bad document stopped the run: nothing after it is written.
      if next.outcome != .completed { return next.outcome }
      if resume != nil { return try goOnOnThisThread() }
      if next.isLast { break }
    }
    return .completed
  }

  /// Reads and hands out batches while there is room. Returns the input's outcome when the rest
  /// of it went on on this thread, nil otherwise.
  private func readAhead() throws(ConversionIOError) -> InputOutcome? {
    let batchBytes = converter.batchBytes
    while !endOfInput && submitted - written < maximumInFlight {
      let count: Int
      do {
        count = try reader.read(from: descriptor)
      } catch {
        // One thread would have converted everything read before the failure: the batches in
        // flight are written, and what was read after them is converted on this thread.
        readFailure = error
        return try goOnOnThisThread()
      }
      total += count
      converter.statisticsOffset.bytesIn += count
      converter.progressHandler?(total, converter.statistics)
      if count == 0 {
        endOfInput = true
        submit(reader.cutRest())
        break
      }
      let dataWaiting = count == batchBytes || descriptor.hasInputReady()
      guard reader.pendingCount >= batchBytes || !dataWaiting else { continue }
      if let batch = reader.cutAtBoundary() {
        submit(batch)
      } else if reader.pendingCount >= Self.batchesWithoutBoundary * batchBytes {
        // No line starts with `{` in several batches: one huge document (held in memory once,
        // rather than once per copy between threads), or documents that do not start their
        // lines. A cut anywhere else could split a document, or the skipping after a malformed
        // one, differently from one pass. Finish the batches in flight, then convert the rest
        // of this input on this thread.
        return try goOnOnThisThread()
      }
    }
    return nil
  }

  private func submit(_ batch: Batch) {
    var batch = batch
    batch.listElementsBefore = converter.engine.listElements
    kept[batch.index] = batch
    queue.submit(batch)
    submitted += 1
  }

  /// Writes the next batch's result (converted again after the previous one's carry), or, once
  /// the rest goes on on this thread, adds the batch's bytes to that rest.
  private func deliverNext() throws(ConversionIOError) -> (outcome: InputOutcome, isLast: Bool) {
    let batch = kept.removeValue(forKey: written)!
    // While it waits, this thread converts batches no worker has taken (it is one of the
    // run's `jobs` threads), unless what comes next goes on on this thread anyway.
    var result = queue.result(for: written, helpingWith: resume == nil ? local : nil)
    written += 1
    if resume != nil {
      batch.bytes.withBytes { resume!.bytes.append(contentsOf: $0) }
      return (.completed, batch.isLast)
    }
    let carriedIn = carry
    result = settled(result, of: batch)
    let batchElementsBefore = elementsBefore
    countElements(of: result)
    if result.outcome == .abandoned && !batch.isLast {
      // The envelope broke (its path iterates): one pass skips from the break to the end of the
      // input, the batch only to its own end. Its result is dropped; from its start on, the
      // input is converted on this thread.
      resume = Resume(
        bytes: batch.bytes.withBytes { (carriedIn?.bytes ?? []) + $0 },
        first: carriedIn?.first ?? batch.first,
        atInputStart: batch.atInputStart && carriedIn == nil,
        start: result.startedAt, elementsBefore: batchElementsBefore)
      return (.completed, batch.isLast)
    }
    if let carried = result.carry {
      if result.carryIsEnvelope {
        // One envelope, cut nowhere: from its start on, the input goes on on this thread.
        resume = Resume(
          bytes: carried, first: result.carryStart, atInputStart: false,
          start: result.carryStartsAt,
          elementsBefore: result.carryStartsAt == .topLevel ? 0 : batchElementsBefore)
      } else {
        carry = (carried, result.carryStart)
      }
    }
    try write(result, isLast: batch.isLast)
    return (result.outcome, batch.isLast)
  }

  /// `result` as one pass would have it: converted again after the previous batch's carry, or
  /// from where that batch ended when the reader guessed the start wrong; its rows' indexes
  /// counted from the envelope's start.
  private func settled(_ result: BatchResult, of batch: Batch) -> BatchResult {
    var result = result
    let engine = converter.engine
    if let previous = carry {
      result = convertBatch(
        batch, carry: previous.bytes, carryStart: previous.first, start: .topLevel,
        listElementsBefore: engine.listElements, with: local, buffers: queue.outputBuffers)
    } else if let nextStart,
      nextStart != result.startedAt
        || (nextStart == .topLevel && (result.listElementsBefore > 0) != (engine.listElements > 0))
    {
      result = convertBatch(
        batch, start: nextStart, elementsBefore: elementsBefore,
        listElementsBefore: engine.listElements, with: local, buffers: queue.outputBuffers)
    } else if case .betweenElements = batch.start {
      converter.batchesStartedBetweenElements += 1
    }
    carry = nil
    nextStart = result.next
    if let end = result.rowsIndexedFromBatchStart, let rowPathPrefix,
      elementsBefore != result.elementsBefore
    {
      result.addToRowIndexes(
        elementsBefore - result.elementsBefore, after: rowPathPrefix, before: end)
    }
    return result
  }

  /// How many of the array's elements come before the next batch.
  private func countElements(of result: BatchResult) {
    guard case .betweenElements = result.next else {
      elementsBefore = 0
      return
    }
    elementsBefore =
      result.elementsCountFromBatchStart
      ? elementsBefore + result.elementsRead - result.elementsBefore : result.elementsRead
  }

  /// Writes a batch's result and counts what it found.
  private func write(_ result: BatchResult, isLast: Bool) throws(ConversionIOError) {
    found.add(result.found)
    converter.engine.addListElements(result.listElementsWritten)
    try converter.deliver(result)
    if let failure = result.fatalFailure { throw failure }
    if isLast && result.outcome == .completed && found.documents == 0 {
      converter.reportNoDocument(findings: found)
    }
    // The documents of a batch count once it is written (reads run ahead of them).
    converter.progressHandler?(total, converter.statistics)
  }

  /// Converts the rest of the input on this thread: from `resume` (with the batches read after
  /// it), or from the open carry and what is pending.
  private func goOnOnThisThread() throws(ConversionIOError) -> InputOutcome {
    while written < submitted {
      let next = try deliverNext()
      if next.outcome != .completed { return next.outcome }
    }
    if let resume {
      return try converter.continueOnThisThread(
        descriptor, name: name, carry: resume.bytes, pending: reader.pendingBytes,
        first: resume.first, atInputStart: resume.atInputStart, start: resume.start,
        elementsBefore: resume.elementsBefore, alreadyRead: total,
        foundBefore: found, readFailure: readFailure)
    }
    return try converter.continueOnThisThread(
      descriptor, name: name, carry: carry?.bytes, pending: reader.pendingBytes,
      first: carry?.first ?? reader.pendingStart,
      atInputStart: reader.atInputStart && carry == nil,
      start: carry == nil ? nextStart ?? .topLevel : .topLevel,
      elementsBefore: carry == nil ? elementsBefore : 0, alreadyRead: total,
      foundBefore: found, readFailure: readFailure)
  }
}
