/// A piece of one input, cut just before a line that starts with `{`, for one worker.
struct Batch: Sendable {
  var index: Int
  var bytes: BatchBytes
  /// Where the piece's first byte is in its input.
  var first: TextPosition
  var atInputStart: Bool
  /// The input ends with this batch.
  var isLast: Bool
  /// Where the batch starts in the input's structure, as the reader guessed it.
  var start = BatchStart.topLevel
  /// `--format list`: the merged list's elements before the input, as known when it was cut.
  var listElementsBefore = 0
}

/// Bytes handed from one thread to another in the very buffer they were made in, rather than
/// copied: a batch's input (the buffer the reader read it into; the reader is the one thread
/// every batch waits for), a batch's output (the worker's own output buffer). Read-only once
/// made; made with a `pool`, the buffer goes back to it when the last reference goes.
final class BatchBytes: @unchecked Sendable {
  private(set) var buffer: ByteBuffer
  private let pool: BufferPool?
  /// The bytes are known to be strictly valid UTF-8 (the reader checked them): the engine that
  /// adopts them need not check them again.
  let isValidUTF8: Bool

  init(
    taking buffer: consuming ByteBuffer, returningTo pool: BufferPool? = nil,
    isValidUTF8: Bool = false
  ) {
    self.buffer = buffer
    self.pool = pool
    self.isValidUTF8 = isValidUTF8
  }

  deinit {
    guard let pool else { return }
    pool.give(takeBuffer())
  }

  /// Calls `body` with the bytes, this object alive (and its buffer not yet given back) until
  /// `body` returns: for copies that outlast every other use of the object.
  func withBytes<Result>(_ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows
    -> Result
  {
    try body(buffer.bytes)
  }

  /// The buffer, leaving an empty one in its place (for ``BufferPool``, once nobody else holds
  /// this object).
  func takeBuffer() -> ByteBuffer {
    var taken = ByteBuffer(capacity: 0)
    swap(&taken, &buffer)
    return taken
  }
}

/// A batch's output: the worker's output buffer itself, taken whole (the worker goes on with an
/// empty one as large), or bytes put together here when there is more than one piece or rows
/// were patched (``BatchResult/addToRowIndexes(_:after:before:)``).
struct BatchOutput: Sendable {
  private var taken: BatchBytes? = nil
  private var assembled: [UInt8] = []

  init() {}

  init(_ bytes: [UInt8]) { assembled = bytes }

  var count: Int { taken?.buffer.count ?? assembled.count }

  /// A copy of the bytes (for tests and messages).
  var bytes: [UInt8] { withUnsafeBytes { Array($0) } }

  func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows
    -> Result
  {
    if let taken { return try body(UnsafeRawBufferPointer(taken.buffer.bytes)) }
    return try assembled.withUnsafeBytes(body)
  }

