// Unit tests reach internal types through @testable, which only debug builds allow; the release
// run of `make test` covers the build that ships with ConformanceTests and CLITests.
#if DEBUG

import Testing

@_spi(Testing) @testable import LegacyAttachments

@Suite("Work queue: the waiting thread converts batches no worker has taken")
struct WorkQueueTests {
  private let options = ConversionOptions(mode: .push)

  /// One document a batch, each whole, the last one the input's end.
  private func batches(_ count: Int) -> [Batch] {
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
  private func expected(_ batches: [Batch]) -> [String] {
    let engine = ConversionEngine(options: options)
    return batches.map { text(convertBatch($0, with: engine)) }
  }

  private func text(_ result: BatchResult) -> String {
    String(decoding: result.output.bytes, as: UTF8.self)
  }

  @Test("with no worker, results asked for out of order are each the batch's own")
  func helpingAloneOutOfOrder() {
    let queue = WorkQueue(
      workers: 0, options: options, keepsRejects: false, capacities: .standard)
    defer { queue.close() }
    #expect(queue.runningWorkers == 0)
    let all = batches(5)
    let want = expected(all)
    for batch in all { queue.submit(batch) }
    let helper = ConversionEngine(options: options)
    // Asking for 3 first converts 0 to 3 (the oldest waiting first) and keeps 0 to 2.
    var got: [Int: String] = [:]
    for index in [3, 0, 4, 2, 1] {
      got[index] = text(queue.result(for: index, helpingWith: helper))
    }
    for index in all.indices {
      #expect(got[index] == want[index], "batch \(index)")
      #expect(got[index]?.isEmpty == false, "batch \(index) was converted")
    }
  }

  @Test("with a worker, every batch is converted once, by whichever thread takes it")
  func helpingBesideAWorker() {
    let queue = WorkQueue(
      workers: 1, options: options, keepsRejects: false, capacities: .standard)
    defer { queue.close() }
    #expect(queue.runningWorkers == 1)
    let all = batches(64)
    let want = expected(all)
    let helper = ConversionEngine(options: options)
    var documents = 0
    for batch in all { queue.submit(batch) }
    for index in all.indices {
      let result = queue.result(for: index, helpingWith: helper)
      #expect(text(result) == want[index], "batch \(index)")
      documents += result.statistics.documents
    }
    // Each batch's result is taken once: converted twice, one would be left over; never, the
    // loop above would not have ended.
    #expect(documents == all.count)
  }

  @Test("without an engine the waiting thread only waits: the worker converts the last batch")
  func waitingWithoutHelping() {
    let queue = WorkQueue(
      workers: 1, options: options, keepsRejects: false, capacities: .standard)
    defer { queue.close() }
    let all = batches(3)
    let want = expected(all)
    for batch in all { queue.submit(batch) }
    for index in all.indices.reversed() {
      #expect(text(queue.result(for: index)) == want[index], "batch \(index)")
    }
  }
}

#endif
