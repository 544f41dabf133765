// Unit tests reach internal types through @testable, which only debug builds allow; the release
// run of `make test` covers the build that ships with ConformanceTests and CLITests.
#if DEBUG

import Testing

@testable import LegacyAttachments

@Suite("BodyAssembler: documents in input order, N to a _bulk_docs body")
struct BodyAssemblerTests {
  private struct WriteFailed: Error {}

  /// Feeds `pieces` (whole lines) to an assembler and returns each write it made.
  private func writes(
    _ pieces: [String], perBody: Int, newEditsFalse: Bool = false, finishing: Bool = true
  ) -> [String] {
    let assembler = BodyAssembler(
      BulkDocsOutput(documentsPerBody: perBody, newEditsFalse: newEditsFalse))
    var written: [String] = []
    let record = { (bytes: UnsafeRawBufferPointer) in
      written.append(String(decoding: bytes, as: UTF8.self))
    }
    for piece in pieces {
      Array(piece.utf8).withUnsafeBytes { assembler.append(lines: $0, write: record) }
    }
    if finishing { assembler.finish(write: record) }
    return written
  }

  @Test("a body is written when it holds N documents, whatever pieces they came in")
  func bodiesOfN() {
    let expected = [#"{"docs":[{"a":1},{"b":2}]}"# + "\n", #"{"docs":[{"c":3},{"d":4}]}"# + "\n"]
    #expect(writes(["{\"a\":1}\n{\"b\":2}\n{\"c\":3}\n{\"d\":4}\n"], perBody: 2) == expected)
    #expect(
      writes(["{\"a\":1}\n", "{\"b\":2}\n{\"c\":3}\n", "{\"d\":4}\n"], perBody: 2) == expected)
    #expect(
      writes(["{\"a\":1}\n{\"b\":2}\n"], perBody: 1)
        == [#"{"docs":[{"a":1}]}"# + "\n", #"{"docs":[{"b":2}]}"# + "\n"])
  }

  @Test("the last body is written at the end, short; nothing without a document")
  func lastBody() {
    #expect(
      writes(["{\"a\":1}\n{\"b\":2}\n{\"c\":3}\n"], perBody: 2).last == #"{"docs":[{"c":3}]}"#
        + "\n")
    #expect(writes(["{\"a\":1}\n{\"b\":2}\n{\"c\":3}\n"], perBody: 2, finishing: false).count == 1)
    #expect(writes([], perBody: 2).isEmpty)
    #expect(writes(["", "{\"a\":1}\n{\"b\":2}\n"], perBody: 2).count == 1)
  }

  @Test("--new-edits false closes every body with \"new_edits\":false")
  func newEditsFalse() {
    #expect(
      writes(["{\"a\":1}\n{\"b\":2}\n{\"c\":3}\n"], perBody: 2, newEditsFalse: true)
        == [
          #"{"docs":[{"a":1},{"b":2}],"new_edits":false}"# + "\n",
          #"{"docs":[{"c":3}],"new_edits":false}"# + "\n",
        ])
  }

  @Test("--list and --check rows are never bodies: bulkDocs with them is refused, and makes none")
  func rowsAreNotBodies() {
    let input = Array("{\"_id\":\"a\",\"f\":{\"@type\":\"blob\"}}\n".utf8)
    for mode in [ConversionMode.list, .check] {
      var options = ConversionOptions(mode: mode)
      let plain = CBLAttachments.convertStream(input, options: options)
      options.bulkDocs = BulkDocsOutput(documentsPerBody: 5)
      #expect(BodyAssembler.forRun(options) == nil)
      #expect(!plain.output.isEmpty)
      let refused = CBLAttachments.convertStream(input, options: options)
      #expect(refused.output.isEmpty)
      #expect(refused.diagnostics.map(\.kind) == [.invalidOptions])
    }
    var push = ConversionOptions(mode: .push)
    push.bulkDocs = BulkDocsOutput(documentsPerBody: 5)
    #expect(BodyAssembler.forRun(push) != nil)
  }

  @Test("a body whose write failed is not written again, and the next body starts afresh")
  func failedWrite() {
    let assembler = BodyAssembler(BulkDocsOutput(documentsPerBody: 2))
    var written: [String] = []
    var fail = true
    let write = { (bytes: UnsafeRawBufferPointer) throws(WriteFailed) in
      if fail { throw WriteFailed() }
      written.append(String(decoding: bytes, as: UTF8.self))
    }
    /// Whether feeding `text` failed.
    func feed(_ text: String) -> Bool {
      var failed = false
      Array(text.utf8).withUnsafeBytes { bytes in
        do { try assembler.append(lines: bytes, write: write) } catch { failed = true }
      }
      return failed
    }
    #expect(feed("{\"a\":1}\n{\"b\":2}\n"))
    fail = false
    #expect(!feed("{\"c\":3}\n"))
    #expect(throws: Never.self) { try assembler.finish(write: write) }
    #expect(written == [#"{"docs":[{"c":3}]}"# + "\n"])
  }
}

#endif
