/// A place in ``Results``: how much output, rejected text and how many diagnostics come before
/// it, counted from the start of the run (so that handing some over changes no place kept).
/// Results are handed over in the order of their marks, which is input order.
struct ResultMark: Sendable, Equatable, BitwiseCopyable {
  var output: Int
  var rejects: Int
  var diagnostics: Int
  /// Whether the rejected text up to here ends a rejected document (a long one is saved in
  /// pieces).
  var rejectsComplete = true
}

/// What the engine has produced and not yet handed over: converted output, the original text of
/// rejected documents, diagnostics, and where each reject and diagnostic falls among the output.
///
/// Handing them over in mark order (``deliver(output:rejects:diagnostic:)``) interleaves them
/// exactly as the documents came, so a failed write stops everything after the document it
/// failed on: no later output, reject or message. Output that may still be taken back (an
/// envelope's element being converted, or everything since the last place the envelope could
/// be closed) is held back (``undeliverableFrom``); ``checkpoint()`` and ``rollback(to:)`` take
/// it back. Every position counts from the start of the run, like a stream offset, so that none
/// goes stale when a prefix is handed over.
struct Results: ~Copyable {
  /// What is not handed over yet: the output from ``delivered``'s output on, and so on.
  var output: ByteBuffer
  var rejects: ByteBuffer
  var diagnostics: [ConversionDiagnostic] = []
  var marks: [ResultMark] = []
  var statistics = ConversionStatistics()
  /// How much has been handed over.
  private(set) var delivered = ResultMark(output: 0, rejects: 0, diagnostics: 0)
  /// What may still be taken back, from this place on, is not handed over: output from its
  /// output position, and the marks past it. Nil: everything may go.
  var undeliverableFrom: ResultMark? = nil
  /// Whether the rejected text so far ends a rejected document.
  private var rejectsComplete = true

  init(outputCapacity: Int) {
    output = ByteBuffer(capacity: outputCapacity)
    rejects = ByteBuffer(capacity: 1024)
  }

  /// The position of the next output byte.
  var outputPosition: Int { delivered.output + output.count }

  /// Whether a reject or a diagnostic is waiting (so results should go out now, in order).
  var hasMarks: Bool { !marks.isEmpty }

  /// Output bytes that may be handed over now.
  var deliverableCount: Int {
    guard let held = undeliverableFrom else { return output.count }
    return min(held.output, outputPosition) - delivered.output
  }

  /// Adds rejected text. A rejected document's text may come in several pieces (a long skip is
  /// saved as it is read); `ends` closes it with a newline.
  mutating func addReject(_ text: UnsafeBufferPointer<UInt8>, ends: Bool) {
    rejects.append(text)
    if ends { rejects.append(UInt8(ascii: "\n")) }
    rejectsComplete = ends
    mark()
  }

  mutating func report(_ diagnostic: ConversionDiagnostic) {
    diagnostics.append(diagnostic)
    mark()
  }

  private mutating func mark() {
    marks.append(
      ResultMark(
        output: outputPosition, rejects: delivered.rejects + rejects.count,
        diagnostics: delivered.diagnostics + diagnostics.count, rejectsComplete: rejectsComplete))
  }

  // MARK: Taking back

  /// A place to come back to: everything produced after it is taken back by ``rollback(to:)``.
  struct Checkpoint: BitwiseCopyable {
    var position: ResultMark
    var marks: Int
    var statistics: ConversionStatistics
  }

  func checkpoint() -> Checkpoint {
    Checkpoint(
      position: ResultMark(
        output: outputPosition, rejects: delivered.rejects + rejects.count,
        diagnostics: delivered.diagnostics + diagnostics.count, rejectsComplete: rejectsComplete),
      marks: marks.count, statistics: statistics)
  }

  /// Takes back everything produced since `checkpoint` (output, rejects, diagnostics, counts),
  /// except, unless `keepingReadCounts` is false (what was read is read again), the counts of
  /// what was read (documents, blobs, bytes). Nothing after it has been handed over: it was held
  /// back.
  mutating func rollback(to checkpoint: Checkpoint, keepingReadCounts: Bool = true) {
    let position = checkpoint.position
    precondition(position.output >= delivered.output, "taking back output already handed over")
    output.count = position.output - delivered.output
    rejects.count = position.rejects - delivered.rejects
    let keptDiagnostics = position.diagnostics - delivered.diagnostics
    if diagnostics.count > keptDiagnostics {
      diagnostics.removeLast(diagnostics.count - keptDiagnostics)
    }
    while let last = marks.last,
      last.output > position.output || last.rejects > position.rejects
        || last.diagnostics > position.diagnostics
    {
      marks.removeLast()
    }
    rejectsComplete = position.rejectsComplete
    guard keepingReadCounts else {
      let bytesIn = statistics.bytesIn
      statistics = checkpoint.statistics
      statistics.bytesIn = bytesIn
      return
    }
    let documents = statistics.documents
    let blobs = statistics.blobs
    let bytesIn = statistics.bytesIn
    statistics = checkpoint.statistics
    statistics.documents = documents
    statistics.blobs = blobs
    statistics.bytesIn = bytesIn
  }

