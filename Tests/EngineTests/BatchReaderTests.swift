// Unit tests reach internal types through @testable, which only debug builds allow; the release
// run of `make test` covers the build that ships with ConformanceTests and CLITests.
#if DEBUG

import Glibc
import Testing

@testable import LegacyAttachments

@Suite("Batch reader: batches cut from a descriptor, marked when valid UTF-8")
struct BatchReaderTests {
  @Test("the reader marks the batches it finds valid UTF-8, and only those")
  func marksValidBatches() throws {
    var input: [UInt8] = []
    for index in 0..<12 {
      input += Array("{\"n\":\(index),\"t\":\"caf\u{E9} \u{6771}\"".utf8)
      if index % 4 == 1 { input += [0xC0, 0xAF] }  // an overlong slash
      if index % 4 == 3 { input += [0xED, 0xA0, 0x80] }  // an encoded surrogate
      input += Array("}\n".utf8)
    }
    var ends: [Int32] = [0, 0]
    #expect(pipe(&ends) == 0)
    defer { close(ends[0]) }
    #expect(input.withUnsafeBytes { write(ends[1], $0.baseAddress, $0.count) } == input.count)
    close(ends[1])
    var reader = BatchReader(batchBytes: 40)
    var batches: [Batch] = []
    while true {
      let count = try reader.read(from: SystemFileDescriptor(rawValue: ends[0]))
      if count == 0 {
        batches.append(reader.cutRest())
        break
      }
      if reader.pendingCount >= 40, let batch = reader.cutAtBoundary() { batches.append(batch) }
    }
    let marks = batches.map { batch in
      batch.bytes.withBytes {
        (marked: batch.bytes.isValidUTF8, valid: String(validating: $0, as: UTF8.self) != nil)
      }
    }
    #expect(batches.map { $0.bytes.buffer.count }.reduce(0, +) == input.count)
    for (index, mark) in marks.enumerated() { #expect(mark.marked == mark.valid, "batch \(index)") }
    #expect(marks.contains { $0.marked } && marks.contains { !$0.marked }, "\(marks)")
    // The last batch is empty (the input ended with a cut) or not; either way it is marked
    // exactly when valid, and an empty one is valid.
    #expect(batches.last?.bytes.buffer.count == 0 ? batches.last?.bytes.isValidUTF8 == true : true)
  }
}

#endif
