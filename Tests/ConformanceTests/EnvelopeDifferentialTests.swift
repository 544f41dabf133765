@_spi(Testing) import LegacyAttachments
import TestSupport
import Testing

/// The engine against the reference model extended to envelopes (SPEC.md, "Envelopes"): the model
/// walks the parsed envelope along the path as a tree, converts each document with the
/// single-document model, and takes out the innermost array element of every rejected one.
@Suite struct EnvelopeDifferentialTests {
  /// The envelope kinds generated, with their paths.
  enum Kind: CaseIterable, CustomStringConvertible {
    case changes, allDocs, bulkDocs, bulkGet, continuousFeed, nested

    var path: DocumentPath {
      switch self {
      case .changes: .changes
      case .allDocs: .allDocs
      case .bulkDocs: .bulkDocs
      case .bulkGet: .bulkGet
      case .continuousFeed: DocumentPath(steps: [.member("doc")])
      case .nested: DocumentPath(steps: [.member("a b"), .elements, .elements, .member("d")])
      }
    }

    var description: String { "\(path)" }
  }

  // MARK: The model

  /// What the model expects of one input value.
  struct Expected {
    var output: [UInt8] = []
    var rejects: [UInt8] = []
    var rejected = 0
    var documents = 0
  }

  /// Converts the documents of `value` at `steps`, taking rejected elements out.
  static func walk(
    _ value: RawJSON, _ steps: ArraySlice<DocumentPath.Step>, deep: Bool,
    operation: DifferentialTests.Operation, expected: inout Expected
  ) -> (value: RawJSON, rejected: Bool) {
    guard let step = steps.first else {
      if deep, case .scalar(let text) = value, text == Array("null".utf8) { return (value, false) }
      expected.documents += 1
      switch operation.model(ReferenceModel.Document(value.serialized())) {
      case .converted(let bytes, _): return (.scalar(bytes), false)
      case .rejected: return (value, true)
      }
    }
    let rest = steps.dropFirst()
    switch step {
    case .member(let name):
      guard case .object(var members) = value else { return (value, false) }
      var rejected = false
      for index in members.indices where members[index].key.equals(name) {
        let (converted, isRejected) = walk(
          members[index].value, rest, deep: true, operation: operation, expected: &expected)
        members[index].value = converted
        rejected = rejected || isRejected
      }
      return (.object(members), rejected)
    case .elements:
      guard case .array(let elements) = value else { return (value, false) }
      var kept: [RawJSON] = []
      for element in elements {
        // Rejects of elements inside this one come first: they are taken out on the way.
        var inner = Expected()
        let (converted, isRejected) = walk(
          element, rest, deep: true, operation: operation, expected: &inner)
        expected.documents += inner.documents
        if isRejected {
          expected.rejects += element.serialized() + [0x0A]
          expected.rejected += 1
        } else {
          expected.rejects += inner.rejects
          expected.rejected += inner.rejected
          kept.append(converted)
        }
      }
      return (.array(kept), false)
    }
  }

  static func model(
    _ values: [RawJSON], path: DocumentPath, operation: DifferentialTests.Operation
  ) -> Expected {
    var expected = Expected()
    for value in values {
      var single = Expected()
      let (converted, rejected) = walk(
        value, path.steps[...], deep: false, operation: operation, expected: &single)
      expected.documents += single.documents
      if rejected {
        expected.rejects += value.serialized() + [0x0A]
        expected.rejected += 1
      } else {
        expected.rejects += single.rejects
        expected.rejected += single.rejected
        expected.output += converted.serialized() + [0x0A]
      }
    }
    return expected
  }

  // MARK: Generated envelopes

