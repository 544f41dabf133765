import Foundation
@_spi(Testing) import LegacyAttachments
import TestSupport
import Testing

// Every input under FuzzRegressions/ once broke an invariant of Fuzz/FuzzTarget.swift. They are
// replayed here with the same invariants, so a fix cannot silently regress:
//  - every mode gives the same output, rejects and diagnostics at every chunk size from 1 to 16
//    as in one piece, with the engine's buffers at their usual sizes and at 16 bytes;
//  - every output line is valid JSON (only whole, well-formed documents are written).

private let regressionRoot: URL = {
  guard let url = Bundle.module.url(forResource: "FuzzRegressions", withExtension: nil) else {
    fatalError("the FuzzRegressions resource directory is missing from the test bundle")
  }
  return url
}()

private let regressionNames: [String] =
  ((try? FileManager.default.contentsOfDirectory(atPath: regressionRoot.path)) ?? []).sorted()

@Suite("Fuzz regressions")
struct FuzzRegressionTests {
  @Test("there are regression inputs to replay")
  func inputsExist() {
    #expect(!regressionNames.isEmpty)
  }

  @Test("same result at every chunk size, in every mode", arguments: regressionNames)
  func chunkSizesAgree(name: String) throws {
    let input = Array(try Data(contentsOf: regressionRoot.appendingPathComponent(name)))
    // As the fuzz target runs them: as lines, and as envelopes whose path iterates (the input
    // is then parsed as far as it was read, whole lines or not) or not.
    let paths = [DocumentPath.root, .changes, .bulkGet, DocumentPath(steps: [.member("doc")])]
    for mode in ConversionMode.allCases {
      for (keepGoing, path) in [false, true].flatMap({ going in paths.map { (going, $0) } }) {
        var options = ConversionOptions(mode: mode, keepGoing: keepGoing)
        options.documents = path
        let whole = CBLAttachments.convertStream(input, options: options)
        for chunk in 1...16 {
          for capacities in [EngineCapacities.standard, .tiny] {
            let pieces = CBLAttachments.convertStream(
              input, options: options, chunkSize: chunk, capacities: capacities)
            // (Bytes read may differ when a bad document stops the run early; nothing else may.)
            let same =
              pieces.output == whole.output && pieces.rejects == whole.rejects
              && pieces.diagnostics == whole.diagnostics && pieces.outcome == whole.outcome
            #expect(
              same,
              "\(name) \(mode) \(path) keepGoing=\(keepGoing) chunk \(chunk)\(capacities == .tiny ? " tiny" : "")"
            )
            if !same { break }
          }
        }
      }
    }
  }

  @Test("valid JSON in, valid JSON out", arguments: regressionNames)
  func validOutput(name: String) throws {
    let input = Array(try Data(contentsOf: regressionRoot.appendingPathComponent(name)))
    for mode in ConversionMode.allCases {
      let result = CBLAttachments.convertStream(
        input, options: ConversionOptions(mode: mode, keepGoing: true))
      // yajl (through the engine, in pull mode) must accept the output again without a word.
      let reparsed = CBLAttachments.convertStream(
        result.output, options: ConversionOptions(mode: .pull))
      #expect(
        !reparsed.diagnostics.contains { $0.kind == .malformedJSON }, "\(name) \(mode)")
    }
  }
}
