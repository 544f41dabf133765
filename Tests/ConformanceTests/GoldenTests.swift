import Foundation
@_spi(Testing) import LegacyAttachments
import TestSupport
import Testing

// Golden tests in the style of yajl's test suite: every case under Golden/<case>/ holds an
// `input.json` and, for each step that applies, the exact expected output, written by hand from
// SPEC.md:
//
//   <step>.expected     the converted stream (standard output), byte for byte; required
//   <step>.diagnostics  one line per diagnostic, `KIND LINE:COLUMN: SEVERITY: MESSAGE`;
//                       absent = no diagnostic at all
//   <step>.rejects      the rejected documents' original text (`--rejects`); absent = none
//   <step>.outcome      `completed`, `stopped` or `abandoned`; absent = `completed`
//   options             optional, one per line: `format list` (or a named envelope: `format
//                       changes`, `all-docs`, `bulk-docs`, `bulk-get`), `docs PATH`,
//                       `bulk-docs N`, `new-edits false` (push and pull steps only),
//                       `keep-going`, `strict`, `revpos N`
//                       (`revpos` applies to the litecore steps only, as on the command line),
//                       `no-rejects` (rejected text is not kept, as without `--rejects`: errors
//                       say what was skipped)
//
// Steps: `push`, `push-litecore`, `pull`, `pull-update-blobs`, `upgrade`, `list`, `check`, and
// the chains `push-then-pull`, `push-litecore-then-pull`, `upgrade-then-pull`,
// `upgrade-then-upgrade`, `upgrade-then-push-litecore` (diagnostics and rejects of every stage,
// in order). The option `into NAME` sets `--into` for the upgrade steps.
//
// Like yajl's runner, each step is fed to the engine with EVERY chunk size from 1 to 64 bytes (and
// the default 64 KiB), with the engine's buffers at their usual sizes and at 16 bytes (so that the
// input window compacts inside every token and every bad document); every run must give exactly
// the expected result.

/// The directory of the golden cases inside the test bundle.
private let goldenRoot: URL = {
  guard let url = Bundle.module.url(forResource: "Golden", withExtension: nil) else {
    fatalError("the Golden resource directory is missing from the test bundle")
  }
  return url
}()

/// Every case directory, sorted by name.
private let goldenCaseNames: [String] = {
  let names = (try? FileManager.default.contentsOfDirectory(atPath: goldenRoot.path)) ?? []
  return names.filter { name in
    var isDirectory: ObjCBool = false
    return FileManager.default.fileExists(
      atPath: goldenRoot.appendingPathComponent(name).path, isDirectory: &isDirectory)
      && isDirectory.boolValue
  }.sorted()
}()

/// The chunk sizes every step is run with.
private let chunkSizes: [Int] = Array(1...64) + [1 << 16]

/// One golden case read from disk.
private struct GoldenCase {
  let name: String
  let directory: URL
  let input: [UInt8]
  let framing: InputFraming
  let documents: DocumentPath
  let bulkDocs: BulkDocsOutput?
  let keepGoing: Bool
  let strict: Bool
  let into: String
  let revpos: Int?
  let keepsRejects: Bool

  init(name: String) throws {
    self.name = name
    directory = goldenRoot.appendingPathComponent(name)
    input = try GoldenCase.read(directory.appendingPathComponent("input.json"))
    var framing = InputFraming.lines
    var documents = DocumentPath.root
    var perBody: Int? = nil
    var newEditsFalse = false
    var keepGoing = false
    var strict = false
    var into = "attachments"
    var revpos: Int? = nil
    var keepsRejects = true
    if let text = try? String(
      contentsOf: directory.appendingPathComponent("options"), encoding: .utf8)
    {
      for line in text.split(separator: "\n") {
        let words = line.split(separator: " ").map(String.init)
        switch words.first {
        case "format":
          switch words[1] {
          case "changes": documents = .changes
          case "all-docs": documents = .allDocs
          case "bulk-docs": documents = .bulkDocs
          case "bulk-get": documents = .bulkGet
          default: framing = InputFraming(rawValue: words[1])!
          }
        case "docs": documents = try DocumentPath(parsing: words[1...].joined(separator: " "))
        case "bulk-docs": perBody = Int(words[1])!
        case "new-edits": newEditsFalse = words[1] == "false"
        case "keep-going": keepGoing = true
        case "into": into = words[1...].joined(separator: " ")
        case "strict": strict = true
        case "revpos": revpos = Int(words[1])!
        case "no-rejects": keepsRejects = false
        default: Issue.record("\(name)/options: unknown option line '\(line)'")
        }
      }
    }
    self.framing = framing
    self.documents = documents
    bulkDocs = perBody.map { BulkDocsOutput(documentsPerBody: $0, newEditsFalse: newEditsFalse) }
    self.keepGoing = keepGoing
    self.strict = strict
    self.into = into
    self.revpos = revpos
    self.keepsRejects = keepsRejects
  }

