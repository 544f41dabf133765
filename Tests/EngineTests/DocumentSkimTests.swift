// Unit tests reach internal types through @testable, which only debug builds allow; the release
// run of `make test` covers the build that ships with ConformanceTests and CLITests.
#if DEBUG

import TestSupport
import Testing

@_spi(Testing) import LegacyAttachments

@testable import LegacyAttachments

// Issue 29: documents push and pull leave as they are go through yajl with callbacks that only
// count (DocumentSkim), and any that is not what it seemed is parsed again. Whatever the input,
// the chunking and the buffers, a run with skimming must give exactly what a run without it
// gives: output, rejects, diagnostics, outcome.

@Suite("Skimming: documents push and pull leave alone, and every way a skim can miss")
struct DocumentSkimTests {
  private struct Run: Equatable, CustomStringConvertible {
    var output: [UInt8] = []
    var rejects: [UInt8] = []
    var diagnostics: [String] = []
    var outcome = InputOutcome.completed
    /// The engine's counts (documents, blobs, entries, warnings, errors, bytes read): a skimmed
    /// document is counted as a scanned one is.
    var statistics = ConversionStatistics()

    var description: String {
      "output \(String(decoding: output, as: UTF8.self).debugDescription), rejects "
        + "\(String(decoding: rejects, as: UTF8.self).debugDescription), diagnostics "
        + "\(diagnostics), \(outcome), \(statistics)"
    }
  }

  private func run(
    _ input: [UInt8], _ options: ConversionOptions, chunk: Int, capacities: EngineCapacities,
    skims: Bool
  ) -> (run: Run, counts: (skimmed: Int, rescanned: Int)) {
    let engine = ConversionEngine(options: options, capacities: capacities)
    if !skims { engine.skimsDocuments = false }
    var result = Run()
    func collect() {
      engine.deliver(
        output: { result.output += $0 }, rejects: { bytes, _ in result.rejects += bytes },
        diagnostic: { result.diagnostics.append($0.description) })
    }
    input.withUnsafeBytes { bytes in
      var offset = 0
      while offset < bytes.count && engine.stop == nil {
        let end = min(bytes.count, offset + chunk)
        engine.feed(UnsafeRawBufferPointer(rebasing: bytes[offset..<end]))
        collect()
        offset = end
      }
    }
    result.outcome = engine.finishReading()
    engine.finishOutput()
    collect()
    result.statistics = engine.statistics
    return (result, engine.skimCounts)
  }

  private static func options(_ mode: ConversionMode, keepGoing: Bool = false)
    -> ConversionOptions
  {
    var options = ConversionOptions(mode: mode)
    options.keepGoing = keepGoing
    return options
  }

  /// Lines a skim takes whole: no blob, no `_attachments`, no whitespace, no escape.
  private static let plain = [
    #"{"a":1,"b":[true,false,null],"c":{"d":"e f, g: {h} [i]"},"e":[],"f":{},"g":[[],[{}],{"x":[]}]}"#,
    #"{"_id":"msg::1","n":-1.5e3,"z":0,"u":1E+5,"s":"","t":"東京 café","type":"blob"}"#,
    #"{"@types":"x","_attachment":1,"attachments":{"a.png":{"digest":"sha1-x"}},"email":"a@b"}"#,
    #"{}"#,
  ]

  /// Lines a skim starts and must give up: each is parsed again.
  private static let missed = [
    #"{"a": 1}"#,
    #"{ "a":1}"#,
    #"{"a":1 }"#,
    #"{"a":[1, 2],"b":{}}"#,
    "{\"a\":1,\t\"b\":2}",
    #"{"a":"x\ny"}"#,
    #"{"a\"b":1}"#,
    #"{"a":"\u00e9","b":"\/"}"#,
    // An escape (shorter decoded) and whitespace (longer written) in one document.
    #"{"a":"\n" ,"b":1}"#,
    // A blob: the skim stops at its key, the scanner names it.
    #"{"p":{"x":[{"@type":"blob","digest":"sha1-AAAA","length":3,"content_type":"text/plain"}]}}"#,
    // A blob whose key is escaped: yajl decodes it, the skim sees `@type` all the same.
    #"{"p":{"\u0040type":"blob","digest":"sha1-BBBB","length":4}}"#,
    #"{"_attachments":{"$.p":{"digest":"sha1-BBBB","length":4,"stub":true}},"p":{"@type":"blob","digest":"sha1-BBBB","length":4}}"#,
    #"{"q":1,"_attachments":{"old.txt":{"digest":"md5-x","length":1,"stub":true}}}"#,
    #"{"deep":{"_attachments":1}}"#,
  ]

