@_spi(Testing) import LegacyAttachments
import TestSupport
import Testing

/// The streaming engine against the tree-walking reference model (Model/ReferenceModel.swift),
/// on generated documents: same bytes, same warnings, same rejections.
@Suite struct DifferentialTests {
  /// Generated documents per batch, and batches (run in parallel).
  static let batchSize = 1_250
  static let batches = 8

  /// What happened to one document, in a form both sides can produce.
  enum Outcome: Equatable, CustomStringConvertible {
    case converted([UInt8], warnings: Int)
    case rejected(ConversionDiagnostic.Kind)

    var description: String {
      switch self {
      case .converted(let bytes, let warnings):
        "converted (\(warnings) warnings): \(String(decoding: bytes, as: UTF8.self))"
      case .rejected(let kind): "rejected: \(kind.rawValue)"
      }
    }
  }

  /// One way of converting a document.
  enum Operation: CustomStringConvertible, CaseIterable {
    case pushJSONPath
    case pushLitecore
    case pushLitecoreRevpos
    case pull
    case upgrade
    case pullUpdateBlobs

    /// The operations with a convenience function of their own (`push`, `pull`).
    static let withConvenience: [Operation] = [
      .pushJSONPath, .pushLitecore, .pushLitecoreRevpos, .pull,
    ]

    var description: String {
      switch self {
      case .pushJSONPath: "push --naming jsonpath"
      case .pushLitecore: "push --naming litecore"
      case .pushLitecoreRevpos: "push --naming litecore --revpos \(Self.explicitRevpos)"
      case .pull: "pull"
      case .upgrade: "upgrade"
      case .pullUpdateBlobs: "pull --update-blobs"
      }
    }

    static let explicitRevpos = 42

    var options: ConversionOptions {
      switch self {
      case .pushJSONPath: ConversionOptions(mode: .push, naming: .jsonpath)
      case .pushLitecore: ConversionOptions(mode: .push, naming: .litecore)
      case .pushLitecoreRevpos:
        ConversionOptions(mode: .push, naming: .litecore, revpos: Self.explicitRevpos)
      case .pull: ConversionOptions(mode: .pull)
      case .upgrade: ConversionOptions(mode: .upgrade)
      case .pullUpdateBlobs: ConversionOptions(mode: .pull, updateBlobs: true)
      }
    }

    func model(_ document: ReferenceModel.Document, strict: Bool = false) -> Outcome {
      do {
        let output: ModelOutput
        switch self {
        case .pushJSONPath: output = try document.push(naming: .jsonpath, strict: strict)
        case .pushLitecore: output = try document.push(naming: .litecore, strict: strict)
        case .pushLitecoreRevpos:
          output = try document.push(naming: .litecore, revpos: Self.explicitRevpos, strict: strict)
        case .pull: output = try document.pull(strict: strict)
        case .upgrade: output = try document.upgrade(strict: strict)
        case .pullUpdateBlobs: output = try document.pullUpdatingBlobs(strict: strict)
        }
        return .converted(output.bytes, warnings: output.warnings)
      } catch {
        return .rejected(error.kind)
      }
    }

    /// The engine through `CBLAttachments.convert`.
    func engine(_ document: [UInt8], strict: Bool = false) -> Outcome {
      var options = self.options
      options.strict = strict
      do {
        let converted = try CBLAttachments.convert(document, options: options)
        return .converted(converted.bytes, warnings: converted.warnings.count)
      } catch {
        return .rejected(error.diagnostic.kind)
      }
    }

    /// The engine through the `push`/`pull` convenience functions (no warnings there).
    func engineConvenience(_ document: [UInt8]) -> Outcome {
      do {
        switch self {
        case .pushJSONPath: return .converted(try CBLAttachments.push(document), warnings: 0)
        case .pushLitecore:
          return .converted(try CBLAttachments.push(document, naming: .litecore), warnings: 0)
        case .pushLitecoreRevpos:
          return .converted(
            try CBLAttachments.push(document, naming: .litecore, revpos: Self.explicitRevpos),
            warnings: 0)
        case .pull: return .converted(try CBLAttachments.pull(document), warnings: 0)
        case .upgrade, .pullUpdateBlobs: fatalError("\(self) has no convenience function")
        }
      } catch {
        return .rejected(error.diagnostic.kind)
      }
    }
  }