  /// Adds what `buffer` holds and leaves it empty: the first piece by taking the buffer itself
  /// (and leaving in its place an empty one from `pool`, or a new one of the same capacity), any
  /// later one by copying.
  mutating func append(taking buffer: inout ByteBuffer, pool: BufferPool? = nil) {
    if count == 0 && taken == nil {
      var replacement = pool?.take() ?? ByteBuffer(capacity: buffer.capacity)
      swap(&replacement, &buffer)
      taken = BatchBytes(taking: replacement, returningTo: pool)
      return
    }
    if let taken {
      assembled = Array(taken.buffer.bytes)
      self.taken = nil
    }
    assembled.append(contentsOf: buffer.bytes)
    buffer.count = 0
  }
}

/// What converting one batch produced.
struct BatchResult: Sendable {
  var output = BatchOutput()
  var rejects: [UInt8] = []
  var diagnostics: [ConversionDiagnostic] = []
  /// Where each reject and diagnostic falls among the output (``Results``).
  var marks: [ResultMark] = []
  var statistics = ConversionStatistics()
  var outcome: InputOutcome = .completed
  /// A document that continues into the next batch: its bytes and where it starts.
  var carry: [UInt8]? = nil
  var carryStart = TextPosition(line: 1, column: 1)
  /// A failure of the blob store that ended the run.
  var fatalFailure: ConversionIOError? = nil
  /// What the path found in the batch (for the report of an input with no document).
  var found = PathFindings()
  /// The carry is an envelope whose documents are array elements: one value, cut nowhere, so
  /// the input goes on on one thread from its start.
  var carryIsEnvelope = false
  /// Where in the input's structure the carry starts.
  var carryStartsAt = BatchStart.topLevel
  /// Where the batch was converted from.
  var startedAt = BatchStart.topLevel
  /// Where the next batch starts, when this one ended with nothing carried (nil after a carry,
  /// a stop, or the input's end).
  var next: BatchStart? = nil
  /// Ending between elements: the elements of the path's first array it read, counted from its
  /// start or (when the envelope began in it) from the envelope's.
  var elementsRead = 0
  var elementsCountFromBatchStart = false
  /// The elements before the batch that its rows' paths count (0 for a worker, which does not
  /// know them), and the end of the rows that count from there (``ConversionEngine/rowsIndexedFromBatchStart``).
  var elementsBefore = 0
  var rowsIndexedFromBatchStart: Int? = nil
  /// `--format list`: the merged list's elements the batch was told came before it, and the
  /// ones it wrote.
  var listElementsBefore = 0
  var listElementsWritten = 0
}

/// Converts one batch with `engine` (fresh batch state, results collected), after the bytes of
/// a document that the previous batch left open (`carry`, starting at `carryStart`), from
/// `start` in the input's structure (by default, where the reader guessed the batch starts).
///
/// `elementsBefore`: starting between elements, how many elements of the array came before
/// (when known; rows' paths count from it).
func convertBatch(
  _ batch: Batch, carry: [UInt8]? = nil, carryStart: TextPosition? = nil,
  start: BatchStart? = nil, elementsBefore: Int = 0, listElementsBefore: Int? = nil,
  with engine: ConversionEngine, buffers pool: BufferPool? = nil
) -> BatchResult {
  var result = BatchResult()
  engine.statistics = ConversionStatistics()
  // Only the whole input can tell that the path found no document in it.
  engine.reportsNoDocument = false
  result.startedAt = start ?? batch.start
  result.elementsBefore = elementsBefore
  result.listElementsBefore = listElementsBefore ?? batch.listElementsBefore
  engine.beginBatch(
    first: carryStart ?? batch.first, atInputStart: batch.atInputStart && carry == nil,
    start: result.startedAt, elementsBefore: elementsBefore,
    listElementsBefore: result.listElementsBefore)
  if let carry { carry.withUnsafeBytes { engine.feed($0) } }
  engine.feed(adopting: batch.bytes)
  if batch.isLast {
    result.outcome = engine.finishReading()
  } else {
    let end = engine.finishBatch()
    result.outcome = end.outcome
    result.next = end.next
    result.elementsRead = end.elementsRead
    result.elementsCountFromBatchStart = end.elementsCountFromBatchStart
    if let carry = end.carry {
      result.carry = carry.bytes
      result.carryStart = carry.first
      result.carryStartsAt = carry.start
      result.carryIsEnvelope = end.carriesEnvelope
    }
  }
  engine.moveResults(into: &result, buffers: pool)
  result.found = engine.foundInLastInput
  result.rowsIndexedFromBatchStart = engine.rowsIndexedFromBatchStart
  result.listElementsWritten = engine.listElementsInLastBatch
  result.fatalFailure = engine.fatalFailure
  result.statistics = engine.statistics
  result.statistics.bytesIn = 0
  return result
}

/// Worker threads that convert batches in any order; results are taken in batch order.
///
/// Each worker owns its own engine (and so its own yajl parser and buffers). The queue holds
/// at most a few batches per worker, which bounds memory. ``close()`` stops and joins the
/// workers; it must be called before the queue is dropped (the workers hold it).
final class WorkQueue: @unchecked Sendable {
  private let mutex = Mutex()
  private let workReady = Condition()
  private let resultReady = Condition()
  private var waiting: [Batch] = []
  private var results: [Int: BatchResult] = [:]
  private var closing = false
  private var converted = 0
  private var threads: [Thread] = []
  /// Workers that have started and not yet ended.
  private var running = 0
  private let runningChanged = Condition()
  let options: ConversionOptions
  let keepsRejects: Bool
  let capacities: EngineCapacities
  /// The run's blob store, shared by the workers.
  let store: BlobStore?
  /// The batches' input buffers and output buffers, given back for the next batches once done
  /// with (``BufferPool``).
  let inputBuffers: BufferPool
  let outputBuffers: BufferPool