  /// Inputs that are not all well-formed, or not all documents.
  private static let hostile = [
    "{\"a\":1,\u{0C}\"b\":2}",
    "{\"a\":1,\u{0B}\"b\":2}",
    #"{"a":1,}"#,
    #"{"a":tru}"#,
    #"{"a":1}}"#,
    #"{"a":1}{"b":2} {"c":3}"#,
    #"[1,{"a":2}]"#,
    #"{"a":"\#u{FFFD}"}"#,
    "{\"a\":[1,\n2]}",
  ]

  private static let modes: [ConversionOptions] = [
    options(.push), options(.pull), options(.push, keepGoing: true),
    options(.pull, keepGoing: true),
  ]

  private static let capacities: [EngineCapacities] = [.standard, .tiny]

  private func compare(_ text: String, chunks: [Int]) {
    let input = Array(text.utf8)
    for options in Self.modes {
      for capacities in Self.capacities {
        for chunk in chunks {
          let skimmed = run(input, options, chunk: chunk, capacities: capacities, skims: true)
          let scanned = run(input, options, chunk: chunk, capacities: capacities, skims: false)
          #expect(
            skimmed.run == scanned.run,
            "\(options.mode) keepGoing \(options.keepGoing) chunk \(chunk) \(capacities): \(text)")
          #expect(scanned.counts.skimmed == 0 && scanned.counts.rescanned == 0)
        }
      }
    }
  }

  @Test("plain lines are skimmed, and come out as they went in")
  func plainLinesAreSkimmed() {
    let input = Array((Self.plain.joined(separator: "\n") + "\n").utf8)
    for mode in [ConversionMode.push, .pull] {
      let (result, counts) = run(
        input, Self.options(mode), chunk: input.count, capacities: .standard, skims: true)
      #expect(result.output == input && result.diagnostics.isEmpty && result.rejects.isEmpty)
      #expect(counts.skimmed == Self.plain.count && counts.rescanned == 0, "\(counts)")
      #expect(result.statistics.documents == Self.plain.count, "\(result.statistics)")
    }
  }

  @Test("every line that is not plain misses and is parsed again, giving what the scanner gives")
  func missesAreRescanned() {
    for line in Self.missed {
      // After a plain line, so that the skim is tried on the line that misses.
      let text = Self.plain[0] + "\n" + line + "\n" + Self.plain[1] + "\n"
      let (_, counts) = run(
        Array(text.utf8), Self.options(.push), chunk: text.utf8.count, capacities: .standard,
        skims: true)
      #expect(counts.rescanned == 1, "\(line): \(counts)")
      compare(text, chunks: [1, 5, 64, 1 << 20])
    }
  }

  @Test("errors, form feeds and odd framing inside a skim are reported as the scanner reports them")
  func hostileInput() {
    for line in Self.hostile {
      compare(Self.plain[0] + "\n" + line + "\n" + Self.plain[1] + "\n", chunks: [1, 7, 1 << 20])
      // At the very end of the input, without a newline.
      compare(Self.plain[1] + "\n" + line, chunks: [3, 1 << 20])
    }
    // Cut short inside a skimmed document.
    compare(Self.plain[0] + "\n" + #"{"a":[1,{"b":"#, chunks: [1, 1 << 20])
  }

  @Test("invalid UTF-8 inside a skimmed document is found once, where the scanner finds it")
  func invalidUTF8() {
    var input = Array((Self.plain[0] + "\n" + #"{"a":"x"#).utf8)
    input += [0xC3, 0x28]
    input += Array(#"y"}"#.utf8) + [0x0A] + Array((Self.plain[1] + "\n").utf8)
    for options in Self.modes {
      for chunk in [1, 4, 1 << 20] {
        let skimmed = run(input, options, chunk: chunk, capacities: .standard, skims: true)
        let scanned = run(input, options, chunk: chunk, capacities: .standard, skims: false)
        #expect(skimmed.run == scanned.run && !scanned.run.diagnostics.isEmpty)
      }
    }
  }

  @Test("after misses the skim rests, then takes plain documents again; the output never changes")
  func restsAfterMisses() {
    // 300 documents with whitespace, then 3,000 plain ones: a few parses again, not 300 (eight:
    // the rests after them are 2 + 4 + ... + 256 documents), and the plain ones skimmed once the
    // last rest, 256 documents, is over.
    let spaced = Array(repeating: #"{"a": [1, 2], "b": "c"}"#, count: 300)
    let plainRun = (0..<3000).map { #"{"n":\#($0),"s":"x"}"# }
    let text = (spaced + plainRun).joined(separator: "\n") + "\n"
    let input = Array(text.utf8)
    let (result, counts) = run(
      input, Self.options(.push), chunk: input.count, capacities: .standard, skims: true)
    #expect(counts.rescanned <= 12, "\(counts)")
    #expect(counts.skimmed >= 3000 - 256, "\(counts)")
    let scanned = run(
      input, Self.options(.push), chunk: input.count, capacities: .standard, skims: false)
    #expect(result == scanned.run)
    compare(text, chunks: [4096])
  }

  @Test("a document longer than the pieces yajl is given is parsed again, whole")
  func documentAcrossPieces() {
    let long = "{\"k\":[" + (0..<20000).map { "\"v\($0)\"" }.joined(separator: ",") + "]}"
    compare(Self.plain[0] + "\n" + long + "\n" + Self.plain[1] + "\n", chunks: [1000, 1 << 20])
  }

  @Test(
    "a skim gives up after DocumentSkim.longest bytes: a miss at a long document's end costs no more"
  )
  func longDocumentIsNotSkimmedWhole() {
    // Plain, then a blob after more than `longest` bytes, then plain: in one piece, each long
    // document is skimmed only up to the limit, so the second is never skimmed at all (resting).
    let values = (0..<DocumentSkim.longest).map { "\($0 % 10)" }.joined(separator: ",")
    let blob = #","p":{"@type":"blob","digest":"sha1-AAAA","length":3}"#
    let longPlain = #"{"n":["# + values + "]}"
    let longBlob = #"{"n":["# + values + "]" + blob + "}"
    for line in [longPlain, longBlob] {
      let text = Self.plain[0] + "\n" + line + "\n" + Self.plain[1] + "\n"
      let input = Array(text.utf8)
      let (result, counts) = run(
        input, Self.options(.push), chunk: input.count, capacities: .standard, skims: true)
      #expect(counts.skimmed == 1 && counts.rescanned == 1, "\(counts)")
      let scanned = run(
        input, Self.options(.push), chunk: input.count, capacities: .standard, skims: false)
      #expect(result == scanned.run)
    }
  }

  @Test("where a quarter of the documents would miss, skims soon become rare")
  func frequentMissesMakeSkimsRare() {
    // One document in four has a blob at its end: a miss there costs the document parsed twice,
    // more than three skims save, so the count of misses must outgrow what skims forgive.
    var generator = SplitMix64(seed: 3)
    let lines = (0..<4000).map { index in
      let blob = generator.next() % 4 == 0
      return #"{"_id":"d\#(index)","tags":["a","b"],"n":\#(index)"#
        + (blob ? #","p":{"@type":"blob","digest":"sha1-AAAA","length":3}}"# : "}")
    }
    let input = Array((lines.joined(separator: "\n") + "\n").utf8)
    let (result, counts) = run(
      input, Self.options(.push), chunk: input.count, capacities: .standard, skims: true)
    #expect(counts.rescanned <= 40, "\(counts)")
    let scanned = run(
      input, Self.options(.push), chunk: input.count, capacities: .standard, skims: false)
    #expect(result == scanned.run)
  }

  @Test("where one document in twenty would miss, most plain ones are still skimmed")
  func rareMissesKeepSkimming() {
    let lines = (0..<4000).map { index in
      #"{"_id":"d\#(index)","n":\#(index)"#
        + (index % 20 == 7 ? #","p":{"@type":"blob","digest":"sha1-AAAA","length":3}}"# : "}")
    }
    let input = Array((lines.joined(separator: "\n") + "\n").utf8)
    let (result, counts) = run(
      input, Self.options(.push), chunk: input.count, capacities: .standard, skims: true)
    #expect(counts.skimmed >= 4000 * 19 / 20 * 8 / 10, "\(counts)")
    let scanned = run(
      input, Self.options(.push), chunk: input.count, capacities: .standard, skims: false)
    #expect(result == scanned.run)
  }
}

#endif
