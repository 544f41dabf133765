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

    func cut(at split: Int, isLast: Bool) {
      let bytes = Array(UnsafeBufferPointer(start: pending.base, count: split))
      var newlines = 0
      var position = 0
      while position < split,
        let found = memchr(pending.base + position, 0x0A, split - position)
      {
        newlines += 1
        position = pending.base.distance(to: found.assumingMemoryBound(to: UInt8.self)) + 1
      }
      let batch = Batch(
        index: submitted, bytes: bytes, firstLine: nextLine, atInputStart: atInputStart,
        isLast: isLast)
      nextLine += newlines
      atInputStart = false
      pending.removeFirst(split)
      kept[submitted] = batch
      queue.submit(batch)
      submitted += 1
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
          if let split = Self.lastDocumentBoundary(
            in: pending, force: pending.count >= 4 * batchBytes)
          {
            cut(at: split, isLast: false)
          }
        }
      }
      guard written < submitted else { break }
      var result = queue.result(for: written)
      let batch = kept.removeValue(forKey: written)!
      if let previous = carry {
        result = convertBatch(batch, carry: previous.bytes, carryLine: previous.line, with: local)
      }
      carry = result.carry.map { ($0, result.carryLine) }
      written += 1
      try deliver(result)
      if result.outcome != .completed {
        // A bad document stopped the run: nothing after it is written.
        queue.close()
        return result.outcome
      }
      if batch.isLast { break }
    }
    return .completed
  }

  /// One past the last newline that is followed by `{`, or with `force` one past the last
  /// newline at all; nil when there is none.
  static func lastDocumentBoundary(in buffer: ByteBuffer, force: Bool) -> Int? {
    var index = buffer.count - 2
    var lastNewline: Int? = nil
    while index >= 0 {
      if buffer.base[index] == 0x0A {
        if buffer.base[index + 1] == UInt8(ascii: "{") { return index + 1 }
        if lastNewline == nil { lastNewline = index + 1 }
      }
      index -= 1
    }
    if force, buffer.count > 0, buffer.base[buffer.count - 1] == 0x0A { return buffer.count }
    return force ? lastNewline : nil
  }

  /// Whether reading `descriptor` now would not block (a pipe with data waiting, a file).
  static func moreInputReady(_ descriptor: Int32) -> Bool {
    var request = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
    return poll(&request, 1, 0) > 0
  }
}
