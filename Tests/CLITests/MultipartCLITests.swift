import Foundation
import Testing

// --format multipart on the command line: its options, its messages (a byte offset where a line
// and column would be), the rejects file as a body of its own, and the exit statuses.

private let bulkGet = try! Array(
  Data(
    contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent()
      .deletingLastPathComponent().deletingLastPathComponent()
      .appendingPathComponent("examples/data/api/couchdb-bulk-get-multipart.txt")))

@Suite("CLI: --format multipart")
struct MultipartCLITests {
  @Test("--boundary and --inline belong to --format multipart; --docs does not")
  func usage() throws {
    for (arguments, message) in [
      (["--pull", "--inline"], "--inline applies to --format multipart only"),
      (["--pull", "--boundary", "abc"], "--boundary applies to --format multipart only"),
      (
        ["--pull", "--format", "multipart", "--boundary", ""],
        "--boundary must be the boundary of the body's Content-Type (printable, without the"
          + " leading --), not ''"
      ),
      (
        ["--pull", "--format", "multipart", "--docs", ".doc"],
        "--docs cannot be combined with --format multipart, whose documents are its parts"
      ),
    ] {
      expectRun(
        try CLI.run(arguments, stdin: []), stdout: "", stderr: usageError(message), status: 2)
    }
  }

  @Test("a missing document is a warning (status 0); --strict makes it an error (status 1)")
  func errorParts() throws {
    let warning =
      "cbl-attachments: <stdin>: byte 78870: warning: document \"recipe::missing\": the server"
      + " could not give the document: not_found (missing)\n"
    let plain = try CLI.run(["--list", "--format", "multipart"], stdin: bulkGet)
    #expect(plain.status == 0 && plain.stderr == warning, "\(plain)")
    #expect(plain.out.split(separator: "\n").count == 6, "6 attachments, blob or legacy")
    let strict = try CLI.run(["--list", "--format", "multipart", "--strict"], stdin: bulkGet)
    #expect(strict.status == 1)
    #expect(strict.stderr == warning.replacingOccurrences(of: "warning:", with: "error:"))
  }

  @Test("bytes dropped without a store are said, with the option that keeps them")
  func droppedBytes() throws {
    let result = try CLI.run(["--upgrade", "--format", "multipart"], stdin: bulkGet)
    #expect(result.status == 0)
    #expect(
      result.stderr.split(separator: "\n").first.map(String.init)
        == "cbl-attachments: <stdin>: byte 670: warning: document \"user::priya\": _attachments"
        + " entry \"$.image\": its 3008 bytes are dropped and it becomes a stub: nothing keeps"
        + " them (--blobs DIR)")
  }

  @Test("a rejected document's part goes to --rejects as a body of its own, read again alike")
  func rejectsAreABody() throws {
    var body = bulkGet
    let marker = Array("filename=\"$.image\"".utf8)
    let image = (0..<body.count).first { body[$0...].starts(with: marker) }!
    body[image + 200] ^= 0xFF
    let folder = FileManager.default.temporaryDirectory
      .appendingPathComponent("cbl-multipart-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let rejects = folder.appendingPathComponent("rejects.multipart").path
    let first = try CLI.run(
      ["--pull", "--format", "multipart", "--inline", "--rejects", rejects], stdin: body)
    #expect(first.status == 1)
    #expect(first.out.split(separator: "\n").count == 3)
    #expect(
      first.stderr.contains(": error: document \"user::priya\": _attachments entry \"$.image\""))
    let again = try CLI.run(
      ["--pull", "--format", "multipart", "--inline", rejects], stdin: [])
    #expect(again.status == 1 && again.out.isEmpty)
    #expect(
      again.stderr.split(separator: "\n").map { $0.split(separator: ": error: ").last }
        == first.stderr.split(separator: "\n").filter { $0.contains(": error: ") }.map {
          $0.split(separator: ": error: ").last
        }, "the same error, read from the rejects")
  }
}
