// Unit tests reach internal types through @testable, which only debug builds allow; the release
// run of `make test` covers the build that ships with ConformanceTests and CLITests.
#if DEBUG

import Testing

@_spi(Testing) @testable import LegacyAttachments

/// What the engine made of `text` fed `pieceSize` bytes at a time, and the most room its input
/// window needed meanwhile.
private func convert(_ text: [UInt8], options: ConversionOptions, pieceSize: Int) -> (
  output: [UInt8], diagnostics: [String], largestWindow: Int
) {
  let engine = ConversionEngine(options: options)
  var output: [UInt8] = []
  var diagnostics: [String] = []
  var largest = engine.inputCapacity
  func handOver() {
    engine.deliver(
      output: { output += $0 }, rejects: { _, _ in },
      diagnostic: { diagnostics.append($0.description) })
  }
  text.withUnsafeBytes { bytes in
    var offset = 0
    while offset < bytes.count {
      let end = min(offset + pieceSize, bytes.count)
      engine.feed(UnsafeRawBufferPointer(rebasing: bytes[offset..<end]))
      handOver()
      largest = max(largest, engine.inputCapacity)
      offset = end
    }
  }
  _ = engine.finishReading()
  handOver()
  return (output, diagnostics, largest)
}

@Suite("Memory: an envelope is streamed, even when it is one line")
struct EngineMemoryTests {
  /// A compact `_changes` body of `rows` rows: one line, as `--push` writes an envelope.
  private func compactChanges(rows: Int) -> [UInt8] {
    let body = (0..<rows).map { index in
      #"{"seq":\#(index),"id":"d\#(index)","doc":{"_id":"d\#(index)","text":"é東\#(index)","p":{"@type":"blob","digest":"sha1-\#(index)","length":\#(index)}}}"#
    }.joined(separator: ",")
    return Array((#"{"results":["# + body + #"],"last_seq":"\#(rows)"}"# + "\n").utf8)
  }

  @Test("a one-line _changes body of 4 MiB is converted in a window of its first size")
  func oneLineEnvelope() {
    let input = compactChanges(rows: 34_000)
    #expect(input.count > 4 << 20)
    var options = ConversionOptions(mode: .push)
    options.documents = .changes
    let whole = convert(input, options: options, pieceSize: input.count)
    #expect(whole.diagnostics.isEmpty)
    #expect(whole.output.count > input.count)
    for pieceSize in [1 << 16, 1 << 18, 99_991] {
      let streamed = convert(input, options: options, pieceSize: pieceSize)
      #expect(streamed.output == whole.output, "pieces of \(pieceSize)")
      #expect(streamed.diagnostics.isEmpty)
      // Nothing grows past what one piece and the row being read need.
      #expect(
        streamed.largestWindow <= EngineCapacities.standard.input + pieceSize,
        "pieces of \(pieceSize): \(streamed.largestWindow)")
    }
    // Pulled back, in pieces too: the envelope as it was.
    options.mode = .pull
    #expect(convert(whole.output, options: options, pieceSize: 1 << 16).output == input)
  }

  @Test("a one-line list (--format list) is converted in a window of its first size")
  func oneLineList() {
    let documents = (0..<30_000).map {
      #"{"_id":"d\#($0)","p":{"@type":"blob","digest":"sha1-\#($0)"}}"#
    }
    let input = Array(("[" + documents.joined(separator: ",") + "]\n").utf8)
    var options = ConversionOptions(mode: .push)
    options.framing = .list
    let whole = convert(input, options: options, pieceSize: input.count)
    let streamed = convert(input, options: options, pieceSize: 1 << 16)
    #expect(streamed.output == whole.output)
    #expect(streamed.largestWindow <= EngineCapacities.standard.input + (1 << 16))
  }
}

#endif