  static func read(_ url: URL) throws -> [UInt8] {
    [UInt8](try Data(contentsOf: url))
  }

  func file(_ name: String) -> [UInt8]? {
    try? GoldenCase.read(directory.appendingPathComponent(name))
  }

  /// The steps this case has expectations for.
  var steps: [String] {
    let files = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
    return files.filter { $0.hasSuffix(".expected") }.map { String($0.dropLast(".expected".count)) }
      .sorted()
  }

  func options(_ mode: ConversionMode, naming: EntryNaming = .jsonpath, updateBlobs: Bool = false)
    -> ConversionOptions
  {
    ConversionOptions(
      mode: mode, naming: naming, revpos: naming == .litecore ? revpos : nil, framing: framing,
      documents: documents,
      bulkDocs: mode == .push || mode == .pull ? bulkDocs : nil,
      // `into` is the upgrade's (`--into`); the other stages of a step do not take it.
      upgradeInto: mode == .upgrade ? into : ConversionOptions.defaultUpgradeInto,
      updateBlobs: updateBlobs, keepGoing: keepGoing, strict: strict)
  }

  /// The stages of a step, each run on the output of the one before.
  func stages(of step: String) -> [ConversionOptions]? {
    switch step {
    case "push": [options(.push)]
    case "push-litecore": [options(.push, naming: .litecore)]
    case "pull": [options(.pull)]
    case "list": [options(.list)]
    case "check": [options(.check)]
    case "upgrade": [options(.upgrade)]
    case "pull-update-blobs": [options(.pull, updateBlobs: true)]
    case "upgrade-then-pull": [options(.upgrade), options(.pull)]
    case "upgrade-then-upgrade": [options(.upgrade), options(.upgrade)]
    case "upgrade-then-push-litecore": [options(.upgrade), options(.push, naming: .litecore)]
    case "push-then-pull": [options(.push), options(.pull)]
    case "push-litecore-then-pull": [options(.push, naming: .litecore), options(.pull)]
    default: nil
    }
  }
}

/// What one run of a step produced, in the form the expectation files use.
private struct StepResult: Equatable {
  var output: [UInt8] = []
  var diagnostics: [String] = []
  var rejects: [UInt8] = []
  var outcome = "completed"
}

private func describe(_ outcome: InputOutcome) -> String {
  switch outcome {
  case .completed: "completed"
  case .stopped: "stopped"
  case .abandoned: "abandoned"
  }
}

private func line(_ diagnostic: ConversionDiagnostic) -> String {
  "\(diagnostic.kind.rawValue) \(diagnostic.description)"
}

private func run(
  _ stages: [ConversionOptions], on input: [UInt8], chunkSize: Int,
  capacities: EngineCapacities = .standard, keepsRejects: Bool = true
) -> StepResult {
  var result = StepResult()
  var text = input
  for options in stages {
    let stream = CBLAttachments.convertStream(
      text, options: options, chunkSize: chunkSize, capacities: capacities,
      keepsRejects: keepsRejects)
    result.diagnostics += stream.diagnostics.map(line)
    result.rejects += stream.rejects
    result.outcome = describe(stream.outcome)
    result.output = stream.output
    text = stream.output
    if stream.outcome != .completed { break }
  }
  return result
}

/// Shows bytes readably in failure messages (control characters and invalid UTF-8 made visible).
private func show(_ bytes: [UInt8]) -> String {
  var text = ""
  for scalar in String(decoding: bytes, as: UTF8.self).unicodeScalars {
    switch scalar {
    case "\n": text += "⏎\n"
    case "\r": text += "␍"
    case "\t": text += "⇥"
    case "\u{FEFF}": text += "<BOM>"
    case "\u{FFFD}": text += "<invalid UTF-8>"
    default:
      text += scalar.value < 0x20 ? "<\(String(scalar.value, radix: 16))>" : String(scalar)
    }
  }
  return text
}

private func lines(_ bytes: [UInt8]?) -> [String] {
  guard let bytes, !bytes.isEmpty else { return [] }
  return String(decoding: bytes, as: UTF8.self).split(
    separator: "\n", omittingEmptySubsequences: false
  )
  .dropLast(bytes.last == 0x0A ? 1 : 0).map(String.init)
}

/// What one run of a step gives when the stages read files, as the command does: `read(2)` of
/// `readSize` bytes into the engine's window, which compacts before reads.
private func runFromFiles(
  _ stages: [ConversionOptions], on input: [UInt8], readSize: Int, tinyBuffers: Bool, jobs: Int,
  batchBytes: Int, keepsRejects: Bool
) throws -> StepResult {
  var result = StepResult()
  var text = input
  for options in stages {
    let run = try convertFile(
      text, options: options, jobs: jobs, batchBytes: batchBytes, tinyBuffers: tinyBuffers,
      readSize: readSize, keepsRejects: keepsRejects)
    result.diagnostics += run.located
    result.rejects += run.rejects
    result.outcome = describe(run.outcome)
    result.output = run.output
    text = run.output
    if run.outcome != .completed { break }
  }
  return result
}

