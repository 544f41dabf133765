// Unit tests reach internal types through @testable, which only debug builds allow; the release
// run of `make test` covers the build that ships with ConformanceTests and CLITests.
#if DEBUG

import Testing
import TestSupport

@testable import LegacyAttachments

@Suite("Newlines counted and found 16 bytes at a time")
struct ByteScanTests {
  private let newline: UInt8 = 0x0A

  /// Random bytes, a newline about one in `every`.
  private func text(count: Int, every: Int, random: inout SplitMix64) -> [UInt8] {
    (0..<count).map { _ in random.below(every) == 0 ? newline : UInt8(0x20 + random.below(0x5F)) }
  }

  private func scan(_ bytes: ArraySlice<UInt8>) -> (count: Int, last: Int?) {
    bytes.withUnsafeBufferPointer {
      let base = $0.baseAddress ?? UnsafePointer(bitPattern: 1)!
      return (
        ByteScan.count(of: newline, in: base, count: $0.count),
        ByteScan.lastIndex(of: newline, in: base, count: $0.count)
      )
    }
  }

  @Test("count and last index agree with a byte-by-byte scan at every length and start")
  func agreesWithScalarScan() {
    var random = SplitMix64(seed: 29)
    for every in [1, 3, 17, 1_000] {
      let bytes = text(count: 120, every: every, random: &random)
      for start in 0..<17 {
        for end in start...bytes.count {
          let slice = bytes[start..<end]
          let found = scan(slice)
          #expect(found.count == slice.count { $0 == newline }, "\(every) \(start)..<\(end)")
          #expect(
            found.last == slice.lastIndex(of: newline).map { $0 - start },
            "\(every) \(start)..<\(end)")
        }
      }
    }
  }

  @Test("more than 255 steps of matches in every lane: the byte sums are added up before they wrap")
  func longRunsDoNotWrap() {
    for count in [16 * 255, 16 * 255 + 16, 16 * 256 * 3 + 5] {
      let bytes = [UInt8](repeating: newline, count: count)
      #expect(scan(bytes[...]) == (count, count - 1))
    }
    var bytes = [UInt8](repeating: 0x20, count: 16 * 600)
    bytes[3] = newline
    #expect(scan(bytes[...]) == (1, 3))
  }
}

#endif
