import Glibc

/// A pthread mutex. pthreads require that a mutex never moves once initialized, so it lives in
/// memory of its own, allocated here and freed when its owner goes.
struct Mutex: ~Copyable {
  let pointer: UnsafeMutablePointer<pthread_mutex_t>

  init() {
    pointer = .allocate(capacity: 1)
    pointer.initialize(to: pthread_mutex_t())
    pthread_mutex_init(pointer, nil)
  }

  deinit {
    pthread_mutex_destroy(pointer)
    pointer.deallocate()
  }

  func lock() { pthread_mutex_lock(pointer) }
  func unlock() { pthread_mutex_unlock(pointer) }

  /// Runs `body` with the mutex held.
  func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
    lock()
    defer { unlock() }
    return try body()
  }
}

/// A pthread condition variable, at a stable address like ``Mutex``.
struct Condition: ~Copyable {
  let pointer: UnsafeMutablePointer<pthread_cond_t>

  init() {
    pointer = .allocate(capacity: 1)
    pointer.initialize(to: pthread_cond_t())
    pthread_cond_init(pointer, nil)
  }

  deinit {
    pthread_cond_destroy(pointer)
    pointer.deallocate()
  }

  /// Waits until signalled; `mutex` must be held, and is held again on return.
  func wait(releasing mutex: borrowing Mutex) { pthread_cond_wait(pointer, mutex.pointer) }
  func signal() { pthread_cond_signal(pointer) }
  func broadcast() { pthread_cond_broadcast(pointer) }
}

/// A thread running a closure, joined by ``join()`` (once).
struct Thread {
  private let handle: pthread_t

  /// Starts `body` on a new thread, or returns nil when the system cannot make one.
  init?(_ body: @escaping @Sendable () -> Void) {
    final class Box: @unchecked Sendable {
      let body: @Sendable () -> Void
      init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
    let context = Unmanaged.passRetained(Box(body)).toOpaque()
    var handle = pthread_t()
    let created = pthread_create(
      &handle, nil,
      { context in
        Unmanaged<Box>.fromOpaque(context!).takeRetainedValue().body()
        return nil
      }, context)
    guard created == 0 else {
      Unmanaged<Box>.fromOpaque(context).release()
      return nil
    }
    self.handle = handle
  }

  /// Waits for the thread to end.
  func join() { pthread_join(handle, nil) }
}