  /// Envelopes of `kind` as text, each holding generated documents, with big numbers and escapes
  /// in the envelope itself.
  static func envelopes(_ kind: Kind, seed: UInt64, count: Int, documents: () -> [UInt8])
    -> [[UInt8]]
  {
    var random = SplitMix64(seed: seed)
    func doc() -> String { String(decoding: documents(), as: UTF8.self) }
    func rows(_ make: (Int) -> String) -> String {
      (0..<random.below(6)).map(make).joined(separator: random.pick([",", ",\n", " , "]))
    }
    let bigNumbers = ["12345678901234567890123", "1.50", "1e400", "-0"]
    let escapes = [#""caf\u00e9""#, #""a\/b""#, #""\ud83d\ude00""#, #""tab\there""#]
    return (0..<count).map { _ in
      let text: String
      switch kind {
      case .changes:
        text =
          #"{"results":["#
          + rows { index in
            switch random.below(5) {
            case 0: #"{"seq":\#(index),"id":"r","removed":["ch"],"changes":[{"rev":"2-a"}]}"#
            case 1: #"{"seq":\#(random.pick(bigNumbers)),"id":\#(random.pick(escapes)),"doc":null}"#
            case 2: #"{"seq":"\#(index)::3","id":"x","doc":\#(doc()),"doc":\#(doc())}"#
            default: #"{"seq":\#(index),"id":"d","changes":[{"rev":"1-a"}],"doc":\#(doc())}"#
            }
          } + #"],"last_seq":\#(random.pick(bigNumbers))}"#
      case .allDocs:
        text =
          #"{"total_rows":\#(random.pick(bigNumbers)),"offset":0,"rows":[\#r\#n"#
          + rows { _ in
            switch random.below(4) {
            case 0: #"{"key":\#(random.pick(escapes)),"error":"not_found"}"#
            case 1: #"{"id":"g","key":"g","value":{"rev":"2-b","deleted":true},"doc":null}"#
            default: #"{"id":"a","key":"a","value":{"rev":"1-a"},"doc":\#(doc())}"#
            }
          } + "\r\n]}"
      case .bulkDocs:
        text =
          #"{"docs":["# + rows { _ in random.percent(10) ? "null" : doc() } + "]"
          + (random.percent(50) ? #","new_edits":false}"# : "}")
      case .bulkGet:
        text =
          #"{"results":["#
          + rows { _ in
            #"{"id":\#(random.pick(escapes)),"docs":["#
              + (0..<random.below(4)).map { _ in
                random.percent(25)
                  ? #"{"error":{"id":"m","rev":"1-x","error":"not_found","reason":"missing"}}"#
                  : #"{"ok":\#(doc())}"#
              }.joined(separator: ",") + "]}"
          } + "]}"
      case .continuousFeed:
        text =
          random.percent(10)
          ? #"{"last_seq":\#(random.pick(bigNumbers))}"#
          : #"{"seq":\#(random.pick(bigNumbers)),"id":"c","changes":[],"doc":\#(doc())}"#
      case .nested:
        text =
          #"{"a\u0020b":[[{"d":\#(doc())},5,{"e":1}],[],"x",[{"d":\#(doc())},{"d":null}]],"a b":7}"#
      }
      return Array(text.utf8)
    }
  }

  static func input(_ values: [[UInt8]]) -> [UInt8] {
    Array(values.joined(separator: [0x0A])) + [0x0A]
  }

  @Test(
    "convertStream on generated envelopes equals the model",
    arguments: Kind.allCases)
  func envelopes(kind: Kind) throws {
    var generator = DocumentGenerator(seed: 0xE4E1 &+ UInt64(Kind.allCases.firstIndex(of: kind)!))
    let texts = Self.envelopes(kind, seed: 77, count: 200) { generator.document() }
    let values = try texts.map { try RawJSON.parse($0) }
    let input = Self.input(texts)
    var checked = 0
    var rejected = 0
    for operation in [DifferentialTests.Operation.pushJSONPath, .pushLitecore, .pull] {
      var options = operation.options
      options.documents = kind.path
      options.keepGoing = true
      let expected = Self.model(values, path: kind.path, operation: operation)
      for (chunkSize, capacities) in [(1 << 16, EngineCapacities.standard), (13, .tiny)] {
        let result = CBLAttachments.convertStream(
          input, options: options, chunkSize: chunkSize, capacities: capacities)
        let sameOutput = result.output == expected.output
        #expect(
          sameOutput, "\(kind) \(operation): \(difference(result.output, expected.output))")
        let sameRejects = result.rejects == expected.rejects
        #expect(
          sameRejects,
          "\(kind) \(operation): rejects \(difference(result.rejects, expected.rejects))")
        let errors = result.diagnostics.filter { $0.severity == .error }
        #expect(
          errors.count == expected.rejected,
          "\(kind) \(operation): errors \(errors.map(\.description))")
        #expect(result.statistics.documents == expected.documents)
        #expect(result.outcome == .completed)
      }
      checked += expected.documents
      rejected += expected.rejected
    }
    #expect(checked > 300 && rejected > 0, "the corpus has documents, some rejected")
  }

  @Test("pull(push(e)) == e, byte for byte, for compact envelopes", arguments: Kind.allCases)
  func pullUndoesPush(kind: Kind) throws {
    var options = DocumentGenerator.Options()
    options.attachments = false
    options.nonStringData = false
    options.nonObjects = false
    options.duplicateAttachments = false
    var generator = DocumentGenerator(
      seed: 0x9A11 &+ UInt64(kind.path.steps.count), options: options)
    let texts = Self.envelopes(kind, seed: 99, count: 150) { generator.document() }
    // Compact envelopes: what push and pull write.
    let compact = Self.input(try texts.map { try RawJSON.parse($0).serialized() })
    for naming in EntryNaming.allCases {
      let pushed = CBLAttachments.convertStream(
        compact, options: ConversionOptions(mode: .push, naming: naming, documents: kind.path))
      #expect(pushed.diagnostics.allSatisfy { $0.severity == .warning })
      #expect(pushed.output != compact || kind == .nested, "push changed something")
      let pulled = CBLAttachments.convertStream(
        pushed.output, options: ConversionOptions(mode: .pull, documents: kind.path))
      let same = pulled.output == compact
      #expect(same, "\(kind) \(naming): \(difference(pulled.output, compact))")
    }
  }
}
