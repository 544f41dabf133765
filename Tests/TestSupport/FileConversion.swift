import Foundation
import Glibc
@_spi(Testing) import LegacyAttachments

// Running a StreamConverter over a real file descriptor (so that the parallel reader sees one),
// for the tests of --jobs, of hostile input and of the nothing-lost invariant.

/// `bytes` as text for a failure message, cut at `limit` bytes.
public func shown(_ bytes: [UInt8], _ limit: Int = 300) -> String {
  let text = String(decoding: bytes.prefix(limit), as: UTF8.self)
  return bytes.count > limit ? text + "… (\(bytes.count) bytes)" : text
}

/// What a stream conversion produced, in a comparable form.
public struct Outcome: Equatable, CustomStringConvertible {
  public var output: [UInt8]
  public var rejects: [UInt8]
  public var diagnostics: [String]
  /// The diagnostics as `KIND LINE:COLUMN: SEVERITY: MESSAGE` (the golden files' form).
  public var located: [String] = []
  public var outcome: InputOutcome
  public var documents: Int
  public var errors: Int
  /// Input bytes of rejected documents that were not saved.
  public var skipped: Int

  public init(_ result: StreamResult) {
    output = result.output
    rejects = result.rejects
    diagnostics = result.diagnostics.map { $0.formatted(inputName: "in") }
    outcome = result.outcome
    documents = result.statistics.documents
    errors = result.statistics.errors
    skipped = result.statistics.bytesSkipped
  }

  public init(
    output: [UInt8], rejects: [UInt8], diagnostics: [String], outcome: InputOutcome, documents: Int,
    errors: Int, skipped: Int = 0
  ) {
    self.output = output
    self.rejects = rejects
    self.diagnostics = diagnostics
    self.outcome = outcome
    self.documents = documents
    self.errors = errors
    self.skipped = skipped
  }

  public var description: String {
    "outcome \(outcome), \(documents) documents, \(errors) errors\n  output: \(shown(output))\n"
      + "  rejects: \(shown(rejects))\n  diagnostics: \(diagnostics)"
  }
}

/// Converts `input` with a StreamConverter reading a file, on `jobs` threads, `batchBytes` per
/// batch, with its buffers at 16 bytes when `tinyBuffers`, `readSize` bytes per read, saving
/// rejects to a file unless `keepsRejects` is false.
public func convertFile(
  _ input: [UInt8], options: ConversionOptions, jobs: Int, batchBytes: Int,
  tinyBuffers: Bool = false, readSize: Int = 1 << 18, keepsRejects: Bool = true,
  batchesStartedBetweenElements: ((Int) -> Void)? = nil
) throws -> Outcome {
  try convertFiles(
    [input], options: options, jobs: jobs, batchBytes: batchBytes, tinyBuffers: tinyBuffers,
    readSize: readSize, keepsRejects: keepsRejects,
    batchesStartedBetweenElements: batchesStartedBetweenElements)
}

/// ``convertFile(_:options:jobs:batchBytes:tinyBuffers:readSize:keepsRejects:batchesStartedBetweenElements:)``
/// for several inputs, one after another into the same output (named `in`, `in2`, `in3`…).
public func convertFiles(
  _ inputs: [[UInt8]], options: ConversionOptions, jobs: Int, batchBytes: Int,
  tinyBuffers: Bool = false, readSize: Int = 1 << 18, keepsRejects: Bool = true,
  batchesStartedBetweenElements: ((Int) -> Void)? = nil
) throws -> Outcome {
  let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
    "cbl-convert-\(UUID().uuidString)")
  try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
  defer { try? FileManager.default.removeItem(at: directory) }
  let names = inputs.indices.map { $0 == 0 ? "in" : "in\($0 + 1)" }
  let paths = (names + ["out", "rejects"]).map { directory.appendingPathComponent($0).path }
  for (index, input) in inputs.enumerated() {
    _ = FileManager.default.createFile(atPath: paths[index], contents: Data(input))
  }
  let outputDescriptor = open(paths[inputs.count], O_WRONLY | O_CREAT | O_TRUNC, 0o644)
  let rejectsDescriptor = open(paths[inputs.count + 1], O_WRONLY | O_CREAT | O_TRUNC, 0o644)
  defer {
    close(outputDescriptor)
    close(rejectsDescriptor)
  }
  let converter = StreamConverter(
    options: options, output: FileDescriptorSink(SystemFileDescriptor(rawValue: outputDescriptor)),
    rejects: keepsRejects
      ? FileDescriptorSink(SystemFileDescriptor(rawValue: rejectsDescriptor), name: "rejects")
      : nil,
    capacities: tinyBuffers ? .tiny : .standard)
  converter.jobs = jobs
  converter.batchBytes = batchBytes
  converter.readSize = readSize
  var diagnostics: [String] = []
  var located: [String] = []
  converter.diagnosticHandler = { diagnostic, name in
    diagnostics.append(diagnostic.formatted(inputName: name))
    located.append("\(diagnostic.kind.rawValue) \(diagnostic.description)")
  }
  var outcome = InputOutcome.completed
  for (index, name) in names.enumerated() {
    let inputDescriptor = open(paths[index], O_RDONLY)
    defer { close(inputDescriptor) }
    outcome = try converter.convert(SystemFileDescriptor(rawValue: inputDescriptor), name: name)
    if outcome == .stopped { break }
  }
  try converter.finish()
  batchesStartedBetweenElements?(converter.batchesStartedBetweenElements)
  var result = Outcome(
    output: Array(try Data(contentsOf: URL(fileURLWithPath: paths[inputs.count]))),
    rejects: Array(try Data(contentsOf: URL(fileURLWithPath: paths[inputs.count + 1]))),
    diagnostics: diagnostics, outcome: outcome, documents: converter.statistics.documents,
    errors: converter.statistics.errors,
    skipped: converter.statistics.bytesSkipped)
  result.located = located
  return result
}
