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
    let pool = BufferPool(limit: 4, keptBytes: 1 << 20)
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

  @Test("no more buffers are kept than the limit, nor more bytes; none without a pool")
  func bounded() {
    let pool = BufferPool(limit: 2, keptBytes: 1 << 20)
    for _ in 0..<5 { _ = BatchBytes(taking: Self.buffer("x"), returningTo: pool) }
    #expect(pool.idleCount == 2)
    let small = BufferPool(limit: 4, keptBytes: 3000)
    for _ in 0..<3 { _ = BatchBytes(taking: Self.buffer("x", capacity: 1000), returningTo: small) }
    _ = BatchBytes(taking: Self.buffer("x", capacity: 1001), returningTo: small)
    #expect(small.idleCount == 3, "a fourth would hold 4001 bytes")
    let capacity = small.take()?.capacity ?? 0
    #expect(capacity == 1000)
    _ = BatchBytes(taking: Self.buffer("x", capacity: 1000), returningTo: small)
    #expect(small.idleCount == 3, "room again once one was taken")
    _ = BatchBytes(taking: Self.buffer("x"))
    #expect(small.idleCount == 3)
  }

  @Test("a batch's output leaves its engine for one from the pool, and comes back once written")
  func outputThroughThePool() {
    let pool = BufferPool(limit: 4, keptBytes: 1 << 20)
    pool.give(ByteBuffer(capacity: 4096))
    var engineBuffer = Self.buffer("{\"a\":1}\n", capacity: 256)
    var output: BatchOutput? = BatchOutput()
    output!.append(taking: &engineBuffer, pool: pool)
    // The engine goes on with the pool's buffer (empty, as large as it was given), and the
    // output holds the engine's bytes.
    let (count, capacity) = (engineBuffer.count, engineBuffer.capacity)
    #expect(count == 0)
    #expect(capacity == 4096)
    #expect(pool.idleCount == 0)
    #expect(output!.bytes == Array("{\"a\":1}\n".utf8))
    output = nil
    #expect(pool.idleCount == 1, "the written output's buffer is back")
  }

  @Test("a window split into a spare keeps its rest there if it is large enough, else in a new one")
  func splitIntoSpare() {
    for (spareCapacity, kept) in [(4096, true), (16, false)] {
      var window = InputWindow(capacity: 16)
      Array("one\ntwo\nthree and more".utf8).withUnsafeBytes { window.append($0) }
      let spare = Self.buffer("stale bytes", capacity: spareCapacity)
      let front = window.split(at: StreamOffset(8), capacity: 16, into: spare)
      #expect(Array(front.bytes) == Array("one\ntwo\n".utf8))
      let rest = Array(window.view.bytes(from: window.start, to: window.end))
      #expect(rest == Array("three and more".utf8))
      // The spare when it holds the capacity asked for and half of it beyond the rest (14 + 8
      // bytes), else a new buffer of exactly that.
      #expect(window.capacity == (kept ? spareCapacity : 22), "spare of \(spareCapacity) bytes")
      Array("!".utf8).withUnsafeBytes { window.append($0) }
      let grown = Array(window.view.bytes(from: window.start, to: window.end))
      #expect(grown == Array("three and more!".utf8))
    }
  }
}

#endif
