import Glibc

/// A piece of one input, cut just before a line that starts with `{`, for one worker.
struct Batch: Sendable {
  var index: Int
  var bytes: BatchBytes
  var firstLine: Int
  var atInputStart: Bool
  /// The input ends with this batch.
  var isLast: Bool
}

/// A batch's input: the very buffer the reader read it into, handed over rather than copied
/// (the reader is the one thread every batch waits for). Read-only once made.
final class BatchBytes: @unchecked Sendable {
  let buffer: ByteBuffer

  init(taking buffer: ByteBuffer) { self.buffer = buffer }

  deinit { buffer.deallocate() }
}

/// What converting one batch produced.
struct BatchResult: Sendable {
  var output: [UInt8] = []
  var rejects: [UInt8] = []
  var rejectMarks: [RejectMark] = []
  var diagnostics: [Diagnostic] = []
  var statistics = Statistics()
  var outcome: InputOutcome = .completed
  /// A document that continues into the next batch: its bytes and first line.
  var carry: [UInt8]? = nil
  var carryLine = 0
}

/// Converts one batch with `engine` (fresh batch state, results collected).
func convertBatch(
  _ batch: Batch, carry: [UInt8]? = nil, carryLine: Int = 0, with engine: ConversionEngine
)
  -> BatchResult
{
  var result = BatchResult()
  engine.statistics = Statistics()
  engine.beginBatch(
    firstLine: carry == nil ? batch.firstLine : carryLine,
    atInputStart: batch.atInputStart && carry == nil)
  if let carry { carry.withUnsafeBytes { engine.feed($0) } }
  engine.feed(UnsafeRawBufferPointer(batch.bytes.buffer.bytes))
  if batch.isLast {
    result.outcome = engine.finishReading()
  } else {
    result.outcome = engine.outcome
    if let pending = engine.finishBatch() {
      result.carry = pending.carry
      result.carryLine = pending.line
    }
  }
  engine.takeResults(into: &result)
  result.statistics = engine.statistics
  result.statistics.bytesIn = 0
  return result
}

/// Worker threads that convert batches in any order; results are taken in batch order.
///
/// Each worker owns its own engine (and so its own yajl parser and buffers). The queue holds
/// at most a few batches per worker, which bounds memory.
final class WorkQueue: @unchecked Sendable {
  private var mutex = pthread_mutex_t()
  private var workReady = pthread_cond_t()
  private var resultReady = pthread_cond_t()
  private var waiting: [Batch] = []
  private var results: [Int: BatchResult] = [:]
  private var closing = false
  private var threads: [pthread_t] = []
  let options: ConversionOptions

  init(workers: Int, options: ConversionOptions) {
    self.options = options
    pthread_mutex_init(&mutex, nil)
    pthread_cond_init(&workReady, nil)
    pthread_cond_init(&resultReady, nil)
    for _ in 0..<workers {
      var thread = pthread_t()
      let context = Unmanaged.passRetained(self).toOpaque()
      let created = pthread_create(
        &thread, nil,
        { context in
          let queue = Unmanaged<WorkQueue>.fromOpaque(context!).takeRetainedValue()
          queue.work()
          return nil
        }, context)
      if created == 0 {
        threads.append(thread)
      } else {
        Unmanaged<WorkQueue>.fromOpaque(context).release()
      }
    }
  }

  /// Whether any worker thread could be started.
  var hasWorkers: Bool { !threads.isEmpty }

  func submit(_ batch: Batch) {
    pthread_mutex_lock(&mutex)
    waiting.append(batch)
    pthread_cond_signal(&workReady)
    pthread_mutex_unlock(&mutex)
  }

  /// Waits for batch `index` to be converted and takes its result.
  func result(for index: Int) -> BatchResult {
    pthread_mutex_lock(&mutex)
    defer { pthread_mutex_unlock(&mutex) }
    while true {
      if let result = results.removeValue(forKey: index) { return result }
      pthread_cond_wait(&resultReady, &mutex)
    }
  }

  /// Stops the workers (after the batches they are converting) and waits for them.
  func close() {
    pthread_mutex_lock(&mutex)
    closing = true
    waiting.removeAll()
    pthread_cond_broadcast(&workReady)
    pthread_mutex_unlock(&mutex)
    for thread in threads { pthread_join(thread, nil) }
    threads.removeAll()
  }

  private func work() {
    let engine = ConversionEngine(options: options)
    while true {
      pthread_mutex_lock(&mutex)
      while waiting.isEmpty && !closing { pthread_cond_wait(&workReady, &mutex) }
      if closing {
        pthread_mutex_unlock(&mutex)
        return
      }
      let batch = waiting.removeFirst()
      pthread_mutex_unlock(&mutex)
      let result = convertBatch(batch, with: engine)
      pthread_mutex_lock(&mutex)
      results[batch.index] = result
      pthread_cond_broadcast(&resultReady)
      pthread_mutex_unlock(&mutex)
    }
  }

  deinit {
    pthread_mutex_destroy(&mutex)
    pthread_cond_destroy(&workReady)
    pthread_cond_destroy(&resultReady)
  }
}
