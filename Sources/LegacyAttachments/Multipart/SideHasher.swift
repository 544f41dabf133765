/// A hash computed on a thread of its own while the caller's thread does the rest of the work
/// (a CouchDB part's MD5, while the caller hashes the SHA-1 and writes the file): the second
/// core hides the second hash. Bytes are copied into one of a few slots and hashed in order;
/// `update` waits only when every slot is full.
final class SideHasher: @unchecked Sendable {
  private static let slotSize = 1 << 18
  private static let slotCount = 4

  private let lock = Mutex()
  /// Signalled when a slot is filled, when one is freed and when the hash is asked for.
  private let changed = Condition()
  private let slots: UnsafeMutableRawPointer
  private var counts = [Int](repeating: 0, count: SideHasher.slotCount)
  /// Slots filled and not yet hashed, from `next`.
  private var filled = 0
  private var next = 0
  private var hasher: Hasher?
  private var result: [UInt8]? = nil
  private var finishing = false
  private var closed = false
  private var worker: Thread?

  /// A hasher with its thread, or nil when the system makes no thread.
  init?() {
    slots = .allocate(byteCount: Self.slotSize * Self.slotCount, alignment: 64)
    worker = nil
    // unowned(unsafe): the thread runs until deinit has joined it, while the object, already
    // being deinitialized, is still there (a checked unowned reference would trap then).
    guard let thread = Thread({ [unowned(unsafe) self] in self.work() }) else {
      slots.deallocate()
      return nil
    }
    worker = thread
  }

  deinit {
    lock.withLock {
      closed = true
      changed.broadcast()
    }
    worker?.join()
    slots.deallocate()
  }

  /// Starts a hash in `algorithm`, dropping one left unfinished (a part refused half-way).
  func begin(_ algorithm: DigestAlgorithm) {
    lock.lock()
    defer { lock.unlock() }
    while filled > 0 { changed.wait(releasing: lock) }
    hasher = Hasher(algorithm)
    result = nil
    finishing = false
    changed.broadcast()
  }

  /// Hands `bytes` to the thread.
  func update(_ bytes: UnsafeRawBufferPointer) {
    var offset = 0
    while offset < bytes.count {
      lock.lock()
      while filled == Self.slotCount { changed.wait(releasing: lock) }
      let slot = (next + filled) % Self.slotCount
      lock.unlock()
      // The slot is the caller's until it is counted as filled.
      let count = min(Self.slotSize, bytes.count - offset)
      (slots + slot * Self.slotSize).copyMemory(from: bytes.baseAddress! + offset, byteCount: count)
      offset += count
      lock.withLock {
        counts[slot] = count
        filled += 1
        changed.broadcast()
      }
    }
  }

  /// The hash of everything handed over since ``begin(_:)``, once the thread has it.
  func finish() -> [UInt8] {
    lock.lock()
    defer { lock.unlock() }
    finishing = true
    changed.broadcast()
    while result == nil { changed.wait(releasing: lock) }
    return result!
  }

  private func work() {
    lock.lock()
    while true {
      while filled == 0 && !finishing && !closed { changed.wait(releasing: lock) }
      if closed { break }
      if filled == 0 && finishing {
        if result == nil, let done = hasher.take() {
          result = done.finish()
          changed.broadcast()
        }
        // Wait for the next begin (or the end).
        while finishing && !closed { changed.wait(releasing: lock) }
        continue
      }
      let slot = next
      let count = counts[slot]
      var running = hasher.take()
      lock.unlock()
      running?.update(UnsafeRawBufferPointer(start: slots + slot * Self.slotSize, count: count))
      lock.lock()
      hasher = running.take()
      next = (next + 1) % Self.slotCount
      filled -= 1
      changed.broadcast()
    }
    lock.unlock()
  }
}
