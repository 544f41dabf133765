import LegacyAttachments
import TestSupport
import Testing

/// The reusable per-document API: one `DocumentConverter` for thousands of documents gives what a
/// fresh conversion of each gives (bytes, warnings, errors with their places), and what the
/// stream API gives for them all.
@Suite struct DocumentConverterTests {
  typealias Outcome = Result<ConvertedDocument, DocumentError>

  static func fresh(_ document: [UInt8], _ options: ConversionOptions) -> Outcome {
    Result { () throws(DocumentError) in try CBLAttachments.convert(document, options: options) }
  }

  static let operations: [ConversionOptions] = [
    ConversionOptions(mode: .push),
    ConversionOptions(mode: .push, naming: .litecore, revpos: 3),
    ConversionOptions(mode: .pull),
    ConversionOptions(mode: .upgrade),
    ConversionOptions(mode: .pull, updateBlobs: true),
    ConversionOptions(mode: .list),
    ConversionOptions(mode: .push, strict: true),
  ]

  @Test(
    "one converter, thousands of documents (good, bad, pretty-printed): each as a fresh conversion")
  func reuseEqualsFreshConversions() throws {
    var generator = DocumentGenerator(seed: 0xD0C0)
    var documents: [[UInt8]] = []
    for index in 0..<3_000 {
      let tree = generator.documentTree()
      switch index % 10 {
      case 7: documents.append(generator.corrupt(tree.serialized()))
      case 8: documents.append(tree.serialized { [0x0A, 0x20] })
      default: documents.append(tree.serialized())
      }
    }
    documents += [[], Array("  \n ".utf8), Array("{} {}".utf8), Array("{\"a\":".utf8)]
    documents += [
      [0xEF, 0xBB, 0xBF] + Array("{\"a\":{\"@type\":\"blob\",\"digest\":\"sha1-x\"}}".utf8)
    ]
    for options in Self.operations {
      let converter = try DocumentConverter(options: options)
      var mismatches: [String] = []
      var rejected = 0
      for document in documents {
        let reused = Result { () throws(DocumentError) in try converter.convert(document) }
        if case .failure = reused { rejected += 1 }
        let expected = Self.fresh(document, options)
        if reused != expected {
          mismatches.append(
            "\(String(decoding: document, as: UTF8.self))\n  reused: \(reused)\n  fresh:  \(expected)"
          )
        }
      }
      #expect(
        mismatches.isEmpty,
        "\(options.mode): \(mismatches.count) differ; first: \(mismatches.first ?? "")")
      #expect(rejected > 100, "bad documents were seen")
    }
  }

  @Test("a converter's documents, joined, are what the stream API makes of them")
  func reuseEqualsTheStream() throws {
    var generator = DocumentGenerator(seed: 0x57E4)
    let documents = (0..<2_000).map { _ in generator.document() }
    for options in Self.operations.prefix(5) {
      let converter = try DocumentConverter(options: options)
      var output: [UInt8] = []
      var warnings = 0
      var rejected: [UInt8] = []
      for document in documents {
        do {
          let converted = try converter.convert(document)
          output += converted.bytes + [0x0A]
          warnings += converted.warnings.count
        } catch {
          rejected += document + [0x0A]
        }
      }
      var streamOptions = options
      streamOptions.keepGoing = true
      let stream = CBLAttachments.convertStream(
        Array(documents.joined(separator: [0x0A])), options: streamOptions)
      let sameOutput = stream.output == output
      let sameRejects = stream.rejects == rejected
      #expect(
        sameOutput && sameRejects, "\(options.mode): output \(sameOutput), rejects \(sameRejects)")
      #expect(stream.diagnostics.filter { $0.severity == .warning }.count == warnings)
    }
  }

  @Test("not exactly one document is its own error kind; a cut document is malformed JSON")
  func notOneDocument() throws {
    let converter = try DocumentConverter(options: ConversionOptions(mode: .push))
    for (text, kind, message) in [
      ("", ConversionDiagnostic.Kind.notOneDocument, "no document"),
      ("  \n\t", .notOneDocument, "no document"),
      ("{} {}", .notOneDocument, "more than one document"),
      ("{\"a\":[1,", .malformedJSON, nil),
    ] as [(String, ConversionDiagnostic.Kind, String?)] {
      #expect(throws: DocumentError.self) { try converter.convert(Array(text.utf8)) }
      do {
        _ = try converter.convert(Array(text.utf8))
      } catch {
        #expect(error.diagnostic.kind == kind, "\(text): \(error)")
        if let message { #expect(error.diagnostic.message.contains(message), "\(error)") }
        #expect(error.diagnostic.severity == .error)
      }
      // The converter goes on after an error.
      let next = try converter.convert(Array("{\"x\":1}".utf8))
      #expect(next.bytes == Array("{\"x\":1}".utf8) && next.warnings.isEmpty)
    }
  }

  @Test("warnings are returned with their place in the document; strict throws them")
  func warnings() throws {
    let document = Array("{\n  \"a\": 1,\n  \"b\": {\"@type\": \"blob\"}\n}".utf8)
    let converter = try DocumentConverter(options: ConversionOptions(mode: .push))
    for _ in 0..<3 {
      let converted = try converter.convert(document)
      #expect(converted.bytes == Array("{\"a\":1,\"b\":{\"@type\":\"blob\"}}".utf8))
      #expect(converted.warnings.map(\.kind) == [.blobWithoutDigest])
      #expect(converted.warnings.map(\.line) == [3], "line 3 of the document, every time")
    }
    let strict = try DocumentConverter(options: ConversionOptions(mode: .push, strict: true))
    #expect(throws: DocumentError.self) { try strict.convert(document) }
  }

  @Test("push, pull and convert refuse what the command line refuses, as invalid-options")
  func conveniencesValidate() {
    let document = Array("{\"a\":{\"@type\":\"blob\",\"digest\":\"sha1-x\"}}".utf8)
    for revpos in [0, -5] {
      do {
        _ = try CBLAttachments.push(document, naming: .litecore, revpos: revpos)
        Issue.record("revpos \(revpos) was taken")
      } catch {
        #expect(error.diagnostic.kind == .invalidOptions, "\(error)")
        #expect(error.diagnostic.message.contains("revpos"))
      }
    }
    #expect(throws: DocumentError.self) {
      try CBLAttachments.convert(
        document, options: ConversionOptions(mode: .pull, naming: .litecore))
    }
    #expect(throws: DocumentError.self) {
      try CBLAttachments.convert(
        document, options: ConversionOptions(mode: .push, updateBlobs: true))
    }
    #expect((try? CBLAttachments.push(document, naming: .litecore, revpos: 1)) != nil)
  }

  @Test(
    "options the command line refuses are refused",
    arguments: [
      ConversionOptions(mode: .push, revpos: 0),
      ConversionOptions(mode: .push, revpos: -5),
      ConversionOptions(mode: .pull, revpos: 2),
      ConversionOptions(mode: .pull, naming: .litecore),
      ConversionOptions(mode: .push, updateBlobs: true),
      ConversionOptions(mode: .upgrade, upgradeInto: ""),
      ConversionOptions(mode: .upgrade, upgradeInto: "_attachments"),
      ConversionOptions(mode: .push, framing: .list),
      ConversionOptions(mode: .push, keepGoing: true),
      // As `--revpos` without `--naming litecore`, `--missing-blobs` without `--push`, and
      // `--into` without `--upgrade`.
      ConversionOptions(mode: .push, revpos: 2),
      ConversionOptions(mode: .pull, blobs: BlobStoreOptions(path: "store", missing: .stub)),
      ConversionOptions(mode: .push, upgradeInto: "zz"),
    ])
  func refusedOptions(options: ConversionOptions) {
    #expect(throws: InvalidOptions.self) { try DocumentConverter(options: options) }
  }

  @Test(
    "streams: validate() refuses what the command line refuses, and convertStream converts nothing then",
    arguments: [
      ConversionOptions(mode: .push, revpos: 2),
      ConversionOptions(mode: .upgrade, upgradeInto: "_x"),
      ConversionOptions(mode: .upgrade, upgradeInto: ""),
      ConversionOptions(mode: .push, bulkDocs: BulkDocsOutput(documentsPerBody: 0)),
      ConversionOptions(mode: .push, bulkDocs: BulkDocsOutput(documentsPerBody: 1_000_001)),
      ConversionOptions(mode: .list, bulkDocs: BulkDocsOutput(documentsPerBody: 2)),
      ConversionOptions(mode: .pull, revpos: 5),
    ])
  func refusedStreamOptions(options: ConversionOptions) {
    #expect(throws: InvalidOptions.self) { try options.validate() }
    let input = Array(
      #"{"_attachments":{"r":{"digest":"sha1-zzwO1th/ii6WOlvXErRB9mKo/KI=","stub":true}}}"#.utf8
        + [0x0A])
    let result = CBLAttachments.convertStream(input, options: options)
    #expect(result.output.isEmpty)
    #expect(result.diagnostics.map(\.kind) == [.invalidOptions])
  }

  @Test("streams: the options the command line takes pass validate()")
  func acceptedStreamOptions() throws {
    try ConversionOptions(mode: .push, naming: .litecore, revpos: 2).validate()
    try ConversionOptions(mode: .upgrade, upgradeInto: "files", keepGoing: true).validate()
    try ConversionOptions(
      mode: .pull, framing: .list, bulkDocs: BulkDocsOutput(documentsPerBody: 1_000_000)
    ).validate()
    try ConversionOptions(mode: .push, blobs: BlobStoreOptions(path: "store", missing: .stub))
      .validate()
  }
}
