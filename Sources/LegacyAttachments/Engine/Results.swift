/// A place in ``Results``: how much output, rejected text and how many diagnostics come before
/// it. Results are handed over in the order of their marks, which is input order.
struct ResultMark: Sendable, Equatable {
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
/// failed on: no later output, reject or message.
struct Results: ~Copyable {
  var output: ByteBuffer
  var rejects: ByteBuffer
  var diagnostics: [Diagnostic] = []
  var marks: [ResultMark] = []
  var statistics = Statistics()

  init(outputCapacity: Int) {
    output = ByteBuffer(capacity: outputCapacity)
    rejects = ByteBuffer(capacity: 1024)
  }

  /// Whether a reject or a diagnostic is waiting (so results should go out now, in order).
  var hasMarks: Bool { !marks.isEmpty }

  /// Adds rejected text. A rejected document's text may come in several pieces (a long skip is
  /// saved as it is read); `ends` closes it with a newline.
  mutating func addReject(_ text: UnsafeBufferPointer<UInt8>, ends: Bool) {
    rejects.append(text)
    if ends { rejects.append(UInt8(ascii: "\n")) }
    rejectsComplete = ends
    mark()
  }

  mutating func report(_ diagnostic: Diagnostic) {
    diagnostics.append(diagnostic)
    mark()
  }

  /// Whether the rejected text so far ends a rejected document.
  private var rejectsComplete = true

  private mutating func mark() {
    marks.append(
      ResultMark(
        output: output.count, rejects: rejects.count, diagnostics: diagnostics.count,
        rejectsComplete: rejectsComplete))
  }

  /// Hands everything over in input order and clears it: output, rejected text (with whether
  /// it ends a rejected document) and diagnostics. A throwing handler stops the delivery where
  /// it failed (the results are cleared all the same).
  mutating func deliver<Failure: Error>(
    output writeOutput: (UnsafeRawBufferPointer) throws(Failure) -> Void,
    rejects writeRejects: (UnsafeRawBufferPointer, _ completesDocument: Bool) throws(Failure) ->
      Void,
    diagnostic report: (Diagnostic) -> Void
  ) throws(Failure) {
    defer { clear() }
    let outputBytes = UnsafeRawBufferPointer(output.bytes)
    let rejectBytes = UnsafeRawBufferPointer(rejects.bytes)
    try Self.deliver(
      output: outputBytes, rejects: rejectBytes, diagnostics: diagnostics, marks: marks,
      writeOutput: writeOutput, writeRejects: writeRejects, report: report)
  }

  /// Delivers `output`, `rejects` and `diagnostics` interleaved at `marks`.
  static func deliver<Failure: Error>(
    output: UnsafeRawBufferPointer, rejects: UnsafeRawBufferPointer, diagnostics: [Diagnostic],
    marks: [ResultMark],
    writeOutput: (UnsafeRawBufferPointer) throws(Failure) -> Void,
    writeRejects: (UnsafeRawBufferPointer, _ completesDocument: Bool) throws(Failure) -> Void,
    report: (Diagnostic) -> Void
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

  /// Copies everything into `batch` (marks moved to its coordinates) and clears it.
  mutating func move(into batch: inout BatchResult) {
    for mark in marks {
      batch.marks.append(
        ResultMark(
          output: batch.output.count + mark.output, rejects: batch.rejects.count + mark.rejects,
          diagnostics: batch.diagnostics.count + mark.diagnostics,
          rejectsComplete: mark.rejectsComplete))
    }
    batch.output.append(contentsOf: output.bytes)
    batch.rejects.append(contentsOf: rejects.bytes)
    batch.diagnostics.append(contentsOf: diagnostics)
    clear()
  }

  private mutating func clear() {
    output.count = 0
    output.shrink(ifAbove: 1 << 22)
    rejects.count = 0
    rejects.shrink(ifAbove: 1 << 22)
    if !diagnostics.isEmpty { diagnostics.removeAll() }
    if !marks.isEmpty { marks.removeAll(keepingCapacity: true) }
  }
}