  /// A disagreement, kept for the failure message.
  struct Mismatch: CustomStringConvertible {
    var operation: Operation
    var input: [UInt8]
    var expected: Outcome
    var actual: Outcome

    var description: String {
      """
      \(operation) of \(String(decoding: input, as: UTF8.self))
        model:  \(expected)
        engine: \(actual)
      """
    }
  }

  static func corpus(batch: Int, options: DocumentGenerator.Options = .init()) -> [[UInt8]] {
    var generator = DocumentGenerator(
      seed: 0xC0FFEE &+ UInt64(batch) &* 0x1_0000_0001, options: options)
    return (0..<batchSize).map { _ in generator.document() }
  }

  /// Corpora shared by the parameterised stream tests (generated once).
  static let streamCorpus = corpus(batch: 400) + corpus(batch: 401)
  static let chunkCorpus = Array(corpus(batch: 500).prefix(400))
  static let listCorpus = corpus(batch: 600)

  /// A short form of an outcome, for large documents.
  static func summary(_ outcome: Outcome) -> String {
    switch outcome {
    case .converted(let bytes, let warnings): "\(bytes.count) bytes, \(warnings) warnings"
    case .rejected(let kind): "rejected: \(kind.rawValue)"
    }
  }

  static func report(_ mismatches: [Mismatch], of total: Int) -> Comment {
    let shortest = mismatches.sorted { $0.input.count < $1.input.count }.prefix(4)
    return Comment(
      rawValue: "\(mismatches.count) of \(total) conversions differ; shortest:\n"
        + shortest.map(\.description).joined(separator: "\n"))
  }

  // MARK: One document at a time

  @Test("convert equals the model, document by document", arguments: 0..<batches)
  func singleDocuments(batch: Int) {
    var mismatches: [Mismatch] = []
    var total = 0
    for document in Self.corpus(batch: batch) {
      let model = ReferenceModel.Document(document)
      for operation in Operation.allCases {
        let expected = operation.model(model)
        let actual = operation.engine(document)
        total += 1
        if expected != actual {
          mismatches.append(
            Mismatch(operation: operation, input: document, expected: expected, actual: actual))
        }
      }
    }
    #expect(mismatches.isEmpty, Self.report(mismatches, of: total))
  }

  @Test("push and pull convenience functions equal the model", arguments: 0..<1)
  func convenienceFunctions(batch: Int) {
    var mismatches: [Mismatch] = []
    var total = 0
    for document in Self.corpus(batch: 100 + batch) {
      let model = ReferenceModel.Document(document)
      for operation in Operation.withConvenience {
        var expected = operation.model(model)
        if case .converted(let bytes, _) = expected { expected = .converted(bytes, warnings: 0) }
        let actual = operation.engineConvenience(document)
        total += 1
        if expected != actual {
          mismatches.append(
            Mismatch(operation: operation, input: document, expected: expected, actual: actual))
        }
      }
    }
    #expect(mismatches.isEmpty, Self.report(mismatches, of: total))
  }

  @Test(
    "strict push rejects exactly the documents with a blob without a digest, strict pull those with an entry kept for its data"
  )
  func strictPush() {
    var mismatches: [Mismatch] = []
    var total = 0
    for document in Self.corpus(batch: 200) {
      let model = ReferenceModel.Document(document)
      for operation in [Operation.pushJSONPath, .pushLitecore, .pull, .upgrade, .pullUpdateBlobs] {
        let expected = operation.model(model, strict: true)
        let actual = operation.engine(document, strict: true)
        total += 1
        if expected != actual {
          mismatches.append(
            Mismatch(operation: operation, input: document, expected: expected, actual: actual))
        }
      }
    }
    #expect(mismatches.isEmpty, Self.report(mismatches, of: total))
  }

  @Test("insignificant whitespace in the input changes nothing in the output")
  func spacedInput() {
    var random = SplitMix64(seed: 77)
    let spaces: [[UInt8]] = [
      [], [], [], [0x20], [0x09], [0x0A], [0x0D, 0x0A], [0x20, 0x20, 0x20, 0x20],
    ]
    var generator = DocumentGenerator(seed: 300)
    var mismatches: [Mismatch] = []
    var total = 0
    for _ in 0..<Self.batchSize {
      let tree = generator.documentTree()
      let compact = tree.serialized()
      let spaced = tree.serialized { random.pick(spaces) }
      let model = ReferenceModel.Document(compact)
      for operation in Operation.allCases {
        let expected = operation.model(model)
        let actual = operation.engine(spaced)
        total += 1
        if expected != actual {
          mismatches.append(
            Mismatch(operation: operation, input: spaced, expected: expected, actual: actual))
        }
      }
    }
    #expect(mismatches.isEmpty, Self.report(mismatches, of: total))
  }

