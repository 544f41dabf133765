// Unit tests reach internal types through @testable, which only debug builds allow; the release
// run of `make test` covers the build that ships with ConformanceTests and CLITests.
#if DEBUG

import Testing

@testable import LegacyAttachments

@Suite("Batches: any cut before a line that starts with `{` gives what one pass gives")
struct BatchTests {
  private struct Converted: Equatable {
    var output: [UInt8] = []
    var rejects: [UInt8] = []
    var diagnostics: [String] = []
  }

  /// `pieces` converted as the parallel reader converts batches, one after another, each with
  /// the document the previous one left open.
  private func inBatches(_ pieces: [String], options: ConversionOptions) -> Converted {
    let engine = ConversionEngine(options: options)
    var converted = Converted()
    var carry: (bytes: [UInt8], first: TextPosition)? = nil
    var line = 1
    for (index, piece) in pieces.enumerated() {
      var buffer = ByteBuffer(capacity: 16)
      Array(piece.utf8).withUnsafeBufferPointer { buffer.append($0) }
      let batch = Batch(
        index: index, bytes: BatchBytes(taking: buffer),
        first: TextPosition(line: line, column: 1), atInputStart: index == 0,
        isLast: index == pieces.count - 1)
      line += piece.utf8.filter { $0 == 0x0A }.count
      let result = convertBatch(
        batch, carry: carry?.bytes, carryStart: carry?.first, with: engine)
      carry = result.carry.map { ($0, result.carryStart) }
      converted.output += result.output.bytes
      converted.rejects += result.rejects
      converted.diagnostics += result.diagnostics.map(\.description)
      // A bad document stopped the run: nothing after it is written.
      if result.outcome != .completed { break }
    }
    return converted
  }

  private func inOnePass(_ pieces: [String], options: ConversionOptions) -> Converted {
    let result = CBLAttachments.convertStream(Array(pieces.joined().utf8), options: options)
    return Converted(
      output: result.output, rejects: result.rejects,
      diagnostics: result.diagnostics.map(\.description))
  }

  @Test(
    "a first batch shorter than a byte-order mark, a form feed before a cut",
    arguments: [
      ["[\n", "{\"a\":1},\n", "{\"b\":2}\n]\n"],
      ["}\n", "{\"a\":1}\n"],
      ["\n", "{\"a\":1}\n"],
      ["{\"_id\":\"ff\"}\u{0C}\n", "{\"b\":1}\n"],
      ["{\"a\":1}\n\u{0B}\n", "{\"b\":1}\n", "{\"c\":1}\n\u{0C}\n"],
      ["\u{FEFF}{\"a\":1}\n", "{\"b\":\n", "{\"c\":1}\n"],
    ])
  func cuts(pieces: [String]) {
    for keepGoing in [false, true] {
      let options = ConversionOptions(mode: .push, keepGoing: keepGoing)
      let one = inOnePass(pieces, options: options)
      let batches = inBatches(pieces, options: options)
      #expect(batches == one, "keep going: \(keepGoing)\n batches: \(batches)\n one pass: \(one)")
    }
  }

  @Test("an engine does not check again a batch marked valid UTF-8, and checks one that is not")
  func markedBatchesAreTrusted() {
    // A mark is the reader's word for it: marked by mistake, the bad byte would go through.
    let text = Array(#"{"a":"b"#.utf8) + [0xFF] + Array("\"}\n".utf8)
    for marked in [false, true] {
      var buffer = ByteBuffer(capacity: 16)
      text.withUnsafeBufferPointer { buffer.append($0) }
      let batch = Batch(
        index: 0, bytes: BatchBytes(taking: buffer, isValidUTF8: marked),
        first: TextPosition(line: 1, column: 1), atInputStart: true, isLast: true)
      let result = convertBatch(
        batch, with: ConversionEngine(options: ConversionOptions(mode: .push)))
      let reported = result.diagnostics.contains { $0.description.contains("invalid UTF-8") }
      #expect(reported == !marked, "marked \(marked): \(result.diagnostics)")
    }
  }
}

#endif
