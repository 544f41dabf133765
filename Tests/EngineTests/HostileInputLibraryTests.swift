// Unit tests reach internal types through @testable, which only debug builds allow; the release
// run of `make test` covers the build that ships with ConformanceTests and CLITests.
#if DEBUG

import Foundation
import Glibc
import Testing
import TestSupport

@testable import LegacyAttachments

// Issue 5, hostile inputs, through the library: the same cases as the CLI's HostileInputTests
// where the library alone can show more — chunking anywhere (a byte-order mark or a UTF-8
// sequence split between two feeds), the ConversionDiagnostic values themselves, and the parallel reader
// with batches small enough to hit its edge cases quickly.

private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

private func same(_ a: [UInt8], _ b: [UInt8]) -> Bool {
  a.count == b.count
    && (a.isEmpty
      || a.withUnsafeBytes { x in
        b.withUnsafeBytes { y in memcmp(x.baseAddress!, y.baseAddress!, a.count) == 0 }
      })
}

@Suite("Library: hostile input")
struct HostileInputLibraryTests {
  @Test(
    "100,000 levels of nesting: push names the blob at the bottom, pull undoes it, chunking changes nothing"
  )
  func deepNesting() throws {
    let depth = 100_000
    let blob = "{\"@type\":\"blob\",\"digest\":\"d\"}"
    let document =
      "{\"a\":[" + String(repeating: "[{\"k\":", count: depth) + blob
      + String(repeating: "}]", count: depth) + "]}"
    // The path alternates array index 0 and key k: $.a[0][0].k[0].k …
    let name = "$.a[0]" + String(repeating: "[0].k", count: depth)
    let pushed = String(document.dropLast()) + ",\"_attachments\":{\"\(name)\":{\"digest\":\"d\"}}}"
    let result = try CBLAttachments.push(bytes(document))
    #expect(same(result, bytes(pushed)), "\(shown(result))")
    #expect(try CBLAttachments.pull(result) == bytes(document))
    let pointer = "blob_/a/0" + String(repeating: "/0/k", count: depth)
    let litecore = try CBLAttachments.push(bytes(document), naming: .litecore, revpos: 7)
    #expect(
      same(
        litecore,
        bytes(
          String(document.dropLast())
            + ",\"_attachments\":{\"\(pointer)\":{\"digest\":\"d\",\"stub\":true,\"revpos\":7}}}")),
      "\(shown(litecore))")

