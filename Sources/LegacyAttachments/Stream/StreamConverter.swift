/// Converts whole inputs (files, pipes, standard input) to an output descriptor.
///
/// ```swift
/// let converter = StreamConverter(
///   options: ConversionOptions(mode: .push), output: FileDescriptorSink(.standardOutput))
/// converter.diagnosticHandler = { diagnostic, input in print(diagnostic.formatted(inputName: input)) }
/// let outcome = try converter.convert(.standardInput, name: "<stdin>")
/// try converter.finish()
/// ```
///
/// `docs/library.md` has a whole example (a file converted into another, bad documents set
/// aside), compiled and run by the tests.
///
/// Output only ever holds whole documents; it is written when 64 KiB have gathered, at the end,
/// when a rejected document or a diagnostic is waiting (so that everything goes out in input
/// order), and with ``unbuffered`` after every document.
///
/// It converts with the options it is given: check them first as the command line does, with
/// ``ConversionOptions/validate()`` (and a blob store's folder with
/// ``BlobStoreOptions/check(_:creating:)``).
public final class StreamConverter {
  /// What the conversion does, as given (not checked here: see ``ConversionOptions/validate()``).
  public let options: ConversionOptions
  /// Where converted documents (or `--list` and `--check` rows) go.
  public let output: any ByteSink
  /// Where rejected documents' original text goes (`--rejects`), if anywhere. Without it,
  /// errors that reject input say what was skipped.
  public let rejects: (any ByteSink)?
  /// Called for every warning and error, with the name of the input it is in.
  public var diagnosticHandler: (ConversionDiagnostic, String) -> Void = { _, _ in }
  /// Called after each read with the bytes read so far from the current input.
  public var progressHandler: ((Int, ConversionStatistics) -> Void)? = nil
  /// Write each document as soon as it is converted (for `tail -f` pipelines).
  public var unbuffered = false
  /// Bytes asked of each `read(2)` (or taken of `convert(bytes:)`'s bytes at a time); tests set
  /// tiny sizes to split documents anywhere. Sizes below 1 are taken as 1.
  public var readSize = 1 << 18 {
    didSet { if readSize < 1 { readSize = 1 } }
  }
  /// Threads that convert (1: the calling thread alone) NDJSON, envelopes one per line, and
  /// one envelope whose rows are one per line (cut between them): `jobs - 1` worker threads and
  /// the calling thread, which also reads and writes. Only ``convert(_:name:)`` (a descriptor)
  /// uses them; `convert(bytes:)` and `convert(from:)` run on the calling thread. Output is in
  /// input order and the same whatever the number.
  public var jobs = 1
  /// Bytes per batch with several jobs: big enough that a worker spends its time in yajl and
  /// the hand-over is rare, small enough that a batch and its output stay in a core's L2 cache
  /// (256 KiB: 1.84x of one thread on 2 cores for pull, against 1.68x with 1 MiB batches, when
  /// workers still copied both; issue 29). Tests make it tiny to cut documents everywhere.
  @_spi(Testing) public var batchBytes = 1 << 18
  /// Batches that started between the elements of an envelope begun in an earlier batch and
  /// were written as a worker converted them (for the tests: they show that one envelope was
  /// spread over threads).
  @_spi(Testing) public internal(set) var batchesStartedBetweenElements = 0
  /// The engines' starting buffer sizes (tests make them tiny).
  let capacities: EngineCapacities

  /// Counters of work done outside the engine (parallel runs): bytes read, and results of
  /// batches.
  var statisticsOffset = ConversionStatistics()
  /// The worker threads of a parallel run, started by the first input converted in parallel and
  /// kept for the next inputs.
  private(set) var workQueue: WorkQueue? = nil

  let engine: ConversionEngine
  private var currentInput = "<stdin>"

  /// A converter of inputs with `options` to `output`, and of rejected documents' original text
  /// to `rejects` when it is given (`--rejects`).
  public convenience init(
    options: ConversionOptions, output: any ByteSink, rejects: (any ByteSink)? = nil
  ) {
    self.init(options: options, output: output, rejects: rejects, capacities: .standard)
  }

