// Unit tests reach internal types through @testable, which only debug builds allow; the release
// run of `make test` covers the build that ships with ConformanceTests and CLITests.
#if DEBUG

import Dispatch
import Testing

@_spi(Testing) @testable import LegacyAttachments

@Suite("Work queue: the waiting thread converts batches no worker has taken")
struct WorkQueueTests {
  /// What a run of the queue gave: each result's text in the order asked for, the documents
  /// its results counted, and the queue's counts once every result was taken.
  private struct Outcome: Sendable {
    var texts: [Int: String] = [:]
    var documents = 0
    var converted = 0
    var untaken = 0
  }

  /// One document a batch, each whole, the last one the input's end.
  private static func batches(_ count: Int) -> [Batch] {
    (0..<count).map { index in
      var buffer = ByteBuffer(capacity: 16)
      let line = "{\"n\":\(index),\"p\":{\"@type\":\"blob\",\"digest\":\"sha1-\(index)\"}}\n"
      Array(line.utf8).withUnsafeBufferPointer { buffer.append($0) }
      return Batch(
        index: index, bytes: BatchBytes(taking: buffer),
        first: TextPosition(line: index + 1, column: 1), atInputStart: index == 0,
        isLast: index == count - 1)
    }
  }

  /// What one engine, converting the batches one after another, gives for each.
  private static func expected(_ count: Int) -> [String] {
    let engine = ConversionEngine(options: ConversionOptions(mode: .push))
    return batches(count).map { text(convertBatch($0, with: engine)) }
  }

  private static func text(_ result: BatchResult) -> String {
    String(decoding: result.output.bytes, as: UTF8.self)
  }

  /// Submits `count` batches to a queue of `workers` workers, then takes their results in
  /// `order`, helping or not, on a thread of its own. A broken queue tends to wait, or spin,
  /// forever rather than give a wrong result: nil (and a recorded failure) when the run has not
  /// ended within a minute. The thread is then left as it is; the test process ends without it.
  private func run(
    workers: Int, batches count: Int, order: [Int], helping: Bool
  ) -> Outcome? {
    final class Box: @unchecked Sendable { var outcome: Outcome? = nil }
    let box = Box()
    let done = DispatchSemaphore(value: 0)
    let thread = Thread {
      let options = ConversionOptions(mode: .push)
      let queue = WorkQueue(
        workers: workers, options: options, keepsRejects: false, capacities: .standard)
      defer { queue.close() }
      let helper = helping ? ConversionEngine(options: options) : nil
      for batch in Self.batches(count) { queue.submit(batch) }
      var outcome = Outcome()
      for index in order {
        let result = queue.result(for: index, helpingWith: helper)
        outcome.texts[index] = Self.text(result)
        outcome.documents += result.statistics.documents
      }
      (outcome.converted, outcome.untaken) = queue.conversionCounts
      box.outcome = outcome
      done.signal()
    }
    guard let thread else {
      Issue.record("no thread could be started")
      return nil
    }
    guard done.wait(timeout: .now() + 60) == .success else {
      Issue.record("the queue's run had not ended after a minute: it waits or spins forever")
      return nil
    }
    thread.join()
    return box.outcome
  }

  @Test("with no worker, results asked for out of order are each the batch's own")
  func helpingAloneOutOfOrder() throws {
    // Asking for 3 first converts 0 to 3 (the oldest waiting first) and keeps 0 to 2.
    let outcome = try #require(run(workers: 0, batches: 5, order: [3, 0, 4, 2, 1], helping: true))
    let want = Self.expected(5)
    for index in want.indices {
      #expect(outcome.texts[index] == want[index], "batch \(index)")
      #expect(outcome.texts[index]?.isEmpty == false, "batch \(index) was converted")
    }
    #expect(outcome.converted == 5)
    #expect(outcome.untaken == 0)
  }

  @Test("with a worker, every batch is converted once, by whichever thread takes it")
  func helpingBesideAWorker() throws {
    let outcome = try #require(
      run(workers: 1, batches: 64, order: Array(0..<64), helping: true))
    let want = Self.expected(64)
    for index in want.indices {
      #expect(outcome.texts[index] == want[index], "batch \(index)")
    }
    #expect(outcome.documents == 64)
    // Each batch converted once, by one thread or the other, and every result taken. (Which
    // thread converts how many depends on the scheduler; the test with no worker pins helping.)
    #expect(outcome.converted == 64)
    #expect(outcome.untaken == 0)
  }

  @Test("without an engine the waiting thread only waits: the worker converts the last batch")
  func waitingWithoutHelping() throws {
    let outcome = try #require(run(workers: 1, batches: 3, order: [2, 1, 0], helping: false))
    let want = Self.expected(3)
    for index in want.indices {
      #expect(outcome.texts[index] == want[index], "batch \(index)")
    }
    #expect(outcome.converted == 3)
    #expect(outcome.untaken == 0)
  }
}

#endif