  /// `batchBytes`: the size batches are cut at (``StreamConverter``'s), which sizes the buffers
  /// kept for them.
  init(
    workers: Int, options: ConversionOptions, keepsRejects: Bool, capacities: EngineCapacities,
    store: BlobStore? = nil, batchBytes: Int = 1 << 18
  ) {
    self.store = store
    self.options = options
    self.keepsRejects = keepsRejects
    self.capacities = capacities
    // Each as many as a run has batches at once: in flight (ParallelRun: at most 2 per thread)
    // and in the engines, of what such buffers hold (a batch's input buffer twice its size and a
    // line, its output half as much again as its input with blobs pushed): three batches' size
    // each, 4.5 MiB a pool with `--jobs 2`, 18 MiB with `--jobs 8`.
    let batchesAtOnce = 3 * (workers + 1)
    let keptBytes = batchesAtOnce * 3 * max(1, batchBytes)
    inputBuffers = BufferPool(limit: batchesAtOnce, keptBytes: keptBytes)
    outputBuffers = BufferPool(limit: batchesAtOnce, keptBytes: keptBytes)
    for _ in 0..<workers {
      guard let thread = Thread({ [self] in work() }) else { break }
      threads.append(thread)
    }
    // Every worker is waiting for work before the queue is used.
    mutex.withLock {
      while running < threads.count { runningChanged.wait(releasing: mutex) }
    }
  }

  /// How many worker threads are running (0 once the queue is closed).
  var runningWorkers: Int { mutex.withLock { running } }

  /// Whether any worker thread could be started.
  var hasWorkers: Bool { !threads.isEmpty }

  /// Batches converted so far, by the workers and by the waiting thread together, and results
  /// not yet taken (for tests: each batch is converted once, and each result taken).
  var conversionCounts: (converted: Int, untaken: Int) {
    mutex.withLock { (converted, results.count) }
  }

  func submit(_ batch: Batch) {
    mutex.withLock {
      waiting.append(batch)
      workReady.signal()
    }
  }

  /// Waits for batch `index` to be converted and takes its result. With `engine`, the waiting
  /// thread converts batches no worker has taken yet rather than sleep.
  ///
  /// Only one thread (the run's reading thread) calls this, so only it waits on `resultReady`.
  func result(for index: Int, helpingWith engine: ConversionEngine? = nil) -> BatchResult {
    mutex.lock()
    defer { mutex.unlock() }
    while true {
      if let result = results.removeValue(forKey: index) { return result }
      if let engine, !waiting.isEmpty {
        // The oldest batch waiting, which may come after `index`: should a worker finish
        // `index` meanwhile, its result waits for this conversion (one batch's time), which
        // costs less than a thread sleeping while there is work.
        let batch = waiting.removeFirst()
        mutex.unlock()
        let result = convertBatch(batch, with: engine, buffers: outputBuffers)
        mutex.lock()
        // No broadcast: the one thread that waits for results is this one.
        results[batch.index] = result
        converted += 1
        continue
      }
      resultReady.wait(releasing: mutex)
    }
  }

  /// Stops the workers (after the batches they are converting) and waits for them.
  func close() {
    mutex.withLock {
      closing = true
      waiting.removeAll()
      workReady.broadcast()
    }
    for thread in threads { thread.join() }
    threads.removeAll()
  }

  private func work() {
    let engine = ConversionEngine(
      options: options, keepsRejects: keepsRejects, capacities: capacities, store: store)
    mutex.withLock {
      running += 1
      runningChanged.broadcast()
    }
    defer {
      mutex.withLock {
        running -= 1
        runningChanged.broadcast()
      }
    }
    while true {
      mutex.lock()
      while waiting.isEmpty && !closing { workReady.wait(releasing: mutex) }
      if closing {
        mutex.unlock()
        return
      }
      let batch = waiting.removeFirst()
      mutex.unlock()
      let result = convertBatch(batch, with: engine, buffers: outputBuffers)
      mutex.withLock {
        results[batch.index] = result
        converted += 1
        resultReady.broadcast()
      }
    }
  }
}
