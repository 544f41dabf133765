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
        options: ConversionOptions(mode: .push), output: FileDescriptorSink(descriptor: devNull))
      converter.jobs = 4
      converter.batchBytes = 256
      let descriptor = open(path, O_RDONLY)
      defer { close(descriptor) }
      #expect(try converter.convert(descriptor: descriptor, name: "in") == .completed)
      queue = converter.workQueue
      #expect(queue?.runningWorkers == 4, "the workers wait for the next input")
      // The converter goes here, without finish().
    }
    #expect(queue?.runningWorkers == 0, "no worker is left waiting for work that cannot come")
  }
}

#endif
