/// Buffers of batches that are done with, for the next batches: the reader's input buffers and
/// the engines' output buffers.
///
/// A batch's input leaves the reader in the buffer it was read into, and its output leaves the
/// engine in the engine's own buffer (``BatchBytes``); each goes on with another. Made new each
/// time, that other buffer is memory the allocator has just been given back, or fresh pages from
/// the kernel, faulted in and zeroed again: with `--jobs 2` on the 100 MiB yardstick, some 2,500
/// page faults and 8 ms of system time that one thread never pays. A ``BatchBytes`` made with a
/// pool gives its buffer back to it when its last reference goes, and the reader or the next
/// engine to need a buffer takes it from there.
final class BufferPool: @unchecked Sendable {
  private let mutex = Mutex()
  /// Holders of the idle buffers (made without a pool, so that they are freed with them).
  private var idle: [BatchBytes] = []
  private var idleBytes = 0
  /// Buffers kept at most; one given back beyond that is freed.
  let limit: Int
  /// The most memory the kept buffers hold together.
  let keptBytes: Int

  init(limit: Int, keptBytes: Int) {
    self.limit = limit
    self.keptBytes = keptBytes
  }

  /// A buffer given back earlier, empty, or nil.
  func take() -> ByteBuffer? {
    let holder: BatchBytes? = mutex.withLock {
      guard let holder = idle.popLast() else { return nil }
      idleBytes -= holder.buffer.capacity
      return holder
    }
    guard var buffer = holder?.takeBuffer() else { return nil }
    buffer.count = 0
    return buffer
  }

  /// Keeps `buffer` for ``take()``, unless `limit` buffers are kept already or keeping it would
  /// hold more than ``keptBytes`` in all. (Cutting a long document's buffer down instead costs
  /// more than it saves: on lines of 2 MiB, the next one grows it again, page by page.)
  func give(_ buffer: consuming ByteBuffer) {
    let capacity = buffer.capacity
    let holder = BatchBytes(taking: buffer)
    mutex.withLock {
      guard idle.count < limit, idleBytes + capacity <= keptBytes else { return }
      idle.append(holder)
      idleBytes += capacity
    }
  }

  /// How many buffers are kept (for tests).
  var idleCount: Int { mutex.withLock { idle.count } }
}
