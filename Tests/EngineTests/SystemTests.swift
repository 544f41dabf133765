// Unit tests reach internal types through @testable, which only debug builds allow; the release
// run of `make test` covers the build that ships with ConformanceTests and CLITests.
#if DEBUG

import Glibc
import Testing

@testable import LegacyAttachments

@Suite("System calls: errors as values, whole writes, pthread state that stays put")
struct SystemTests {
  @Test("a failed call is an SystemErrno with the system's wording")
  func errno() {
    #expect(throws: SystemErrno.noSuchFile) {
      _ = try SystemFileDescriptor.open("/nonexistent/cbl-attachments", O_RDONLY)
    }
    #expect(SystemErrno(code: ENOSPC).description == "No space left on device")
  }

  @Test("writeAll writes everything, and says how much before a failure")
  func writeAll() throws {
    var ends: [Int32] = [0, 0]
    #expect(pipe(&ends) == 0)
    defer { close(ends[0]) }
    let writer = SystemFileDescriptor(rawValue: ends[1])
    let bytes = [UInt8](repeating: 0x61, count: 1000)
    let result = bytes.withUnsafeBytes { writer.writeAll($0) }
    #expect(result.written == 1000 && result.failure == nil)
    var buffer = [UInt8](repeating: 0, count: 2000)
    let read = try buffer.withUnsafeMutableBytes {
      try SystemFileDescriptor(rawValue: ends[0]).read(into: $0)
    }
    #expect(read == 1000)
    writer.close()
    let full = try SystemFileDescriptor.open("/dev/full", O_WRONLY)
    defer { full.close() }
    let failed = bytes.withUnsafeBytes { full.writeAll($0) }
    #expect(failed.written == 0 && failed.failure == SystemErrno(code: ENOSPC))
  }

  @Test("status tells regular files, devices and the same file apart")
  func status() throws {
    let null = try SystemFileDescriptor.status(ofPath: "/dev/null")
    #expect(null.isCharacterDevice && !null.isRegularFile)
    let root = try SystemFileDescriptor.status(ofPath: "/")
    #expect(root.isDirectory)
    #expect(null.isSameFile(as: try SystemFileDescriptor.status(ofPath: "/dev/null")))
    #expect(!null.isSameFile(as: root))
  }

  @Test("a mutex and a condition hand a value from one thread to another")
  func mutexAndCondition() {
    final class Box: @unchecked Sendable {
      let mutex = Mutex()
      let ready = Condition()
      var value = 0
    }
    let box = Box()
    let thread = Thread {
      box.mutex.withLock {
        box.value = 42
        box.ready.signal()
      }
    }
    #expect(thread != nil)
    box.mutex.lock()
    while box.value == 0 { box.ready.wait(releasing: box.mutex) }
    box.mutex.unlock()
    thread?.join()
    #expect(box.value == 42)
  }
}

#endif
