// Unit tests reach internal types through @testable, which only debug builds allow; the release
// run of `make test` covers the build that ships with ConformanceTests and CLITests.
#if DEBUG

import Foundation
import Glibc
import Testing

@_spi(Testing) @testable import LegacyAttachments

@Suite("Stream converter: worker threads end with the converter")
struct StreamConverterLifetimeTests {
  @Test("a converter dropped without finish() stops and joins its workers")
  func droppedConverterStopsWorkers() throws {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent(
      "cbl-lifetime-\(UUID().uuidString)"
    ).path
    defer { unlink(path) }
    let input = (0..<200).map { "{\"n\":\($0),\"p\":{\"@type\":\"blob\",\"digest\":\"d\"}}\n" }
      .joined()
    #expect(FileManager.default.createFile(atPath: path, contents: Data(input.utf8)))
    let devNull = open("/dev/null", O_WRONLY)
    defer { close(devNull) }
    var queue: WorkQueue? = nil
    do {
      let converter = StreamConverter(
        options: ConversionOptions(mode: .push),
        output: FileDescriptorSink(SystemFileDescriptor(rawValue: devNull)))
      converter.jobs = 4
      converter.batchBytes = 256
      let descriptor = open(path, O_RDONLY)
      defer { close(descriptor) }
      #expect(
        try converter.convert(SystemFileDescriptor(rawValue: descriptor), name: "in") == .completed)
      queue = converter.workQueue
      // Four jobs: three workers, and the thread that reads converts too.
      #expect(queue?.runningWorkers == 3, "the workers wait for the next input")
      // The converter goes here, without finish().
    }
    #expect(queue?.runningWorkers == 0, "no worker is left waiting for work that cannot come")
  }

  @Test("finish() ends a run once: a second call writes nothing (the list stays one array)")
  func finishTwice() throws {
    var collected: [UInt8] = []
    let converter = StreamConverter(
      options: ConversionOptions(mode: .push, framing: .list),
      output: ClosureSink { collected.append(contentsOf: $0) })
    let input = Array("[{\"a\":1}]".utf8)
    _ = try input.withUnsafeBytes { try converter.convert(bytes: $0, name: "in") }
    try converter.finish()
    let once = collected
    #expect(converter.isFinished)
    try converter.finish()
    #expect(collected == once && String(decoding: once, as: UTF8.self) == "[\n{\"a\":1}\n]\n")
  }

  @Test("a read size below 1 is taken as 1: every entry point converts everything")
  func readSizeBelowOne() throws {
    for size in [0, -5] {
      var collected: [UInt8] = []
      let converter = StreamConverter(
        options: ConversionOptions(mode: .push),
        output: ClosureSink { collected.append(contentsOf: $0) })
      converter.readSize = size
      #expect(converter.readSize == 1)
      let input = Array("{\"a\":1}\n{\"b\":2}\n".utf8)
      let outcome = try input.withUnsafeBytes { try converter.convert(bytes: $0, name: "in") }
      try converter.finish()
      #expect(outcome == .completed && collected == input, "readSize \(size)")
    }
  }
}

#endif