  @_spi(Testing) public init(
    options: ConversionOptions, output: any ByteSink, rejects: (any ByteSink)?,
    capacities: EngineCapacities
  ) {
    self.options = options
    self.output = output
    self.rejects = rejects
    self.capacities = capacities
    store = options.blobs.map { BlobStore(options: $0) }
    bodies = BodyAssembler.forRun(options)
    engine = ConversionEngine(
      options: options, keepsRejects: rejects != nil, capacities: capacities, store: store)
    engine.drain = { [unowned self] results in
      do throws(ConversionIOError) {
        try self.deliver(from: &results)
        return true
      } catch {
        self.drainFailure = error
        return false
      }
    }
  }

  /// A failed write while results were handed over in the middle of a parse.
  private var drainFailure: ConversionIOError? = nil

  /// With `--bulk-docs`: what groups the documents, once in input order, into bodies.
  private let bodies: BodyAssembler?

  /// The run's blob store (`--blobs`), shared by every engine of the run.
  let store: BlobStore?

  /// A converter dropped without ``finish()`` stops its worker threads.
  deinit { dropWorkQueue() }

  /// Counters so far.
  public var statistics: ConversionStatistics {
    var total = engine.statistics
    total.add(statisticsOffset)
    return total
  }

  /// Whether this run converts on several threads: NDJSON, envelopes one per line, one
  /// envelope (or `--format list` array) cut between its elements; `_bulk_docs` bodies too
  /// (they are laid out after the batches are in order). Not `--blobs`: a
  /// document's output can then be thousands of times its input, and a batch holds the output
  /// of all its documents, so memory would not stay bounded by one output document.
  private var runsInParallel: Bool {
    jobs > 1 && options.blobs == nil && !unbuffered
  }

  /// Converts everything readable from the descriptor numbered `descriptor`: a
  /// ``SystemFileDescriptor``'s number. (Every other call takes the descriptor itself; this one
  /// stays for the code written against 2.x.)
  @available(*, deprecated, message: "use convert(SystemFileDescriptor(rawValue: n), name:)")
  public func convert(descriptor: Int32, name: String) throws(ConversionIOError) -> InputOutcome {
    try convert(SystemFileDescriptor(rawValue: descriptor), name: name)
  }

  /// Converts everything readable from `descriptor`, named `name` in messages.
  public func convert(_ descriptor: SystemFileDescriptor, name: String) throws(ConversionIOError)
    -> InputOutcome
  {
    precondition(!isFinished, "StreamConverter: convert after finish()")
    currentInput = name
    if runsInParallel {
      if workQueue == nil {
        workQueue = WorkQueue(
          // The thread that reads and writes converts too (ParallelRun): with `jobs - 1`
          // workers, `jobs` threads convert and none waits for a core.
          workers: jobs - 1, options: options, keepsRejects: rejects != nil, capacities: capacities,
          store: store, batchBytes: batchBytes)
      }
      if let queue = workQueue, queue.hasWorkers {
        do {
          let outcome = try ParallelRun(
            converter: self, descriptor: descriptor, name: name, queue: queue
          ).run()
          if outcome != .completed { dropWorkQueue() }
          return outcome
        } catch {
          dropWorkQueue()
          throw error
        }
      }
    }
    engine.lineAtATime = unbuffered
    return try readToEnd(descriptor, name: name, alreadyRead: 0)
  }

  /// Converts what is left of `descriptor` on this thread, with ``engine``.
  func readToEnd(_ descriptor: SystemFileDescriptor, name: String, alreadyRead: Int)
    throws(ConversionIOError)
    -> InputOutcome
  {
    var total = alreadyRead
    while engine.stop == nil {
      let count = try engine.read(from: descriptor, maximum: readSize, name: name)
      total += count
      try deliver(final: count == 0)
      if let failure = drainFailure ?? engine.fatalFailure { throw failure }
      progressHandler?(total, statistics)
      if count == 0 { break }
    }
    let outcome = engine.finishReading()
    if let failure = drainFailure { throw failure }
    try deliver(final: true)
    if let failure = engine.fatalFailure { throw failure }
    return outcome
  }

