// Unit tests reach internal types through @testable, which only debug builds allow; the release
// run of `make test` covers the build that ships with ConformanceTests and CLITests.
#if DEBUG

import Testing

@testable import LegacyAttachments

@Suite("Buffer pool: batches' buffers come back when their last reference goes")
struct BufferPoolTests {
  private static func buffer(_ text: String, capacity: Int = 64) -> ByteBuffer {
    var buffer = ByteBuffer(capacity: capacity)
    Array(text.utf8).withUnsafeBufferPointer { buffer.append($0) }
    return buffer
  }

  @Test("a buffer goes back only when nobody holds its bytes, and comes out empty")
  func backWhenReleased() {
    let pool = BufferPool(limit: 4)
    var bytes: BatchBytes? = BatchBytes(taking: Self.buffer("{\"a\":1}\n"), returningTo: pool)
    let other = bytes
    bytes = nil
    #expect(pool.idleCount == 0, "still held by another reference")
    #expect(Array(other!.buffer.bytes) == Array("{\"a\":1}\n".utf8))
    _ = consume other
    #expect(pool.idleCount == 1)
    guard let again = pool.take() else {
      Issue.record("the buffer given back is not there")
      return
    }
    let (count, capacity) = (again.count, again.capacity)
    #expect(count == 0)
    #expect(capacity >= 64)
    #expect(pool.idleCount == 0)
    let none = pool.take() == nil
    #expect(none)
  }

  @Test("no more than the limit is kept, nor a buffer above the largest, nor one without a pool")
  func bounded() {
    let pool = BufferPool(limit: 2)
    for _ in 0..<5 { _ = BatchBytes(taking: Self.buffer("x"), returningTo: pool) }
    #expect(pool.idleCount == 2)
    let huge = BufferPool(limit: 2)
    _ = BatchBytes(taking: Self.buffer("x", capacity: BufferPool.largest + 1), returningTo: huge)
    #expect(huge.idleCount == 0)
    _ = BatchBytes(taking: Self.buffer("x"))
    #expect(huge.idleCount == 0)
  }

  @Test("a window split into a spare buffer keeps its rest there, grown as needed")
  func splitIntoSpare() {
    var window = InputWindow(capacity: 16)
    Array("one\ntwo\nthr".utf8).withUnsafeBytes { window.append($0) }
    var spare = Self.buffer("stale bytes", capacity: 4)
    spare.count = 11
    let front = window.split(at: StreamOffset(8), capacity: 16, into: spare)
    #expect(Array(front.bytes) == Array("one\ntwo\n".utf8))
    Array("ee".utf8).withUnsafeBytes { window.append($0) }
    #expect(Array(window.view.bytes(from: window.start, to: window.end)) == Array("three".utf8))
  }
}

#endif
