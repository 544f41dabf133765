import Glibc
import LegacyAttachments
import TestSupport
import Testing

/// Stream conversion from and to anything: a caller's ByteSource (here a closure handing out
/// pieces of every size, as a socket or a decompressor would) and ByteSinks (closures collecting
/// the bytes) give exactly what the in-memory stream API gives; a sink that fails ends the run
/// with its error.
@Suite struct ByteStreamTests {
  static func corpus() -> [UInt8] {
    var generator = DocumentGenerator(seed: 0xB17E)
    var documents: [[UInt8]] = []
    for index in 0..<800 {
      let document = generator.document()
      documents.append(index % 9 == 4 ? generator.corrupt(document) : document)
    }
    return Array(documents.joined(separator: [0x0A])) + [0x0A]
  }

  @Test(
    "a ClosureSource in pieces of every size, into ClosureSinks: the stream API's output and rejects"
  )
  func closures() throws {
    let input = Self.corpus()
    var options = ConversionOptions(mode: .push, naming: .litecore)
    options.keepGoing = true
    let expected = CBLAttachments.convertStream(input, options: options)
    #expect(!expected.rejects.isEmpty && !expected.output.isEmpty)
    for maximum in [1, 7, 64, 4096, 1 << 20] {
      var output: [UInt8] = []
      var rejects: [UInt8] = []
      var diagnostics = 0
      let converter = StreamConverter(
        options: options, output: ClosureSink { output.append(contentsOf: $0) },
        rejects: ClosureSink { rejects.append(contentsOf: $0) })
      converter.diagnosticHandler = { _, name in
        #expect(name == "socket")
        diagnostics += 1
      }
      var offset = 0
      var random = SplitMix64(seed: UInt64(maximum))
      var source = ClosureSource { buffer in
        let count = min(buffer.count, input.count - offset, 1 + random.below(maximum))
        input.withUnsafeBytes {
          buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[offset..<offset + count]))
        }
        offset += count
        return count
      }
      let outcome = try converter.convert(from: &source, name: "socket")
      try converter.finish()
      #expect(outcome == .completed)
      #expect(output == expected.output, "pieces of at most \(maximum): output")
      #expect(rejects == expected.rejects, "pieces of at most \(maximum): rejects")
      #expect(diagnostics == expected.diagnostics.count)
    }
  }

  @Test("a sink that fails ends the conversion with its error")
  func failingSink() {
    let failure = ConversionIOError(
      operation: .write, errno: SystemErrno(code: EPIPE), target: "socket")
    let converter = StreamConverter(
      options: ConversionOptions(mode: .push),
      output: ClosureSink { _ throws(ConversionIOError) in throw failure })
    let input = Array("{\"a\":1}\n".utf8)
    #expect(throws: ConversionIOError.self) {
      _ = try input.withUnsafeBytes { try converter.convert(bytes: $0, name: "in") }
      try converter.finish()
    }
  }

  @Test("a source that fails ends the conversion with its error, after what was read is written")
  func failingSource() throws {
    var output: [UInt8] = []
    let converter = StreamConverter(
      options: ConversionOptions(mode: .pull), output: ClosureSink { output.append(contentsOf: $0) }
    )
    var calls = 0
    var source = ClosureSource { buffer throws(ConversionIOError) in
      calls += 1
      guard calls == 1 else {
        throw ConversionIOError(operation: .read, errno: SystemErrno(code: EPIPE), target: "socket")
      }
      let text = Array("{\"a\":1}\n".utf8)
      buffer.copyBytes(from: text)
      return text.count
    }
    do throws(ConversionIOError) {
      _ = try converter.convert(from: &source, name: "socket")
      Issue.record("the read error should be thrown")
    } catch {
      #expect(error.operation == .read)
    }
    try converter.finish()
    #expect(output == Array("{\"a\":1}\n".utf8))
  }
}