  /// Continues an input on this thread from the middle: `carry` then `pending` (already read
  /// and counted) start at `first`, at `start` in the input's structure. With `readFailure`, the
  /// read after them failed: the input ends there with that error, as on one thread.
  func continueOnThisThread(
    _ descriptor: SystemFileDescriptor, name: String, carry: [UInt8]?,
    pending: UnsafeRawBufferPointer,
    first: TextPosition, atInputStart: Bool, start: BatchStart, elementsBefore: Int,
    alreadyRead: Int, foundBefore: PathFindings, readFailure: SystemErrno? = nil
  ) throws(ConversionIOError) -> InputOutcome {
    engine.lineAtATime = false
    engine.beginBatch(
      first: first, atInputStart: atInputStart, start: start, elementsBefore: elementsBefore)
    engine.reportsNoDocument = true
    engine.foundBefore = foundBefore
    engine.statistics.bytesIn -= (carry?.count ?? 0) + pending.count
    if let carry {
      var failure: ConversionIOError? = nil
      carry.withUnsafeBytes { bytes in
        do throws(ConversionIOError) { try feedInPieces(bytes) } catch { failure = error }
      }
      if let failure { throw failure }
    }
    try feedInPieces(pending)
    if let readFailure {
      engine.inputUnreadable()
      throw ConversionIOError(operation: .read, errno: readFailure, target: name)
    }
    return try readToEnd(descriptor, name: name, alreadyRead: alreadyRead)
  }

