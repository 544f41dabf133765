import Glibc

extension BatchResult {
  /// Adds `delta` to the index that follows `prefix` (``PathMatcher/rowPathBeforeFirstIndex(options:)``)
  /// in every row that starts before `end` of the output, and moves the marks after each index
  /// whose length changed: a worker that started between the elements of an envelope counted
  /// them from its batch's start, and the driver knows how many came before.
  mutating func addToRowIndexes(_ delta: Int, after prefix: [UInt8], before end: Int) {
    var patched: [UInt8] = []
    var shifts: [(at: Int, by: Int)] = []
    output.withUnsafeBytes { raw in
      let output = raw.assumingMemoryBound(to: UInt8.self)
      var copied = 0
      var from = 0
      while let found = Self.find(prefix, in: output, from: from), found < end {
        let digitsStart = found + prefix.count
        var digitsEnd = digitsStart
        var value = 0
        while digitsEnd < output.count, output[digitsEnd] >= 0x30, output[digitsEnd] <= 0x39 {
          value = value * 10 + Int(output[digitsEnd] - 0x30)
          digitsEnd += 1
        }
        if patched.isEmpty { patched.reserveCapacity(output.count + output.count / 16) }
        patched.append(contentsOf: output[copied..<digitsStart])
        let digits = Array(String(value + delta).utf8)
        patched.append(contentsOf: digits)
        shifts.append((digitsEnd, digits.count - (digitsEnd - digitsStart)))
        copied = digitsEnd
        from = digitsEnd
      }
      if !shifts.isEmpty { patched.append(contentsOf: output[copied...]) }
    }
    guard !shifts.isEmpty else { return }
    output = BatchOutput(patched)
    // Marks and shifts are both in output order.
    var shift = 0
    var next = 0
    for index in marks.indices {
      while next < shifts.count && shifts[next].at <= marks[index].output {
        shift += shifts[next].by
        next += 1
      }
      marks[index].output += shift
    }
  }

  private static func find(
    _ needle: [UInt8], in bytes: UnsafeBufferPointer<UInt8>, from start: Int
  ) -> Int? {
    needle.withUnsafeBufferPointer { pattern in
      var position = start
      while position + pattern.count <= bytes.count {
        guard
          let hit = memchr(bytes.baseAddress! + position, Int32(pattern[0]), bytes.count - position)
        else { return nil }
        position = bytes.baseAddress!.distance(to: hit.assumingMemoryBound(to: UInt8.self))
        if position + pattern.count <= bytes.count
          && memcmp(bytes.baseAddress! + position, pattern.baseAddress!, pattern.count) == 0
        {
          return position
        }
        position += 1
      }
      return nil
    }
  }
}
