/// Buffers of batches that are done with, for the next batches: the reader's input buffers and
/// the engines' output buffers.
///
/// A batch's input leaves the reader in the buffer it was read into, and its output leaves the
/// engine in the engine's own buffer (``BatchBytes``); each goes on with another. Made new each
/// time, that other buffer is memory the allocator has just been given back, or fresh pages from
/// the kernel, faulted in and zeroed again: with `--jobs 2` on the 100 MiB yardstick, some 2,300
/// page faults and 9 ms of system time that one thread never pays. A ``BatchBytes`` made with a
/// pool gives its buffer back to it when its last reference goes, and the reader or the next
/// engine to need a buffer takes it from there.
final class BufferPool: @unchecked Sendable {
  private let mutex = Mutex()
  /// Holders of the idle buffers (made without a pool, so that they are freed with them).
  private var idle: [BatchBytes] = []
  /// Buffers kept at most; one given back beyond that is freed.
  let limit: Int
  /// The largest buffer kept (4 MiB, what an engine keeps of its own output buffer).
  static let largest = 1 << 22

  init(limit: Int) { self.limit = limit }

  /// A buffer given back earlier, emptied, or nil.
  func take() -> ByteBuffer? {
    guard let holder = mutex.withLock({ idle.popLast() }) else { return nil }
    var buffer = ByteBuffer(capacity: 0)
    swap(&buffer, &holder.buffer)
    buffer.count = 0
    return buffer
  }

  /// Keeps `buffer` for ``take()``, unless `limit` buffers are kept already or it is larger than
  /// ``largest`` (a huge document's: not worth pinning).
  func give(_ buffer: consuming ByteBuffer) {
    guard buffer.capacity <= Self.largest else { return }
    let holder = BatchBytes(taking: buffer)
    mutex.withLock {
      if idle.count < limit { idle.append(holder) }
    }
  }

  /// How many buffers are kept (for tests).
  var idleCount: Int { mutex.withLock { idle.count } }
}