  // MARK: Handing over

  /// Hands over what may be handed over, in input order, and keeps the rest: output, rejected
  /// text (with whether it ends a rejected document) and diagnostics. A throwing handler stops
  /// the delivery where it failed (what was due is dropped all the same).
  mutating func deliver<Failure: Error>(
    output writeOutput: (UnsafeRawBufferPointer) throws(Failure) -> Void,
    rejects writeRejects: (UnsafeRawBufferPointer, _ completesDocument: Bool) throws(Failure) ->
      Void,
    diagnostic report: (ConversionDiagnostic) -> Void
  ) throws(Failure) {
    let limit = delivered.output + deliverableCount
    let held = undeliverableFrom
    // Marks at or before the limit go, with everything before them; the rest waits.
    let due = marks.prefix { mark in
      guard mark.output <= limit else { return false }
      guard let held else { return true }
      return mark.rejects <= held.rejects && mark.diagnostics <= held.diagnostics
    }
    let through = ResultMark(
      output: limit, rejects: due.last?.rejects ?? delivered.rejects,
      diagnostics: due.last?.diagnostics ?? delivered.diagnostics)
    let base = delivered
    defer { handedOver(through: through, marks: due.count) }
    try Self.deliver(
      output: UnsafeRawBufferPointer(
        rebasing: UnsafeRawBufferPointer(output.bytes)[..<(through.output - base.output)]),
      rejects: UnsafeRawBufferPointer(
        rebasing: UnsafeRawBufferPointer(rejects.bytes)[..<(through.rejects - base.rejects)]),
      diagnostics: Array(diagnostics[..<(through.diagnostics - base.diagnostics)]),
      marks: due.map {
        ResultMark(
          output: $0.output - base.output, rejects: $0.rejects - base.rejects,
          diagnostics: $0.diagnostics - base.diagnostics, rejectsComplete: $0.rejectsComplete)
      }, writeOutput: writeOutput, writeRejects: writeRejects, report: report)
  }

  /// Delivers `output`, `rejects` and `diagnostics` interleaved at `marks` (positions within
  /// these buffers).
  static func deliver<Failure: Error>(
    output: UnsafeRawBufferPointer, rejects: UnsafeRawBufferPointer,
    diagnostics: [ConversionDiagnostic],
    marks: [ResultMark],
    writeOutput: (UnsafeRawBufferPointer) throws(Failure) -> Void,
    writeRejects: (UnsafeRawBufferPointer, _ completesDocument: Bool) throws(Failure) -> Void,
    report: (ConversionDiagnostic) -> Void
  ) throws(Failure) {
    var done = ResultMark(output: 0, rejects: 0, diagnostics: 0)
    for mark in marks {
      if mark.output > done.output {
        try writeOutput(UnsafeRawBufferPointer(rebasing: output[done.output..<mark.output]))
      }
      if mark.rejects > done.rejects {
        try writeRejects(
          UnsafeRawBufferPointer(rebasing: rejects[done.rejects..<mark.rejects]),
          mark.rejectsComplete)
      }
      for index in done.diagnostics..<mark.diagnostics { report(diagnostics[index]) }
      done = mark
    }
    // Output after the last mark (rejects and diagnostics always come with one).
    if output.count > done.output {
      try writeOutput(UnsafeRawBufferPointer(rebasing: output[done.output...]))
    }
  }

  /// Moves everything into `batch` (marks moved to its coordinates) and hands it over: the
  /// output buffer itself, so that the bytes are not copied (going on with one from `pool`), the
  /// rest by copying. (A batch ends between whole documents: nothing is held back at its end.)
  mutating func move(into batch: inout BatchResult, buffers pool: BufferPool? = nil) {
    let base = delivered
    for mark in marks {
      batch.marks.append(
        ResultMark(
          output: batch.output.count + mark.output - base.output,
          rejects: batch.rejects.count + mark.rejects - base.rejects,
          diagnostics: batch.diagnostics.count + mark.diagnostics - base.diagnostics,
          rejectsComplete: mark.rejectsComplete))
    }
    let outputCount = output.count
    batch.output.append(taking: &output, pool: pool)
    delivered.output += outputCount
    batch.rejects.append(contentsOf: rejects.bytes)
    batch.diagnostics.append(contentsOf: diagnostics)
    handedOver(
      through: ResultMark(
        output: delivered.output, rejects: base.rejects + rejects.count,
        diagnostics: base.diagnostics + diagnostics.count),
      marks: marks.count)
  }

  /// Forgets what was handed over, up to `through`, and the first `marks` marks.
  private mutating func handedOver(through: ResultMark, marks count: Int) {
    output.removeFirst(through.output - delivered.output)
    rejects.removeFirst(through.rejects - delivered.rejects)
    diagnostics.removeFirst(through.diagnostics - delivered.diagnostics)
    marks.removeFirst(count)
    delivered.output = through.output
    delivered.rejects = through.rejects
    delivered.diagnostics = through.diagnostics
    if output.count == 0 { output.shrink(ifAbove: 1 << 22) }
    if rejects.count == 0 { rejects.shrink(ifAbove: 1 << 22) }
  }
}
