import Glibc

extension StreamConverter {

  /// Converts `descriptor` with ``jobs`` worker threads. The input is cut into batches just before
  /// lines that start with `{` (document boundaries in NDJSON and in pretty-printed dumps);
  /// results are written in input order. A document that runs past its batch is converted again
  /// together with the next batch, so the output is the same as with one thread.
  func convertInParallel(descriptor: Int32, name: String, queue: WorkQueue) throws(IOError)
    -> InputOutcome
  {
    let local = ConversionEngine(options: options)
    var pending = ByteBuffer(capacity: batchBytes * 2)
    defer { pending.deallocate() }
    var nextLine = 1
    var submitted = 0
    var written = 0
    var atInputStart = true
    var endOfInput = false
    var total = 0
    var kept: [Int: Batch] = [:]
    var carry: (bytes: [UInt8], line: Int)? = nil
    let maximumInFlight = max(2, 2 * jobs)
    var boundaries = BoundaryFinder()

    func cut(at split: Int, isLast: Bool) {
      let newlines = boundaries.newlines(in: pending, before: split)
      // The batch takes the buffer; the little after the cut (part of a line) starts a new one.
      let rest = pending.count - split
      var next = ByteBuffer(capacity: max(batchBytes * 2, rest + batchBytes))
      next.append(pending.base + split, count: rest)
      pending.count = split
      let bytes = BatchBytes(taking: pending)
      pending = next
      let batch = Batch(
        index: submitted, bytes: bytes, firstLine: nextLine, atInputStart: atInputStart,
        isLast: isLast)
      nextLine += newlines
      atInputStart = false
      boundaries.cut(at: split, newlines: newlines)
      kept[submitted] = batch
      queue.submit(batch)
      submitted += 1
    }

    /// Writes the next batch's result (converted again after the previous one's carry).
    func deliverNext() throws(IOError) -> (outcome: InputOutcome, isLast: Bool) {
      var result = queue.result(for: written)
      let batch = kept.removeValue(forKey: written)!
      if let previous = carry {
        result = convertBatch(batch, carry: previous.bytes, carryLine: previous.line, with: local)
      }
      carry = result.carry.map { ($0, result.carryLine) }
      written += 1
      try deliver(result)
      return (result.outcome, batch.isLast)
    }

    while true {
      // Read and hand out batches while there is room.
      while !endOfInput && submitted - written < maximumInFlight {
        pending.reserve(batchBytes)
        let count = Glibc.read(descriptor, pending.base + pending.count, batchBytes)
        if count < 0 {
          if errno == EINTR { continue }
          let code = errno
          queue.close()
          throw IOError(operation: .read, code: code, target: name)
        }
        pending.count += count
        total += count
        statisticsOffset.bytesIn += count
        progressHandler?(total, statisticsSoFar)
        if count == 0 {
          endOfInput = true
          cut(at: pending.count, isLast: true)
          break
        }
        let dataWaiting = count == batchBytes || Self.moreInputReady(descriptor)
        if pending.count >= batchBytes || !dataWaiting {
          if let split = boundaries.lastBoundary(in: pending) {
            cut(at: split, isLast: false)
          } else if pending.count >= 4 * batchBytes {
            // No line starts with `{` in several batches: one huge document (held in memory
            // once, rather than once per copy between threads), or documents that do not start
            // their lines. A cut anywhere else could split a document, or the skipping after a
            // malformed one, differently from one pass. Finish the batches in flight, then
            // convert the rest of this input on this thread.
            while written < submitted {
              let next = try deliverNext()
              if next.outcome != .completed {
                queue.close()
                return next.outcome
              }
            }
            return try continueOnThisThread(
              descriptor: descriptor, name: name, carry: carry?.bytes,
              pending: UnsafeRawBufferPointer(pending.bytes),
              firstLine: carry?.line ?? nextLine, atInputStart: atInputStart && carry == nil,
              alreadyRead: total)
          }
        }
      }
      guard written < submitted else { break }
      let next = try deliverNext()
      if next.outcome != .completed {
        // A bad document stopped the run: nothing after it is written.
        queue.close()
        return next.outcome
      }
      if next.isLast { break }
    }
    return .completed
  }

  /// Whether reading `descriptor` now would not block (a pipe with data waiting, a file).
  static func moreInputReady(_ descriptor: Int32) -> Bool {
    var request = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
    return poll(&request, 1, 0) > 0
  }
}

/// Finds where the parallel reader may cut its pending input: just before a line that starts
/// with `{`; and counts the newlines before the cut, for the next batch's first line number. It
/// remembers what it has scanned, so a long line without a boundary (one huge document) is
/// scanned once, not again after every read, and no byte is scanned twice for newlines.
struct BoundaryFinder {
  /// `pending[..<scanned]` has been looked at.
  private var scanned = 0
  /// Newlines in `pending[..<scanned]`.
  private var newlinesScanned = 0
  /// One past the last newline followed by `{`, and the newlines before it (its own included).
  private var boundary: (end: Int, newlines: Int)? = nil
  /// One past the last newline, and the newlines before it.
  private var newline: (end: Int, newlines: Int)? = nil

  /// One past the last newline followed by `{`, or nil when there is none.
  mutating func lastBoundary(in pending: ByteBuffer) -> Int? {
    // A newline that ended the last scan may only now be seen to be followed by `{`.
    if let last = newline, last.end == scanned, scanned < pending.count,
      pending.base[scanned] == UInt8(ascii: "{")
    {
      boundary = last
    }
    var index = scanned
    while index < pending.count,
      let found = memchr(pending.base + index, 0x0A, pending.count - index)
    {
      let end = pending.base.distance(to: found.assumingMemoryBound(to: UInt8.self)) + 1
      newlinesScanned += 1
      newline = (end, newlinesScanned)
      if end < pending.count && pending.base[end] == UInt8(ascii: "{") { boundary = newline }
      index = end
    }
    scanned = pending.count
    return boundary?.end
  }

  /// The number of newlines in `pending[..<split]`, where `split` is the last boundary found or
  /// the end of `pending`.
  func newlines(in pending: ByteBuffer, before split: Int) -> Int {
    if let boundary, boundary.end == split { return boundary.newlines }
    // The end of the input: count what was not scanned yet.
    assert(split >= scanned, "a batch is cut only at the last boundary or at the end")
    var count = newlinesScanned
    var index = scanned
    while index < split, let found = memchr(pending.base + index, 0x0A, split - index) {
      count += 1
      index = pending.base.distance(to: found.assumingMemoryBound(to: UInt8.self)) + 1
    }
    return count
  }

  /// The first `split` bytes, holding `newlines` newlines, were handed out as a batch.
  mutating func cut(at split: Int, newlines: Int) {
    guard split < scanned else {
      self = BoundaryFinder()
      return
    }
    scanned -= split
    newlinesScanned -= newlines
    boundary = boundary.flatMap { $0.end > split ? ($0.end - split, $0.newlines - newlines) : nil }
    newline = newline.flatMap { $0.end > split ? ($0.end - split, $0.newlines - newlines) : nil }
  }
}
