// Unit tests reach internal types through @testable, which only debug builds allow; the release
// run of `make test` covers the build that ships with ConformanceTests and CLITests.
#if DEBUG

import Testing
import TestSupport

@testable import LegacyAttachments

@Suite("Boundary finder: where the parallel reader cuts, and the newlines before")
struct BoundaryFinderTests {
  /// Lines of a few kinds: documents, rows after a comma, a second comma, blank and indented
  /// lines, long ones.
  private func text(lines: Int, random: inout SplitMix64) -> [UInt8] {
    let starts = [
      "{\"a\":1}", ",{\"b\":2}", ",,", "  \"x\": [1]", "", "]",
      "{" + String(repeating: "y", count: 40),
    ]
    var bytes: [UInt8] = []
    for _ in 0..<lines {
      bytes += Array(starts[random.below(starts.count)].utf8) + [0x0A]
    }
    return bytes
  }

  /// The rule, byte by byte: the last line start after `start`, before `end` (its first byte
  /// read), that starts with `{`, or with `,` after anything but a comma when `commas`.
  private func expectedBoundary(
    in bytes: [UInt8], start: Int, end: Int, commas: Bool
  ) -> Int? {
    var found: Int? = nil
    var position = start + 1
    while position < end {
      if bytes[position - 1] == 0x0A {
        let byte = bytes[position]
        if byte == UInt8(ascii: "{") {
          found = position
        } else if commas && byte == UInt8(ascii: ",") {
          let before = bytes[start..<position].last { !JSONText.isWhitespace($0) }
          if let before, before != UInt8(ascii: ",") { found = position }
        }
      }
      position += 1
    }
    return found
  }

  @Test(
    "every read size, looked at after some reads only: each cut is the last boundary read, with the newlines before it",
    arguments: [false, true])
  func cutsMatchTheRule(commas: Bool) {
    var random = SplitMix64(seed: commas ? 2 : 1)
    let bytes = text(lines: 60, random: &random)
    for readSize in [1, 2, 3, 7, 16, 64, 500, bytes.count] {
      var finder = BoundaryFinder()
      finder.cutsBeforeCommas = commas
      var window = InputWindow(capacity: 64)
      var read = 0
      var cutAt = 0
      while read < bytes.count {
        let next = min(bytes.count, read + readSize)
        bytes[read..<next].withUnsafeBytes { window.append($0) }
        read = next
        // The reader looks after some reads only, and may look twice with nothing new.
        let looks = random.below(3)
        guard looks > 0 else { continue }
        let expected = expectedBoundary(in: bytes, start: cutAt, end: read, commas: commas)
        var found: StreamOffset? = nil
        for _ in 0..<looks {
          found = finder.lastBoundary(in: window.view)
          #expect(found.map { $0.value } == expected, "read size \(readSize), read \(read)")
        }
        guard let found, random.percent(50) else { continue }
        #expect(
          finder.newlines(before: found, in: window.view)
            == bytes[..<found.value].count { $0 == 0x0A }, "read size \(readSize), cut \(found)")
        _ = window.split(at: found, capacity: 64)
        cutAt = found.value
      }
      #expect(
        finder.newlines(before: window.end, in: window.view) == bytes.count { $0 == 0x0A },
        "read size \(readSize), end")
    }
  }
}

#endif
