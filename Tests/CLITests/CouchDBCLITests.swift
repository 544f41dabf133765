import Foundation
import Testing

// SPEC.md "Running peers", on the command line: CouchDB's document size limit in --check
// (--couchdb-max-document-size), unverified bodies in --stats, and their exact messages.

@Suite("CLI: CouchDB's limits and bodies")
struct CouchDBCLITests {
  /// A document whose CouchDB body is exactly `size` bytes (`{"s":"xxx…"}`; strings count their
  /// bytes and two quotes), with `_id` and `_attachments`, which CouchDB does not count.
  private func document(_ id: String, bodySize: Int) -> String {
    let frame = #"{"s":""}"#
    return #"{"_id":"\#(id)","s":""# + String(repeating: "x", count: bodySize - frame.utf8.count)
      + #"","_attachments":{"a.txt":{"data":"aGk="}}}"#
  }

  @Test("--check: couchdb-document-too-large over 8,000,000 bytes of body, and its option")
  func documentSize() throws {
    let input =
      Array(
        [document("at", bodySize: 8_000_000), document("over", bodySize: 8_000_001)]
          .joined(separator: "\n").utf8) + [0x0A]
    let finding =
      #"{"id":"over","line":2,"problem":"couchdb-document-too-large","pointer":"","detail":"CouchDB measures the document's body (attachments and _ members not counted) as 8000001 bytes; its max_document_size is 8000000: it answers 413 document_too_large"}"#
      + "\n"
    expectRun(
      try CLI.run(["--check"], stdin: input), stdout: finding,
      stderr: "cbl-attachments: checked 2 documents: 1 finding in 1 document\n", status: 1)
    let lower = try CLI.run(["--check", "--couchdb-max-document-size", "7999999"], stdin: input)
    #expect(lower.status == 1)
    #expect(
      lower.out.split(separator: "\n").count == 2,
      "both documents are over 7999999")
    expectRun(
      try CLI.run(["--check", "--couchdb-max-document-size=0"], stdin: input), stdout: "",
      stderr: "cbl-attachments: checked 2 documents: 0 findings in 0 documents\n", status: 0)
  }

  @Test("--couchdb-max-document-size: a whole number, with --check only")
  func documentSizeUsage() throws {
    for (arguments, message) in [
      (
        ["--check", "--couchdb-max-document-size", "8MB"],
        "--couchdb-max-document-size must be a whole number of bytes (0: no limit), not '8MB'"
      ),
      (
        ["--check", "--couchdb-max-document-size=-1"],
        "--couchdb-max-document-size must be a whole number of bytes (0: no limit), not '-1'"
      ),
      (
        ["--push", "--couchdb-max-document-size", "10"],
        "--couchdb-max-document-size applies to --check only"
      ),
    ] {
      expectRun(
        try CLI.run(arguments, stdin: []), stdout: "", stderr: usageError(message), status: 2)
    }
  }

  @Test("--stats counts bodies stored unverified")
  func unverifiedStatistics() throws {
    let scratch = try Scratch()
    // "hello" under the md5 of the empty body: no compression of "hello" gives it.
    let input =
      Array(
        #"{"_id":"u","_attachments":{"h.txt":{"content_type":"text/plain","digest":"md5-1B2M2Y8AsgTpgAmY7PhCfg==","data":"aGVsbG8="}}}"#
          .utf8) + [0x0A]
    let result = try CLI.run(
      ["--upgrade", "--stats"], stdin: input, in: scratch.directory)
    #expect(result.status == 0)
    let lines = result.stderr.split(separator: "\n")
    #expect(lines.count == 2, "\(lines)")
    #expect(
      lines.first?.hasPrefix(
        "cbl-attachments: <stdin>:1:28: warning: document \"u\": _attachments entry \"h.txt\""
          + " (md5-1B2M2Y8AsgTpgAmY7PhCfg==): its bytes could not be checked") == true)
    #expect(lines.last?.hasSuffix("; 1 body unverified") == true, "\(lines.last ?? "")")
    let strict = try CLI.run(["--upgrade", "--strict"], stdin: input, in: scratch.directory)
    #expect(strict.status == 1 && strict.out.isEmpty)
  }
}