    // The same in a stream, fed in odd-sized pieces, between two other documents.
    let stream = bytes("{\"x\":1}\n" + document + "\n{\"y\":2}\n")
    let whole = CBLAttachments.convertStream(stream, options: ConversionOptions(mode: .push))
    #expect(
      same(whole.output, bytes("{\"x\":1}\n" + pushed + "\n{\"y\":2}\n"))
        && whole.diagnostics.isEmpty)
    for chunk in [7, 4093] {
      let pieces = CBLAttachments.convertStream(
        stream, options: ConversionOptions(mode: .push), chunkSize: chunk)
      #expect(Outcome(pieces) == Outcome(whole), "chunk \(chunk)")
    }
  }

  @Test("without keep-going a broken envelope stops at once, even on a line that never ends")
  func stopDoesNotWaitForALineEnd() throws {
    var options = ConversionOptions(mode: .push)
    options.documents = .changes
    var output: [UInt8] = []
    var diagnostics: [String] = []
    let converter = StreamConverter(
      options: options,
      output: ClosureSink { (bytes: UnsafeRawBufferPointer) in output.append(contentsOf: bytes) })
    converter.diagnosticHandler = { (diagnostic: ConversionDiagnostic, _: String) in
      diagnostics.append(diagnostic.description)
    }
    // The error, then bytes with no newline (ending after 10,000 reads, so that a converter
    // that waits for the line's end still ends).
    var reads = 0
    var source = ClosureSource { (buffer: UnsafeMutableRawBufferPointer) in
      reads += 1
      guard reads < 10_000 else { return 0 }
      let text = reads == 1 ? Array(#"{"results":[x"#.utf8) : [UInt8](repeating: 0x79, count: 4096)
      let count = min(text.count, buffer.count)
      text.withUnsafeBytes {
        buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[..<count]))
      }
      return count
    }
    #expect(try converter.convert(from: &source, name: "in") == .stopped)
    try converter.finish()
    #expect(reads < 10, "\(reads) reads")
    #expect(diagnostics == ["1:13: error: malformed JSON: invalid character"])
    #expect(output == Array("{\"results\":[]}\n".utf8))
  }

  @Test("a truncated document 100,000 levels deep: a malformed-JSON error at the end of the input")
  func deepTruncated() throws {
    let depth = 100_000
    let document = bytes("{\"_id\":\"t\",\"a\":" + String(repeating: "[", count: depth))
    #expect {
      try CBLAttachments.push(document)
    } throws: { error in
      guard let error = error as? DocumentError else { return false }
      let d = error.diagnostic
      return d.kind == .malformedJSON && d.line == 1 && d.column == 16 + depth
        && d.documentID == "t"
        && d.message == "malformed JSON: truncated document (the input ends inside it)"
    }
  }

  @Test("a million keys, duplicates among them: every member kept in order, the blob named")
  func millionKeys() throws {
    var document = [UInt8]()
    document.reserveCapacity(17_000_000)
    document += bytes("{\"_id\":\"many\"")
    for index in 0..<1_000_000 { document += bytes(",\"k\(index)\":\(index)") }
    document += bytes(
      ",\"k0\":\"again\",\"_id\":\"dup\",\"b\":{\"@type\":\"blob\",\"digest\":\"d\"},\"k0\":[]}")
    let pushed = try CBLAttachments.push(document)
    #expect(
      same(
        pushed,
        Array(document.dropLast()) + bytes(",\"_attachments\":{\"$.b\":{\"digest\":\"d\"}}}")))
    #expect(same(try CBLAttachments.pull(pushed), document))
  }

  @Test(
    "a 32 MB string in 4 KiB and 1 MiB feeds: the output exact, the same whatever the feed size")
  func bigString() throws {
    let pattern = bytes("0123456789abcdef\\u00e9\\\"é€😀\\ud800 ")
    let count = 32_000_000 / pattern.count
    var document = bytes("{\"_id\":\"big\",\"s\":\"")
    document.reserveCapacity(32_100_000)
    for _ in 0..<count { document += pattern }
    let tail = bytes("\",\"p\":{\"@type\":\"blob\",\"digest\":\"d\"}}")
    document += tail
    let stream = bytes("{\"x\":1}\n") + document + bytes("\n{\"y\":2}\n")
    let expected =
      bytes("{\"x\":1}\n") + document.dropLast()
      + bytes(",\"_attachments\":{\"$.p\":{\"digest\":\"d\"}}}\n{\"y\":2}\n")
    for chunk in [4096, 1 << 20] {
      let result = CBLAttachments.convertStream(
        stream, options: ConversionOptions(mode: .push), chunkSize: chunk)
      #expect(
        same(result.output, expected) && result.diagnostics.isEmpty && result.outcome == .completed,
        "chunk \(chunk)")
    }
  }

  @Test("a 100,000-digit number literal is copied verbatim, also when it ends the input")
  func hugeNumber() throws {
    let digits = "9" + String(repeating: "876543210", count: 11_111)
    let document =
      "{\"n\":-\(digits).\(digits)E+\(digits),\"p\":{\"@type\":\"blob\",\"digest\":\"d\",\"length\":\(digits)}}"
    let pushed = try CBLAttachments.push(bytes(document))
    #expect(
      same(
        pushed,
        bytes(
          String(document.dropLast())
            + ",\"_attachments\":{\"$.p\":{\"digest\":\"d\",\"length\":\(digits)}}}")))
    // A top-level number as the last thing of the input, without a newline: not an object.
    let result = CBLAttachments.convertStream(
      bytes("{\"a\":1}\n" + digits), options: ConversionOptions(mode: .pull))
    #expect(result.output == bytes("{\"a\":1}\n"))
    #expect(
      result.diagnostics.map(\.description) == [
        "2:1: error: document is not a JSON object (it is a number)"
      ])
  }

  /// Invalid UTF-8, fed whole and one byte at a time (sequences split between feeds).
  @Test(
    "invalid UTF-8: the same diagnostic at every feed size, located at the first bad byte",
    arguments: [
      [0x80], [0xC3], [0xE2, 0x82], [0xF0, 0x9F, 0x98], [0xC0, 0xAF], [0xE0, 0x80, 0xAF],
      [0xF0, 0x80, 0x80, 0xAF], [0xED, 0xA0, 0x80], [0xED, 0xBF, 0xBF], [0xF4, 0x90, 0x80, 0x80],
      [0xFE],
    ] as [[UInt8]])
  func invalidUTF8(sequence: [UInt8]) throws {
    let input =
      bytes("{\"ok\":\"€\"}\n{\"_id\":\"é\",\"s\":\"😀") + sequence + bytes("\"}\n{\"after\":1}\n")
    for keepGoing in [false, true] {
      let options = ConversionOptions(mode: .push, keepGoing: keepGoing)
      let whole = CBLAttachments.convertStream(input, options: options)
      let diagnostic = try #require(whole.diagnostics.first)
      #expect(whole.diagnostics.count == 1)
      #expect(diagnostic.kind == .malformedJSON && diagnostic.severity == .error)
      #expect(
        diagnostic.line == 2 && diagnostic.column == 18 && diagnostic.documentID == "é",
        "\(diagnostic)")
      #expect(
        diagnostic.message
          == "malformed JSON: invalid UTF-8 (byte 0x\(String(sequence[0], radix: 16, uppercase: true)))"
      )
      #expect(whole.output == bytes("{\"ok\":\"€\"}\n" + (keepGoing ? "{\"after\":1}\n" : "")))
      for chunk in [1, 2, 3, 5] {
        let pieces = CBLAttachments.convertStream(input, options: options, chunkSize: chunk)
        #expect(Outcome(pieces) == Outcome(whole), "chunk \(chunk), keepGoing \(keepGoing)")
      }
    }
  }

  /// The document keeps each escape as written (`\uDBFF` stays upper-case); a synthesized name
  /// is a new JSON string, where the lone surrogate is written as a (lower-case) escape.
  @Test("lone surrogate escapes: kept byte-exact in keys and values, names written with the escape")
  func loneSurrogates() throws {
    let document =
      "{\"v\":\"\\udc00\\ud800\",\"\\ud800\":{\"@type\":\"blob\",\"digest\":\"\\udfff\"},\"x\\uDBFF/\":[{\"@type\":\"blob\",\"digest\":\"e\"}]}"
    let pushed = try CBLAttachments.push(bytes(document))
    #expect(
      String(decoding: pushed, as: UTF8.self)
        == String(document.dropLast())
        + ",\"_attachments\":{\"$.\\ud800\":{\"digest\":\"\\udfff\"},\"$.x\\udbff/[0]\":{\"digest\":\"e\"}}}"
    )
    #expect(try CBLAttachments.pull(pushed) == bytes(document))
    let litecore = try CBLAttachments.push(bytes(document), naming: .litecore)
    #expect(
      String(decoding: litecore, as: UTF8.self).hasSuffix(
        "\"_attachments\":{\"blob_/\\ud800\":{\"digest\":\"\\udfff\",\"stub\":true,\"revpos\":1},"
          + "\"blob_/x\\udbff~1/0\":{\"digest\":\"e\",\"stub\":true,\"revpos\":1}}}"))
    // Pull matches by digest compared decoded: the escape and the same escape match.
    let legacy =
      "{\"a\":{\"@type\":\"blob\",\"digest\":\"\\ud800\"},\"_attachments\":{\"old\":{\"digest\":\"\\ud800\"}}}"
    #expect(
      try CBLAttachments.pull(bytes(legacy))
        == bytes("{\"a\":{\"@type\":\"blob\",\"digest\":\"\\ud800\"}}"))
  }

  @Test("NUL: escaped it is kept; raw it is malformed, at its own column")
  func nul() throws {
    let escaped = "{\"k\\u0000\":{\"@type\":\"blob\",\"digest\":\"\\u0000\"}}"
    #expect(
      try CBLAttachments.push(bytes(escaped))
        == bytes(
          String(escaped.dropLast())
            + ",\"_attachments\":{\"$.k\\u0000\":{\"digest\":\"\\u0000\"}}}"))
    #expect {
      try CBLAttachments.push(bytes("{\"a\":\"x") + [0] + bytes("\"}"))
    } throws: { error in
      guard let d = (error as? DocumentError)?.diagnostic else { return false }
      return d.kind == .malformedJSON && d.line == 1 && d.column == 8
        && d.message == "malformed JSON: invalid character inside string"
    }
  }

  @Test(
    "a byte-order mark split between feeds is still skipped at the start; elsewhere it is malformed"
  )
  func byteOrderMarkInPieces() throws {
    let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
    for chunk in [1, 2, 4, 1 << 16] {
      let start = CBLAttachments.convertStream(
        bom + bytes("{\"a\":1}\n"), options: ConversionOptions(mode: .pull), chunkSize: chunk)
      #expect(start.output == bytes("{\"a\":1}\n") && start.diagnostics.isEmpty, "chunk \(chunk)")
      let middle = CBLAttachments.convertStream(
        bytes("{\"a\":1}\n") + bom + bytes("{\"b\":2}\n{\"c\":3}\n"),
        options: ConversionOptions(mode: .pull, keepGoing: true),
        chunkSize: chunk)
      #expect(middle.output == bytes("{\"a\":1}\n{\"c\":3}\n"), "chunk \(chunk)")
      #expect(
        middle.diagnostics.map(\.description) == [
          "2:1: error: malformed JSON: a byte-order mark (U+FEFF) inside the input; only its very start may have one"
        ], "chunk \(chunk)")
      #expect(middle.rejects == bom + bytes("{\"b\":2}\n"), "chunk \(chunk)")
    }
  }

  @Test(
    "a truncated last document: library push throws it, a stream reports it after the good ones")
  func truncatedLast() throws {
    #expect {
      try CBLAttachments.push(bytes("{\"_id\":\"t\",\"a\":\"abc"))
    } throws: { error in
      guard let d = (error as? DocumentError)?.diagnostic else { return false }
      return d.kind == .malformedJSON && d.line == 1 && d.column == 20 && d.documentID == "t"
        && d.message == "malformed JSON: truncated document (the input ends inside it)"
    }
    let input = bytes("{\"a\":1}\n{\"b\":2}\n{\"_id\":\"t\",\n\"c\":[")
    for chunk in [1, 3, 1 << 16] {
      let result = CBLAttachments.convertStream(
        input, options: ConversionOptions(mode: .push, keepGoing: true), chunkSize: chunk)
      #expect(result.output == bytes("{\"a\":1}\n{\"b\":2}\n"), "chunk \(chunk)")
      #expect(
        result.diagnostics.map(\.description)
          == [
            "4:6: error: document \"t\": malformed JSON: truncated document (the input ends inside it)"
          ], "chunk \(chunk)")
      #expect(result.rejects == bytes("{\"_id\":\"t\",\n\"c\":[\n"), "chunk \(chunk)")
      #expect(result.statistics.documents == 3 && result.statistics.errors == 1, "chunk \(chunk)")
    }
  }

  /// The parallel reader gives up cutting when input with no line starting with `{` has grown
  /// to sixteen times the batch size (``ParallelRun/batchesWithoutBoundary``). Here batches
  /// are 4 KiB, so a pretty-printed document of 100 KiB or more crosses that limit.
  @Test(
    "a pretty-printed document much longer than a batch, then more documents: the same as one thread",
    arguments: [2_000, 2_500, 3_000, 5_000, 8_000])
  func prettyDocumentAcrossForcedCuts(members: Int) throws {
    var text = "{\"_id\":\"first\"}\n{\n"
    for index in 0..<members {
      text += "  \"k\(index)\": [\(index), {\"@type\":\"blob\",\"digest\":\"d\(index)\"}],\n"
    }
    text += "  \"end\": true\n}\n{\"_id\":\"last\"}\n"
    let options = ConversionOptions(mode: .push, keepGoing: true)
    let one = try convertFile(bytes(text), options: options, jobs: 1, batchBytes: 4096)
    #expect(one.outcome == .completed && one.diagnostics.isEmpty && one.documents == 3, "\(one)")
    for jobs in [2, 3] {
      let parallel = try convertFile(bytes(text), options: options, jobs: jobs, batchBytes: 4096)
      #expect(parallel == one, "\(members) members, -j \(jobs):\n\(parallel)\none thread:\n\(one)")
    }
  }

  /// What input arriving a byte at a time does to the parallel reader (it cuts a batch whenever
  /// no more data is waiting), made deterministic: every batch size from 1 to 40 bytes.
  @Test(
    "bad documents after a truncated record, cut into batches of every size: the same as one thread",
    arguments: [
      "{\"x\":\n{\"a\":1}\n\"str\"\n{\"b\":2}\n",
      "{\"_id\":\"3\",\"x\":\r\n{\"_id\":\"4\"}\r\n  \"not an object\"\n{\"_id\":\"5\",\"_attachments\":{},\"_attachments\":{}}\n{\"_id\":\"6\"}\n",
      "{\"x\":1,\n{\"a\":1}\n[1]\n{\"b\":2}\n42\n{\"c\":3}\n",
      "{\"x\":\"abc\n{\"a\":1}\nnull\n{\"b\":2}\n",
    ])
  func badAfterTruncatedRecordInBatches(input: String) throws {
    for mode in [ConversionMode.push, .pull] {
      let options = ConversionOptions(mode: mode, keepGoing: true)
      let one = try convertFile(bytes(input), options: options, jobs: 1, batchBytes: 1 << 20)
      for batchBytes in 1...40 {
        let parallel = try convertFile(
          bytes(input), options: options, jobs: 2, batchBytes: batchBytes)
        #expect(
          parallel == one,
          "\(mode), batches of \(batchBytes) bytes:\n\(parallel)\none thread:\n\(one)")
        if parallel != one { break }
      }
    }
  }
}

#endif