  /// Feeds bytes already read a read's worth at a time, handing the results over as it goes:
  /// megabytes fed at once would grow the window and the output to hold them all, and the rest
  /// of the input would then be parsed from memory that no longer fits in the caches.
  private func feedInPieces(_ bytes: UnsafeRawBufferPointer) throws(ConversionIOError) {
    var offset = 0
    while offset < bytes.count && engine.stop == nil {
      let length = min(max(1, readSize), bytes.count - offset)
      engine.feed(UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + length]))
      offset += length
      try deliver(final: false)
      if let failure = drainFailure ?? engine.fatalFailure { throw failure }
    }
  }

  /// Converts bytes already in memory as one input named `name`.
  public func convert(bytes: UnsafeRawBufferPointer, name: String) throws(ConversionIOError)
    -> InputOutcome
  {
    beginInput(name)
    var offset = 0
    while offset < bytes.count && engine.stop == nil {
      let length = min(readSize, bytes.count - offset)
      try feedAndDeliver(UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + length]))
      offset += length
    }
    return try endInput()
  }

  /// Converts one input read from `source`, whatever it is (a socket, a decompressor, a
  /// ``ClosureSource``), on the calling thread, `readSize` bytes at a time.
  public func convert(from source: inout some ByteSource, name: String) throws(ConversionIOError)
    -> InputOutcome
  {
    beginInput(name)
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, readSize), alignment: 1)
    defer { buffer.deallocate() }
    var total = 0
    while engine.stop == nil {
      let count = try source.read(into: buffer)
      guard count > 0 else { break }
      total += count
      try feedAndDeliver(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
      progressHandler?(total, statistics)
    }
    return try endInput()
  }

  /// The start, a piece and the end of an input held or read on the calling thread.
  private func beginInput(_ name: String) {
    precondition(!isFinished, "StreamConverter: convert after finish()")
    currentInput = name
    engine.lineAtATime = unbuffered
  }

  private func feedAndDeliver(_ bytes: UnsafeRawBufferPointer) throws(ConversionIOError) {
    engine.feed(bytes)
    try deliver(final: false)
    if let failure = drainFailure ?? engine.fatalFailure { throw failure }
  }

  private func endInput() throws(ConversionIOError) -> InputOutcome {
    let outcome = engine.finishReading()
    if let failure = drainFailure { throw failure }
    try deliver(final: true)
    if let failure = engine.fatalFailure { throw failure }
    return outcome
  }

  /// Reports that the path found no document in the input just converted in batches (which
  /// cannot tell it each on its own).
  func reportNoDocument(findings: PathFindings) {
    guard !options.documents.steps.isEmpty else { return }
    let diagnostic = DocumentHandler.noDocument(options, findings: findings)
    if diagnostic.severity == .error {
      statisticsOffset.errors += 1
    } else {
      statisticsOffset.warnings += 1
    }
    diagnosticHandler(diagnostic, currentInput)
  }

  /// Stops the worker threads (a stopped run leaves batches behind that nobody will take).
  private func dropWorkQueue() {
    workQueue?.close()
    workQueue = nil
  }

  /// Whether ``finish()`` has ended the run.
  public private(set) var isFinished = false

  /// Ends the run: closes `--format list` output and writes what is left. A converter is
  /// finished once: a second call does nothing, and converting after it is a programming error
  /// (it traps), for the output is complete.
  public func finish() throws(ConversionIOError) {
    guard !isFinished else { return }
    isFinished = true
    dropWorkQueue()
    engine.finishOutput()
    try deliver(final: true)
    try bodies?.finish { body throws(ConversionIOError) in try writeBody(body) }
  }

  /// Writes converted output, in input order: through ``bodies`` with `--bulk-docs`.
  private func writeOutput(_ bytes: UnsafeRawBufferPointer) throws(ConversionIOError) {
    guard let bodies else {
      statisticsOffset.bytesOut += bytes.count
      try output.write(bytes, after: 0)
      return
    }
    try bodies.append(lines: bytes) { body throws(ConversionIOError) in try writeBody(body) }
  }

  private func writeBody(_ body: UnsafeRawBufferPointer) throws(ConversionIOError) {
    statisticsOffset.bytesOut += body.count
    try output.write(body, after: 0)
  }

  /// Bytes of a rejected document written to ``rejects`` so far, while it is written in pieces.
  private var unfinishedReject = 0

  /// Writes rejected text; on failure the rejects file is cut back to its last whole document.
  private func writeRejects(_ bytes: UnsafeRawBufferPointer, completesDocument: Bool)
    throws(ConversionIOError)
  {
    guard let rejects else { return }
    do {
      try rejects.write(bytes, after: unfinishedReject)
    } catch {
      // The run ends here. The documents before this one are output, as without bodies: the
      // body they are in is closed short.
      try? bodies?.finish { body throws(ConversionIOError) in try writeBody(body) }
      throw error
    }
    unfinishedReject = completesDocument ? 0 : unfinishedReject + bytes.count
  }

  /// Writes a batch's results, in order.
  func deliver(_ result: BatchResult) throws(ConversionIOError) {
    statisticsOffset.add(result.statistics)
    let report = diagnosticHandler
    let input = currentInput
    var failure: ConversionIOError? = nil
    result.output.withUnsafeBytes { outputBytes in
      result.rejects.withUnsafeBytes { rejectBytes in
        do throws(ConversionIOError) {
          try Results.deliver(
            output: outputBytes, rejects: rejectBytes, diagnostics: result.diagnostics,
            marks: result.marks,
            writeOutput: { bytes throws(ConversionIOError) in try writeOutput(bytes) },
            writeRejects: { bytes, completes throws(ConversionIOError) in
              try writeRejects(bytes, completesDocument: completes)
            },
            report: { report($0, input) })
        } catch {
          failure = error
        }
      }
    }
    if let failure { throw failure }
  }

  /// Hands over what `results` holds (the engine's, lent in the middle of a parse).
  private func deliver(from results: inout Results) throws(ConversionIOError) {
    let report = diagnosticHandler
    let input = currentInput
    try results.deliver(
      output: { bytes throws(ConversionIOError) in try writeOutput(bytes) },
      rejects: { bytes, completes throws(ConversionIOError) in
        try writeRejects(bytes, completesDocument: completes)
      },
      diagnostic: { report($0, input) })
  }

  private func deliver(final: Bool) throws(ConversionIOError) {
    // With a rejected document or a diagnostic waiting, everything goes out now, in input
    // order, so that a failing rejects file stops the output exactly before the document it
    // could not save, and nothing after it is reported.
    guard
      final || unbuffered || engine.hasPendingMarks || engine.pendingOutputCount >= 1 << 16
    else { return }
    let report = diagnosticHandler
    let input = currentInput
    try engine.deliver(
      output: { bytes throws(ConversionIOError) in try writeOutput(bytes) },
      rejects: { bytes, completes throws(ConversionIOError) in
        try writeRejects(bytes, completesDocument: completes)
      },
      diagnostic: { report($0, input) })
  }
}
