import Foundation
import LegacyAttachments
import Testing

// docs/library.md's StreamConverter example, here as it is written there (a test checks that the
// page shows exactly these lines), compiled with the tests and run: so the example compiles
// against the public API and does what the page says.

// BEGIN docs/library.md: StreamConverter
/// Pushes the documents of the file `inputPath` into the file `outputPath`, and the original
/// text of those it cannot convert into `rejectsPath`; returns what it did.
func pushFile(_ inputPath: String, to outputPath: String, rejects rejectsPath: String) throws
  -> ConversionStatistics
{
  var options = ConversionOptions(mode: .push, naming: .litecore)
  options.keepGoing = true
  try options.validate()  // what the command line checks before it reads anything
  let input = try SystemFileDescriptor.openForReading(inputPath)
  defer { input.close() }
  let output = try SystemFileDescriptor.openForWriting(outputPath)
  defer { output.close() }
  let rejects = try SystemFileDescriptor.openForWriting(rejectsPath)
  defer { rejects.close() }
  let converter = StreamConverter(
    options: options, output: FileDescriptorSink(output, name: outputPath),
    rejects: FileDescriptorSink(rejects, name: rejectsPath))
  converter.jobs = 2  // threads; the output stays in input order
  converter.diagnosticHandler = { diagnostic, input in
    print(diagnostic.formatted(inputName: input))  // cbl-attachments: dump.ndjson:2:1: error: …
  }
  _ = try converter.convert(input, name: inputPath)  // .completed, .skipped or .stopped
  try converter.finish()
  return converter.statistics
}
// END docs/library.md: StreamConverter

@Suite("The library's examples, as docs/library.md shows them")
struct LibraryExampleTests {
  /// The repository's root, from this file's place in it.
  static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent()

  @Test("docs/library.md shows the StreamConverter example exactly as it is compiled here")
  func exampleIsTheDocumented() throws {
    let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
    let begin = try #require(source.range(of: "// BEGIN docs/library.md: StreamConverter\n"))
    let end = try #require(source.range(of: "// END docs/library.md: StreamConverter"))
    let example = String(source[begin.upperBound..<end.lowerBound])
    let page = try String(
      contentsOf: Self.root.appendingPathComponent("docs/library.md"), encoding: .utf8)
    #expect(page.contains("```swift\nimport LegacyAttachments\n\n" + example + "```"))
  }

  @Test("the StreamConverter example pushes a file, its bad document set aside")
  func exampleRuns() throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
      "cbl-example-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let dump = folder.appendingPathComponent("dump.ndjson").path
    try Data(
      (#"{"_id":"a","_rev":"2-x","photo":{"@type":"blob","digest":"sha1-x","length":3}}"# + "\n"
        + "[1,2]\n" + #"{"_id":"b"}"# + "\n").utf8
    ).write(to: URL(fileURLWithPath: dump))
    let out = folder.appendingPathComponent("pushed.ndjson").path
    let rejects = folder.appendingPathComponent("rejects.ndjson").path
    let statistics = try pushFile(dump, to: out, rejects: rejects)
    #expect(statistics.documents == 3 && statistics.errors == 1 && statistics.entriesAdded == 1)
    #expect(
      try String(contentsOfFile: out, encoding: .utf8)
        == #"{"_id":"a","_rev":"2-x","photo":{"@type":"blob","digest":"sha1-x","length":3},"_attachments":{"blob_/photo":{"digest":"sha1-x","length":3,"stub":true,"revpos":2}}}"#
        + "\n" + #"{"_id":"b"}"# + "\n")
    #expect(try String(contentsOfFile: rejects, encoding: .utf8) == "[1,2]\n")
    // A file that is not there: the system's error, as a value.
    #expect(throws: SystemErrno.self) {
      _ = try pushFile(folder.appendingPathComponent("none").path, to: out, rejects: rejects)
    }
  }
}

@Suite("The library speaks its own terms: no command-line option in its messages")
struct LibraryMessageTests {
  /// Inputs that used to get command-line advice, each with the advice it now carries.
  @Test(
    "messages name no option; the advice is a value a front end words itself",
    arguments: [
      (ConversionMode.push, "[1,2]\n", ConversionDiagnostic.Advice.listFraming),
      (
        .push,
        #"{"a":{"@type":"blob","digest":"d"},"_attachments":{"$.a":{"digest":"d","data":"aGk="}}}"#
          + "\n", .blobStore
      ),
      (
        .pull, #"{"a":{"@type":"blob","digest":"d"},"_attachments":{"$.a":{"digest":"e"}}}"# + "\n",
        .updateBlobs
      ),
    ])
  func advice(mode: ConversionMode, input: String, advice: ConversionDiagnostic.Advice) {
    let result = CBLAttachments.convertStream(
      Array(input.utf8), options: ConversionOptions(mode: mode, keepGoing: true))
    #expect(result.diagnostics.map(\.advice) == [advice])
    #expect(result.diagnostics.allSatisfy { !$0.message.contains("--") }, "\(result.diagnostics)")
  }

  @Test(
    "an NDJSON dump read as a _changes body: the advice is lines framing, the message names no option"
  )
  func linesFramingAdvice() {
    var options = ConversionOptions(mode: .push)
    options.documents = .changes
    let result = CBLAttachments.convertStream(
      Array(#"{"_id":"a"}"#.utf8) + [0x0A], options: options)
    #expect(result.diagnostics.map(\.advice) == [.linesFraming])
    #expect(result.diagnostics.allSatisfy { !$0.message.contains("--") }, "\(result.diagnostics)")
    options.documents = .allDocs
    let empty = CBLAttachments.convertStream(
      Array(#"{"total_rows":0,"rows":[]}"#.utf8), options: options)
    #expect(empty.diagnostics.map(\.advice) == [nil], "\(empty.diagnostics)")
  }

  @Test("check details, list framing errors and document path errors name no option either")
  func details() throws {
    let findings = CBLAttachments.convertStream(
      Array(#"{"_id":"p","_attachments":{"x":{"digest":"d"}}}"#.utf8) + [0x0A],
      options: ConversionOptions(mode: .check))
    #expect(
      !findings.output.isEmpty && !String(decoding: findings.output, as: UTF8.self).contains("--"))
    let list = CBLAttachments.convertStream(
      Array("{}\n".utf8), options: ConversionOptions(mode: .push, framing: .list))
    #expect(list.diagnostics.count == 1 && !list.diagnostics[0].message.contains("--"))
    do {
      _ = try DocumentPath(parsing: "rows")
      Issue.record("rows is no document path")
    } catch {
      #expect(error.description == "a document path must be \(DocumentPathError.rule), not 'rows'")
    }
  }
}
