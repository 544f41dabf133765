// Unit tests reach internal types through @testable, which only debug builds allow; the release
// run of `make test` covers the build that ships with ConformanceTests and CLITests.
#if DEBUG

import Testing

@testable import LegacyAttachments

@Suite("Results: output, rejects and diagnostics go out in input order")
struct ResultsTests {
  private struct WriteFailed: Error {}

  private func diagnostic(_ message: String) -> ConversionDiagnostic {
    ConversionDiagnostic(severity: .error, kind: .notAnObject, line: 1, column: 1, message: message)
  }

  /// Two good documents, a rejected one (its text, then its error), then a third good one.
  private func sample() -> Results {
    var results = Results(outputCapacity: 16)
    Array("{\"a\":1}\n{\"b\":2}\n".utf8).withUnsafeBufferPointer { results.output.append($0) }
    Array("[3]".utf8).withUnsafeBufferPointer { results.addReject($0, ends: true) }
    results.report(diagnostic("bad"))
    Array("{\"c\":4}\n".utf8).withUnsafeBufferPointer { results.output.append($0) }
    return results
  }

  @Test("delivery interleaves the three streams at their marks, and clears them")
  func order() {
    var results = sample()
    var events: [String] = []
    results.deliver(
      output: { events.append("out " + String(decoding: $0, as: UTF8.self)) },
      rejects: { bytes, _ in events.append("rej " + String(decoding: bytes, as: UTF8.self)) },
      diagnostic: { events.append("msg " + $0.message) })
    #expect(events == ["out {\"a\":1}\n{\"b\":2}\n", "rej [3]\n", "msg bad", "out {\"c\":4}\n"])
    let cleared = results.output.count == 0 && results.rejects.count == 0 && !results.hasMarks
    #expect(cleared)
  }

  @Test("a failed write stops the delivery: nothing after it is written or reported")
  func failureStops() {
    var results = sample()
    var events: [String] = []
    do throws(WriteFailed) {
      try results.deliver(
        output: { bytes throws(WriteFailed) in events.append("out \(bytes.count)") },
        rejects: { _, _ throws(WriteFailed) in throw WriteFailed() },
        diagnostic: { events.append("msg " + $0.message) })
      Issue.record("the failing rejects write did not end the delivery")
    } catch {}
    // The document that could not be saved is not reported either.
    #expect(events == ["out 16"])
  }

  @Test("moving into a batch shifts the marks to the batch's coordinates")
  func moveIntoBatch() {
    var batch = BatchResult()
    var first = sample()
    first.move(into: &batch)
    var second = sample()
    second.move(into: &batch)
    #expect(
      batch.marks == [
        ResultMark(output: 16, rejects: 4, diagnostics: 0),
        ResultMark(output: 16, rejects: 4, diagnostics: 1),
        ResultMark(output: 24 + 16, rejects: 8, diagnostics: 1),
        ResultMark(output: 24 + 16, rejects: 8, diagnostics: 2),
      ])
    var order: [String] = []
    batch.output.withUnsafeBytes { output in
      batch.rejects.withUnsafeBytes { rejects in
        Results.deliver(
          output: output, rejects: rejects, diagnostics: batch.diagnostics, marks: batch.marks,
          writeOutput: { order.append("out \($0.count)") },
          writeRejects: { bytes, _ in order.append("rej \(bytes.count)") },
          report: { order.append("msg " + $0.message) })
      }
    }
    #expect(
      order == [
        "out 16", "rej 4", "msg bad", "out 24", "rej 4", "msg bad", "out 8",
      ])
  }

  @Test("moving into a batch takes the output buffer itself, and copies only a second piece")
  func moveTakesTheOutputBuffer() {
    var batch = BatchResult()
    var first = sample()
    let capacity = first.output.capacity
    first.move(into: &batch)
    // The engine goes on with an empty buffer as large; positions go on from the moved bytes.
    #expect(first.output.count == 0 && first.output.capacity == capacity)
    #expect(first.outputPosition == 24)
    Array("{\"d\":5}\n".utf8).withUnsafeBufferPointer { first.output.append($0) }
    first.move(into: &batch)
    var second = sample()
    second.move(into: &batch)
    #expect(
      String(decoding: batch.output.bytes, as: UTF8.self)
        == "{\"a\":1}\n{\"b\":2}\n{\"c\":4}\n{\"d\":5}\n{\"a\":1}\n{\"b\":2}\n{\"c\":4}\n")
    #expect(batch.output.count == 56 && first.output.count == 0 && second.output.count == 0)
  }

  @Test("a rejected text saved in pieces is complete only with its last piece")
  func piecesOfARejectedText() {
    var results = Results(outputCapacity: 16)
    Array("{\"a\":".utf8).withUnsafeBufferPointer { results.addReject($0, ends: false) }
    Array("tru".utf8).withUnsafeBufferPointer { results.addReject($0, ends: false) }
    results.addReject(UnsafeBufferPointer(start: nil, count: 0), ends: true)
    results.report(diagnostic("bad"))
    var pieces: [String] = []
    results.deliver(
      output: { _ in }, rejects: { pieces.append("\($0.count) \($1)") }, diagnostic: { _ in })
    #expect(pieces == ["5 false", "3 false", "1 true"])
  }
}

#endif