  @Test("malformed documents are rejected as malformed JSON, like the model says")
  func malformedDocuments() {
    var generator = DocumentGenerator(seed: 700)
    var mismatches: [Mismatch] = []
    var total = 0
    var malformed = 0
    for _ in 0..<Self.batchSize {
      let document = generator.corrupt(generator.document())
      let model = ReferenceModel.Document(document)
      if case .failure(.malformedJSON) = model.members { malformed += 1 }
      for operation in [Operation.pushJSONPath, .pull] {
        let expected = operation.model(model)
        let actual = operation.engine(document)
        total += 1
        if case .failure(.moreThanOneValue) = model.members {
          // Not one document: it must be rejected, for whichever of its problems comes first.
          if case .rejected = actual { continue }
        }
        if expected != actual {
          mismatches.append(
            Mismatch(operation: operation, input: document, expected: expected, actual: actual))
        }
      }
    }
    #expect(mismatches.isEmpty, Self.report(mismatches, of: total))
    #expect(malformed > Self.batchSize / 2, "most corruptions are malformed JSON")
  }

  @Test("documents larger than an input chunk")
  func largeDocuments() {
    var generator = DocumentGenerator(seed: 800)
    let documents = (0..<12).map { _ in generator.largeDocument().serialized() }
    #expect(documents.allSatisfy { $0.count > 65_536 })
    for operation in Operation.allCases {
      var expectedStream: [UInt8] = []
      for document in documents {
        let expected = operation.model(ReferenceModel.Document(document))
        let actual = operation.engine(document)
        let same = expected == actual
        #expect(
          same,
          "\(operation) of a document of \(document.count) bytes: \(Self.summary(actual)) vs \(Self.summary(expected))"
        )
        if case .converted(let bytes, _) = expected { expectedStream += bytes + [0x0A] }
      }
      var options = operation.options
      options.keepGoing = true
      let result = CBLAttachments.convertStream(
        Array(documents.joined(separator: [0x0A])), options: options)
      let same = result.output == expectedStream
      #expect(
        same,
        "\(operation): stream of large documents: \(difference(result.output, expectedStream))")
    }
  }

  // MARK: Streams

  /// What `convertStream` should give for `documents`, one per line, with keep-going.
  struct ExpectedStream {
    var output: [UInt8] = []
    var rejects: [UInt8] = []
    var errorLines: [Int] = []
    var errorKinds: [ConversionDiagnostic.Kind] = []
    var warningLines: [Int] = []
    var accepted: [[UInt8]] = []
  }

  static func expectedStream(_ documents: [[UInt8]], _ operation: Operation) -> ExpectedStream {
    var expected = ExpectedStream()
    for (index, document) in documents.enumerated() {
      switch operation.model(ReferenceModel.Document(document)) {
      case .converted(let bytes, let warnings):
        expected.output += bytes + [0x0A]
        expected.accepted.append(bytes)
        expected.warningLines += Array(repeating: index + 1, count: warnings)
      case .rejected(let kind):
        expected.rejects += document + [0x0A]
        expected.errorLines.append(index + 1)
        expected.errorKinds.append(kind)
      }
    }
    return expected
  }

  @Test("convertStream on concatenated NDJSON equals the model", arguments: Operation.allCases)
  func ndjsonStream(operation: Operation) {
    let documents = Self.streamCorpus
    let input = Array(documents.joined(separator: [0x0A]))
    var options = operation.options
    options.keepGoing = true
    let result = CBLAttachments.convertStream(input, options: options)
    let expected = Self.expectedStream(documents, operation)

    #expect(result.outcome == .completed)
    #expect(result.statistics.documents == documents.count)
    // Large arrays are compared outside `#expect`, whose failure report would diff them.
    let sameOutput = result.output == expected.output
    #expect(sameOutput, "\(operation): output: \(difference(result.output, expected.output))")
    let sameRejects = result.rejects == expected.rejects
    #expect(sameRejects, "\(operation): rejects: \(difference(result.rejects, expected.rejects))")
    // A rejected document may raise more than one error; the first one is the reason.
    let errors = firstErrorPerLine(result.diagnostics)
    let sameErrorLines = errors.map(\.line) == expected.errorLines
    #expect(sameErrorLines, "error lines: \(difference(errors.map(\.line), expected.errorLines))")
    let sameErrorKinds = errors.map(\.kind) == expected.errorKinds
    #expect(sameErrorKinds, "error kinds: \(difference(errors.map(\.kind), expected.errorKinds))")
    let rejected = Set(expected.errorLines)
    let warnings = result.diagnostics.filter {
      $0.severity == .warning && !rejected.contains($0.line)
    }
    let sameWarnings = warnings.map(\.line) == expected.warningLines
    #expect(
      sameWarnings, "warning lines: \(difference(warnings.map(\.line), expected.warningLines))")
    let warningKinds: Set<ConversionDiagnostic.Kind> =
      switch operation {
      case .upgrade: [.upgradeKept, .unverified]
      case .pullUpdateBlobs: [.dataKept, .blobNotUpdated, .entryKept]
      default: [.blobWithoutDigest, .dataKept, .dataDropped, .entryKept]
      }
    #expect(warnings.allSatisfy { warningKinds.contains($0.kind) })
    #expect(
      expected.accepted.count > 0 && expected.errorLines.count > 0, "the corpus has both kinds")
  }

  @Test("convertStream gives the same result for any chunk size", arguments: [1, 2, 7, 61, 4096])
  func chunkSizes(chunkSize: Int) {
    let documents = Array(Self.chunkCorpus.prefix(chunkSize < 8 ? 150 : 400))
    let input = Array(documents.joined(separator: [0x0A]))
    for operation in [Operation.pushJSONPath, .pushLitecore, .pull] {
      var options = operation.options
      options.keepGoing = true
      let result = CBLAttachments.convertStream(input, options: options, chunkSize: chunkSize)
      let expected = Self.expectedStream(documents, operation)
      let sameOutput = result.output == expected.output
      #expect(
        sameOutput,
        "\(operation), chunk \(chunkSize): \(difference(result.output, expected.output))")
      let sameRejects = result.rejects == expected.rejects
      #expect(
        sameRejects,
        "\(operation), chunk \(chunkSize): rejects: \(difference(result.rejects, expected.rejects))"
      )
      let errorLines = firstErrorPerLine(result.diagnostics).map(\.line)
      let sameErrorLines = errorLines == expected.errorLines
      #expect(sameErrorLines, "error lines: \(difference(errorLines, expected.errorLines))")
    }
  }

  @Test("convertStream on pretty-printed documents, CRLF and blank lines, equals the model")
  func prettyStream() {
    var random = SplitMix64(seed: 901)
    var generator = DocumentGenerator(seed: 900)
    let spaces: [[UInt8]] = [[], [], [0x20], [0x0A], [0x0D, 0x0A], [0x0A, 0x20, 0x20], [0x09]]
    let separators: [[UInt8]] = [
      [0x0A], [0x0D, 0x0A], [0x0A, 0x0A], [0x20, 0x0A], [0x0A, 0x0D, 0x0A],
    ]
    var input: [UInt8] = [0xEF, 0xBB, 0xBF]  // a byte-order mark, to be skipped
    var documents: [[UInt8]] = []
    var spacedDocuments: [[UInt8]] = []
    for _ in 0..<600 {
      let tree = generator.documentTree()
      let spaced = tree.serialized { random.pick(spaces) }
      documents.append(tree.serialized())
      spacedDocuments.append(spaced)
      input += spaced + random.pick(separators)
    }
    for operation in [Operation.pushJSONPath, .pushLitecore, .pull] {
      var options = operation.options
      options.keepGoing = true
      let result = CBLAttachments.convertStream(input, options: options, chunkSize: 777)
      var output: [UInt8] = []
      var rejects: [UInt8] = []
      var rejected = 0
      for (document, spaced) in zip(documents, spacedDocuments) {
        switch operation.model(ReferenceModel.Document(document)) {
        case .converted(let bytes, _): output += bytes + [0x0A]
        case .rejected:
          rejects += spaced + [0x0A]
          rejected += 1
        }
      }
      let sameOutput = result.output == output
      #expect(sameOutput, "\(operation): output: \(difference(result.output, output))")
      let sameRejects = result.rejects == rejects
      #expect(
        sameRejects,
        "\(operation): rejected documents' text: \(difference(result.rejects, rejects))")
      #expect(
        Set(result.diagnostics.filter { $0.severity == .error }.map(\.line)).count == rejected)
      #expect(result.statistics.documents == documents.count)
    }
  }

  @Test(
    "convertStream in list framing equals the model",
    arguments: [Operation.pushJSONPath, .pushLitecore, .pull])
  func listStream(operation: Operation) {
    let documents = Self.listCorpus
    let input =
      Array("[".utf8) + Array(documents.joined(separator: Array(",\n".utf8))) + Array("]\n".utf8)
    var options = operation.options
    options.framing = .list
    options.keepGoing = true
    let result = CBLAttachments.convertStream(input, options: options, chunkSize: 1000)
    let expected = Self.expectedStream(documents, operation)
    var output = Array("[".utf8)
    for (index, document) in expected.accepted.enumerated() {
      output += Array((index == 0 ? "\n" : ",\n").utf8) + document
    }
    output += Array("\n]\n".utf8)
    let sameOutput = result.output == output
    #expect(sameOutput, "\(operation): list output: \(difference(result.output, output))")
    let errors = firstErrorPerLine(result.diagnostics)
    let sameErrorKinds = errors.map(\.kind) == expected.errorKinds
    #expect(sameErrorKinds, "error kinds: \(difference(errors.map(\.kind), expected.errorKinds))")
    let sameErrorLines = errors.map(\.line) == expected.errorLines
    #expect(sameErrorLines, "error lines: \(difference(errors.map(\.line), expected.errorLines))")
  }

  // MARK: The corpus and the model are worth comparing

  @Test("the generated corpus exercises every rule")
  func corpusCoverage() throws {
    var counts: [String: Int] = [:]
    func count(_ feature: String, _ present: Bool) {
      if present { counts[feature, default: 0] += 1 }
    }
    for document in Self.corpus(batch: 0) {
      let text = String(decoding: document, as: UTF8.self)
      count("escaped @type key", text.contains(#""\u0040type""#) || text.contains(#""\u0040"#))
      count("big number", text.contains("12345678901234567890123") || text.contains("1e400"))
      count("surrogate pair escape", text.contains(#"\ud83d"#) || text.contains(#"\uD83D"#))
      count("escaped slash", text.contains(#"\/"#))
      guard let tree = try? RawJSON.parse(document), let members = tree.members else {
        count("not an object", true)
        continue
      }
      let blobs = ReferenceModel.blobReferences(in: members)
      count("blob", !blobs.isEmpty)
      count("blob without digest", blobs.contains { $0.digest == nil })
      count(
        "blob inside a blob",
        blobs.contains { $0.members.contains { ReferenceModel.isBlob($0.value) } })
      count("blob @type not first", blobs.contains { !$0.members[0].key.equals("@type") })
      count(
        "blob in an array",
        blobs.contains { $0.path.contains { if case .index = $0 { true } else { false } } })
      count("deep blob", blobs.contains { $0.path.count >= 4 })
      count("very deep blob", blobs.contains { $0.path.count >= 30 })
      let attachments = members.filter { $0.key.equals("_attachments") }
      count("duplicate _attachments", attachments.count > 1)
      count("non-object _attachments", attachments.contains { !$0.value.isObject })
      let pushed = try? ReferenceModel.push(document)
      let pulled = try? ReferenceModel.pull(document)
      count("push changes the document", pushed.map { $0.bytes != document } ?? false)
      count("pull changes the document", pulled.map { $0.bytes != document } ?? false)
      count(
        "pull removes _attachments",
        pulled.map {
          !String(decoding: $0.bytes, as: UTF8.self).contains("_attachments")
            && text.contains("_attachments")
        } ?? false)
      count(
        "push replaces earlier entries",
        attachments.count == 1
          && (attachments[0].value.members ?? []).contains {
            ReferenceModel.isSynthesizedName($0.key.value)
          })
      count("pull keeps an entry for its data", (pulled?.warnings ?? 0) > 0)
      count(
        "pull rejects non-string data",
        {
          if case .failure(.invalidData) = Result(catching: { () throws(ModelRejection) in
            try ReferenceModel.pull(document)
          }) {
            true
          } else {
            false
          }
        }())
      count(
        "pull removes an entry whose blob has its data",
        blobs.contains { $0.data != nil } && pulled.map { $0.bytes != document } ?? false)
      count("_rev", members.contains { $0.key.equals("_rev") })
      count("more than 32 blobs", blobs.count > 32)
      count(
        "lone surrogate escape",
        text.lowercased().contains(#"\ud800"#) || text.lowercased().contains(#"\udc00"#))
    }
    let features = [
      "escaped @type key", "big number", "surrogate pair escape", "escaped slash", "not an object",
      "blob", "blob without digest", "blob inside a blob", "blob @type not first",
      "blob in an array",
      "deep blob", "very deep blob", "duplicate _attachments", "non-object _attachments",
      "push changes the document",
      "pull changes the document", "pull removes _attachments", "push replaces earlier entries",
      "_rev",
      "more than 32 blobs", "lone surrogate escape", "pull keeps an entry for its data",
      "pull rejects non-string data", "pull removes an entry whose blob has its data",
    ]
    for feature in features {
      #expect(
        counts[feature, default: 0] >= 5,
        "only \(counts[feature, default: 0]) documents with \(feature)")
    }
  }

  @Test("the generator is deterministic")
  func deterministic() {
    func documents(_ seed: UInt64) -> [[UInt8]] {
      var generator = DocumentGenerator(seed: seed)
      return (0..<200).map { _ in generator.document() }
    }
    let same = documents(3) == documents(3)
    let different = documents(3) != documents(4)
    #expect(same && different)
  }

  @Test("the raw JSON parser keeps every token as written")
  func rawJSONRoundTrip() throws {
    let text =
      #"{"a":1.50,"b":1e400,"c":"\u00e9\/\n","\u0040type":[12345678901234567890123,-0.0,true,null],"a":{}}"#
    let tree = try RawJSON.parse(Array(text.utf8))
    #expect(tree.serialized() == Array(text.utf8))
    #expect(tree.members?[3].key.equals("@type") == true)
    #expect(tree.members?[2].value.string?.equals("é/\n") == true)
    let spaced = try RawJSON.parse(Array(" {\n\"x\" : [ 1 , \"\\ud83d\\ude00\" ] }\r\n".utf8))
    #expect(spaced.serialized() == Array(#"{"x":[1,"\ud83d\ude00"]}"#.utf8))
    #expect(
      spaced.members?[0].value
        == .array([.scalar([0x31]), .string(RawString(token: Array(#""\ud83d\ude00""#.utf8)))]))
    #expect(RawString(token: Array(#""\ud83d\ude00""#.utf8)).equals("😀"))
    #expect(throws: RawJSONError.self) { try RawJSON.parse(Array(#"{"a":01}"#.utf8)) }
    #expect(throws: RawJSONError.self) { try RawJSON.parse(Array("{\"a\":\"\u{1}\"}".utf8)) }
    #expect(throws: RawJSONError.self) { try RawJSON.parse(Array(#"{"a":1} 2"#.utf8)) }
  }

  @Test("the model follows the SPEC's own examples")
  func modelSpecExamples() throws {
    func push(_ text: String, _ naming: EntryNaming = .jsonpath, revpos: Int? = nil) throws
      -> String
    {
      String(
        decoding: try ReferenceModel.push(Array(text.utf8), naming: naming, revpos: revpos).bytes,
        as: UTF8.self)
    }
    func pull(_ text: String) throws -> String {
      String(decoding: try ReferenceModel.pull(Array(text.utf8)).bytes, as: UTF8.self)
    }
    let doc =
      #"{"photos":{"thumbnail":{"@type":"blob","digest":"d1"},"gallery":[1,2,{"digest":"d2","@type":"blob"}]},"a.b":{"@type":"blob","digest":"d3"}}"#
    #expect(
      try push(doc)
        == String(doc.dropLast())
        + #","_attachments":{"$.photos.thumbnail":{"digest":"d1"},"$.photos.gallery[2]":{"digest":"d2"},"$.a\\.b":{"digest":"d3"}}}"#
    )
    #expect(
      try push(
        #"{"_rev":"3-abc","p":{"x/y~":[{"@type":"blob","stub":false,"digest":"d"}]}}"#, .litecore)
        == #"{"_rev":"3-abc","p":{"x/y~":[{"@type":"blob","stub":false,"digest":"d"}]},"_attachments":{"blob_/p/x~1y~0/0":{"digest":"d","stub":true,"revpos":3}}}"#
    )
    #expect(
      try push(
        #"{"_attachments":{"$.old":{},"photo.jpg":{"digest":"p"}},"b":{"@type":"blob","digest":"d"}}"#
      )
        == #"{"_attachments":{"photo.jpg":{"digest":"p"},"$.b":{"digest":"d"}},"b":{"@type":"blob","digest":"d"}}"#
    )
    #expect(throws: ModelRejection.attachmentsNotObject) {
      try ReferenceModel.push(Array(#"{"_attachments":[],"b":{"@type":"blob"}}"#.utf8))
    }
    #expect(throws: ModelRejection.duplicateAttachments) {
      try ReferenceModel.pull(Array(#"{"_attachments":{},"\u005fattachments":{}}"#.utf8))
    }
    #expect(throws: ModelRejection.notAnObject) { try ReferenceModel.pull(Array("[]".utf8)) }
    #expect(
      try pull(#"{"a":{"@type":"blob","digest":"d"},"_attachments":{"x":{"digest":"d"}}}"#)
        == #"{"a":{"@type":"blob","digest":"d"}}"#)
    #expect(
      try pull(
        #"{"a":{"@type":"blob","digest":"d"},"_attachments":{"x":{"digest":"\u0064"},"y":{"digest":"e"},"z":"d"}}"#
      )
        == #"{"a":{"@type":"blob","digest":"d"},"_attachments":{"y":{"digest":"e"},"z":"d"}}"#)
    #expect(try pull(#"{"_attachments":{},"a":1}"#) == #"{"_attachments":{},"a":1}"#)
    // The root is never a blob reference; blobs inside `_attachments` are legacy attachments.
    #expect(
      try push(#"{"@type":"blob","digest":"r","_attachments":{"k":{"@type":"blob","digest":"q"}}}"#)
        == #"{"@type":"blob","digest":"r","_attachments":{"k":{"@type":"blob","digest":"q"}}}"#)
    #expect(
      try push(#"{"k\n\"":{"@type":"blob","digest":"d"}}"#)
        == #"{"k\n\"":{"@type":"blob","digest":"d"},"_attachments":{"$.k\n\"":{"digest":"d"}}}"#)
  }
}

/// The first error diagnostic of each line, in order (one document per line in these tests).
func firstErrorPerLine(_ diagnostics: [ConversionDiagnostic]) -> [ConversionDiagnostic] {
  var errors: [ConversionDiagnostic] = []
  for diagnostic in diagnostics where diagnostic.severity == .error {
    if errors.last?.line != diagnostic.line { errors.append(diagnostic) }
  }
  return errors
}

/// Where two outputs first differ: the 1-based line, and that line on each side (for failure
/// messages; cheap even for megabytes).
func difference(_ actual: [UInt8], _ expected: [UInt8]) -> String {
  guard actual != expected else { return "none" }
  let limit = min(actual.count, expected.count)
  var index = 0
  var line = 1
  var lineStart = 0
  while index < limit && actual[index] == expected[index] {
    if actual[index] == 0x0A {
      line += 1
      lineStart = index + 1
    }
    index += 1
  }
  func lineText(_ bytes: [UInt8]) -> String {
    let end = bytes[lineStart...].firstIndex(of: 0x0A) ?? bytes.count
    return String(decoding: bytes[lineStart..<min(end, lineStart + 400)], as: UTF8.self)
  }
  return
    "from line \(line) (\(actual.count) vs \(expected.count) bytes)\n  engine: \(lineText(actual))\n  model:  \(lineText(expected))"
}

/// Where two lists first differ (for failure messages).
func difference<T: Equatable>(_ actual: [T], _ expected: [T]) -> String {
  guard actual != expected else { return "none" }
  let index =
    (0..<min(actual.count, expected.count)).first { actual[$0] != expected[$0] }
    ?? min(actual.count, expected.count)
  func at(_ list: [T]) -> String { index < list.count ? "\(list[index])" : "(end)" }
  return
    "\(actual.count) vs \(expected.count) items; first difference at \(index): engine \(at(actual)), model \(at(expected))"
}
