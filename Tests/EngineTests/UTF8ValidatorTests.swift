// Unit tests reach internal types through @testable, which only debug builds allow; the release
// run of `make test` covers the build that ships with ConformanceTests and CLITests.
#if DEBUG

import Testing
import TestSupport

@testable import LegacyAttachments

@Suite("Strict UTF-8 check")
struct UTF8ValidatorTests {
  private func firstInvalid(_ bytes: [UInt8]) -> Int? {
    bytes.withUnsafeBufferPointer {
      UTF8Validator.firstInvalid($0.baseAddress ?? UnsafePointer(bitPattern: 1)!, count: $0.count)
    }
  }

  @Test("well-formed text passes, at every length around the eight-byte steps")
  func wellFormed() {
    let text = Array("plain ASCII, café, 東京, 😀 and more ASCII to cross several words".utf8)
    for length in 0...text.count {
      let prefix = Array(text[..<length])
      if String(validating: prefix, as: UTF8.self) != nil { #expect(firstInvalid(prefix) == nil) }
    }
  }

  @Test(
    "each kind of bad sequence is found at its first byte",
    arguments: [
      ([0x61, 0x80], 1),  // lone continuation byte
      ([0x61, 0x62, 0xC3], 2),  // truncated two-byte sequence
      ([0xC0, 0xAF], 0),  // overlong '/'
      ([0xE0, 0x80, 0xAF], 0),  // overlong three-byte form
      ([0xED, 0xA0, 0x80], 0),  // encoded surrogate U+D800
      ([0xF4, 0x90, 0x80, 0x80], 0),  // beyond U+10FFFF
      ([0xF8, 0x88, 0x80, 0x80, 0x80], 0),  // five-byte form
      ([0x41, 0x41, 0x41, 0x41, 0x41, 0x41, 0x41, 0x41, 0x41, 0xFF], 9),  // after a word of ASCII
      ([0xE6, 0x9D, 0xB1, 0xE4, 0xBA], 3),  // truncated after a good one
    ] as [([UInt8], Int)])
  func badSequences(bytes: [UInt8], expected: Int) {
    #expect(firstInvalid(bytes) == expected)
  }

  @Test(
    "a sequence cut short where a window of ASCII starts is found, in text shorter than a span",
    arguments: [1, 2, 3])
  func cutBeforeASCIIBlock(continuations: Int) {
    // 160 bytes, less than a span: the windows are taken one at a time. An é near the start
    // makes the first window mixed; a 4-byte lead and `continuations - 1` of its continuation
    // bytes end just before a window of ASCII (they start 3 bytes in, 16 bytes apart), which
    // would be skipped as ASCII if its test left out the three bytes before it.
    for blockStart in [19, 35, 51, 67] {
      var bytes = Array(repeating: UInt8(ascii: "a"), count: 160)
      bytes[5] = 0xC3
      bytes[6] = 0xA9
      let lead = Self.cutShortLead(in: &bytes, endingAt: blockStart, continuations: continuations)
      #expect(firstInvalid(bytes) == lead, "lead at \(lead)")
    }
  }

  @Test("agrees with Swift's own strict decoding on random byte strings")
  func randomStrings() {
    var generator = SplitMix64(seed: 7)
    for _ in 0..<20_000 {
      let length = Int(generator.next() % 24)
      var bytes: [UInt8] = []
      for _ in 0..<length {
        let kind = generator.next() % 10
        let byte = UInt8(truncatingIfNeeded: generator.next())
        bytes.append(kind < 4 ? 0x20 + byte % 0x5F : kind < 6 ? 0x80 | byte & 0x3F : 0xC0 | byte)
      }
      let found = firstInvalid(bytes)
      let valid = String(validating: bytes, as: UTF8.self) != nil
      #expect((found == nil) == valid, "\(bytes)")
      if let found {
        // Everything before the reported byte is valid; the reported byte starts no valid sequence.
        #expect(String(validating: bytes[..<found], as: UTF8.self) != nil, "\(bytes)")
      }
    }
  }

  /// Puts a 4-byte lead and `continuations - 1` of its continuation bytes just before `end`:
  /// a sequence cut short there. Returns the lead's offset.
  private static func cutShortLead(in bytes: inout [UInt8], endingAt end: Int, continuations: Int)
    -> Int
  {
    let lead = end - continuations
    bytes[lead] = 0xF0
    for position in lead + 1..<end { bytes[position] = 0x9F }
    return lead
  }

  /// `bytes` with one byte replaced by `byte` at `position`, removed there, and `byte` inserted.
  private static func corrupted(_ bytes: [UInt8], at position: Int, with byte: UInt8) -> [[UInt8]] {
    var variants = [bytes, bytes, bytes]
    variants[0][position] = byte
    variants[1].remove(at: position)
    variants[2].insert(byte, at: position)
    return variants
  }

  /// Checks what the check finds in `variant` against Swift's strict decoding and the byte-by-byte
  /// check: the same verdict, the same offset, all valid before it and no valid sequence at it.
  private func expectAgreement(on variant: [UInt8], _ comment: Comment) {
    let found = firstInvalid(variant)
    #expect((found == nil) == (String(validating: variant, as: UTF8.self) != nil), comment)
    let expected = variant.withUnsafeBufferPointer {
      UTF8Validator.scalarCheck(
        $0.baseAddress ?? UnsafePointer(bitPattern: 1)!, from: 0, through: $0.count,
        count: $0.count
      ).invalid
    }
    #expect(found == expected, comment)
    guard let found else { return }
    #expect(String(validating: variant[..<found], as: UTF8.self) != nil, comment)
    for length in 1...4 where found + length <= variant.count {
      #expect(String(validating: variant[found..<found + length], as: UTF8.self) == nil, comment)
    }
  }

  /// Encodes `scalar` as UTF-8.
  private static func encode(_ scalar: Unicode.Scalar) -> [UInt8] { Array(String(scalar).utf8) }

  /// Scalars whose lead byte the block check hands to the byte-by-byte check, and ordinary ones.
  private static let samples: [Unicode.Scalar] = [
    "a", " ", "~", "é", "\u{7FF}", "\u{800}", "\u{FFF}", "東", "\u{D7FF}", "\u{E000}", "\u{FFFD}",
    "\u{10000}", "😀", "\u{3FFFF}", "\u{40000}", "\u{10FFFF}", "\u{80}", "ñ", "한", "ア",
  ]

  @Test("agrees with Swift's strict decoding on long mixed text, corrupted at every position")
  func longMixedText() {
    var generator = SplitMix64(seed: 11)
    let corruptions: [UInt8] = [
      0x80, 0xBF, 0xC0, 0xC1, 0xE0, 0xED, 0xF0, 0xF4, 0xF5, 0xF8, 0xFF, 0x41,
    ]
    for _ in 0..<3_000 {
      var bytes: [UInt8] = []
      let scalars = 1 + Int(generator.next() % 60)
      for _ in 0..<scalars {
        // Runs of ASCII of every length, so that sequences fall across the 8- and 16-byte steps,
        // and some long enough to fill windows of ASCII (which are not checked further).
        if generator.next() % 3 == 0 {
          let longest: UInt64 = generator.next() % 4 == 0 ? 80 : 20
          bytes += Array(repeating: 0x61, count: Int(generator.next() % longest))
        }
        bytes += Self.encode(Self.samples[Int(generator.next() % UInt64(Self.samples.count))])
      }
      #expect(firstInvalid(bytes) == nil, "\(bytes)")
      // One byte replaced, removed or inserted.
      let position = Int(generator.next() % UInt64(bytes.count))
      let byte = corruptions[Int(generator.next() % UInt64(corruptions.count))]
      for variant in Self.corrupted(bytes, at: position, with: byte) {
        expectAgreement(on: variant, "\(variant)")
      }
    }
  }

  @Test(
    "a sequence cut short before any window of a span is found, past the first span too",
    arguments: [1, 2, 3])
  func cutBeforeWindowInSpan(continuations: Int) {
    // Windows start 3 bytes in, `window` bytes apart; a span of them is tested for ASCII before
    // any is checked. A 4-byte lead and `continuations - 1` continuation bytes end just before
    // one window of ASCII: only its test of the three bytes before it shows the error.
    let window = UTF8Validator.window
    let span = UTF8Validator.windowsPerSpan
    for index in [1, 2, span / 2, span - 1, span, span + 1, 2 * span - 1, 2 * span, 2 * span + 1] {
      var bytes = Array(repeating: UInt8(ascii: "a"), count: 3 + window * (2 * span + 3))
      let lead = Self.cutShortLead(
        in: &bytes, endingAt: 3 + window * index, continuations: continuations)
      #expect(firstInvalid(bytes) == lead, "window \(index), lead at \(lead)")
    }
  }

  @Test("agrees with Swift's strict decoding on texts of several spans, corrupted anywhere")
  func spansOfMixedText() {
    var generator = SplitMix64(seed: 13)
    let corruptions: [UInt8] = [0x80, 0xBF, 0xC0, 0xC1, 0xE0, 0xED, 0xF0, 0xF4, 0xF5, 0xFF, 0x41]
    for _ in 0..<300 {
      var bytes: [UInt8] = []
      let length = 4_000 + Int(generator.next() % 9_000)
      while bytes.count < length {
        // ASCII runs up to 300 bytes: spans with every mix of ASCII and mixed windows.
        if generator.next() % 2 == 0 {
          bytes += Array(repeating: 0x62, count: Int(generator.next() % 300))
        }
        bytes += Self.encode(Self.samples[Int(generator.next() % UInt64(Self.samples.count))])
      }
      #expect(firstInvalid(bytes) == nil)
      let position = Int(generator.next() % UInt64(bytes.count))
      let byte = corruptions[Int(generator.next() % UInt64(corruptions.count))]
      for variant in Self.corrupted(bytes, at: position, with: byte) {
        expectAgreement(on: variant, "corrupted at \(position) with \(byte)")
      }
    }
  }
}

#endif