@Suite("Golden files: every SPEC.md rule, every chunk size")
struct GoldenTests {
  @Test("the golden cases are all there and well-formed")
  func inventory() throws {
    #expect(goldenCaseNames.count >= 45, "cases found: \(goldenCaseNames)")
    for name in goldenCaseNames {
      let golden = try GoldenCase(name: name)
      #expect(!golden.steps.isEmpty, "\(name) has no .expected file")
      for step in golden.steps {
        #expect(golden.stages(of: step) != nil, "\(name): unknown step '\(step)'")
      }
      let files =
        (try? FileManager.default.contentsOfDirectory(atPath: golden.directory.path)) ?? []
      for file in files where file != "input.json" && file != "options" {
        let step = file.split(separator: ".").first.map(String.init) ?? ""
        #expect(
          golden.steps.contains(step), "\(name)/\(file) belongs to no step with a .expected file")
      }
    }
  }

  @Test("golden case", arguments: goldenCaseNames)
  func golden(_ name: String) throws {
    let golden = try GoldenCase(name: name)
    for step in golden.steps {
      guard let stages = golden.stages(of: step) else { continue }
      let expected = StepResult(
        output: golden.file("\(step).expected") ?? [],
        diagnostics: lines(golden.file("\(step).diagnostics")),
        rejects: golden.file("\(step).rejects") ?? [],
        outcome: golden.file("\(step).outcome").map {
          String(decoding: $0, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        } ?? "completed")

      // Every chunk size and buffer capacity gives one and the same result...
      let keepsRejects = golden.keepsRejects
      let reference = run(stages, on: golden.input, chunkSize: 1, keepsRejects: keepsRejects)
      for (size, capacities) in chunkSizes.dropFirst().map({ ($0, EngineCapacities.standard) })
        + chunkSizes.map({ ($0, EngineCapacities.tiny) })
      {
        let result = run(
          stages, on: golden.input, chunkSize: size, capacities: capacities,
          keepsRejects: keepsRejects)
        if result != reference {
          let tiny = capacities == .tiny ? " with 16-byte buffers" : ""
          Issue.record(
            """
            \(name) \(step): chunk size \(size)\(tiny) differs from chunk size 1
            --- chunk size 1 output:
            \(show(reference.output))--- chunk size \(size) output:
            \(show(result.output))--- diagnostics (1 / \(size)):
            \(reference.diagnostics.joined(separator: "\n"))
            \(result.diagnostics.joined(separator: "\n"))
            """)
          break
        }
      }
      // ...and it is the expected one.
      #expect(
        show(reference.output) == show(expected.output), "\(name) \(step): output")
      #expect(reference.output == expected.output, "\(name) \(step): output bytes")
      #expect(reference.diagnostics == expected.diagnostics, "\(name) \(step): diagnostics")
      #expect(show(reference.rejects) == show(expected.rejects), "\(name) \(step): rejects")
      #expect(reference.rejects == expected.rejects, "\(name) \(step): rejects bytes")
      #expect(reference.outcome == expected.outcome, "\(name) \(step): outcome")

      // The same through files, as the command reads them: at small read sizes (the window
      // compacts before reads), with 16-byte buffers, and cut into tiny batches for two threads.
      for (readSize, tiny, jobs, batchBytes) in [
        (1, true, 1, 1 << 20), (2, false, 1, 1 << 20), (3, true, 1, 1 << 20), (7, true, 1, 1 << 20),
        (16, false, 1, 1 << 20), (61, true, 1, 1 << 20), (1 << 18, false, 1, 1 << 20),
        (5, true, 2, 2), (64, true, 2, 16), (1 << 18, false, 2, 48),
      ] {
        let result = try runFromFiles(
          stages, on: golden.input, readSize: readSize, tinyBuffers: tiny, jobs: jobs,
          batchBytes: batchBytes, keepsRejects: keepsRejects)
        if result != expected {
          Issue.record(
            """
            \(name) \(step): from a file, read size \(readSize)\(tiny ? ", 16-byte buffers" : ""), \
            -j \(jobs) (batches of \(batchBytes)) differs from the expected result
            --- output:
            \(show(result.output))--- diagnostics:
            \(result.diagnostics.joined(separator: "\n"))
            --- rejects:
            \(show(result.rejects))--- outcome: \(result.outcome)
            """)
          break
        }
      }

      // Push and pull are idempotent: converting the expected output again changes nothing.
      // (Rows and `_bulk_docs` bodies are not input of the same kind.)
      if stages.count == 1,
        stages[0].mode == .push || stages[0].mode == .pull || stages[0].mode == .upgrade,
        stages[0].bulkDocs == nil,
        !reference.diagnostics.contains(where: { $0.contains(": error: ") })
      {
        let again = run(stages, on: expected.output, chunkSize: 7, capacities: .tiny)
        #expect(
          show(again.output) == show(expected.output),
          "\(name) \(step): converting the output again must change nothing")
      }
    }
  }
}
