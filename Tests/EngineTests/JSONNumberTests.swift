// Unit tests reach internal types through @testable, which only debug builds allow; the release
// run of `make test` covers the build that ships with ConformanceTests and CLITests.
#if DEBUG

import Testing

@testable import LegacyAttachments

@Suite("JSON numbers read exactly: whole numbers and limits, never through a Double")
struct JSONNumberTests {
  private func number(_ text: String) -> JSONNumber? {
    let bytes = Array(text.utf8)
    return bytes.withUnsafeBufferPointer { JSONNumber($0) }
  }

  @Test(
    "whole numbers, however written, and the fractions a Double would round to one",
    arguments: [
      ("4321", 4321), ("4321.0", 4321), ("4.321e3", 4321), ("4321E0", 4321), ("43210e-1", 4321),
      ("0", 0), ("-0", 0), ("0.0e5", 0), ("1e18", 1_000_000_000_000_000_000 as Int?),
      ("1e400", Int.max), ("123456789012345678901234567890", Int.max),
      ("6.00000000000000000001", nil), ("4321.5", nil), ("1e-400", nil), ("-1", nil),
      ("-4.321e3", nil),
    ] as [(String, Int?)])
  func wholeValues(_ text: String, _ expected: Int?) {
    #expect(number(text)?.wholeValue == expected, "\(text)")
  }

  @Test("more than a limit, exactly at its edge")
  func exceeds() {
    let limit = 20_971_520
    for text in ["20971520.0000000001", "20971521", "2.0971521e7", "1e400", "20971520000e-3.5"]
    where number(text) != nil {
      #expect(number(text)!.exceeds(limit), "\(text)")
    }
    for text in [
      "20971520", "20971520.0", "2.097152e7", "20971519.999999999999", "-1e400", "0", "1e-400",
    ] {
      #expect(!number(text)!.exceeds(limit), "\(text)")
    }
  }

  @Test(
    "what is not a number token is refused",
    arguments: ["", "-", "1.", ".5", "1e", "1e+", "01x", "\"5\"", "true", "1 "])
  func refused(_ text: String) {
    #expect(number(text) == nil, "\(text)")
  }
}

#endif
