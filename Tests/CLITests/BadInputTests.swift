import Foundation
import Testing

// SPEC.md "Bad input — a clear error, and nothing lost", with the exact messages of
// shared_decisions.md: `cbl-attachments: FILE:LINE:COLUMN: error: MESSAGE`, status 1, every
// document before the bad one written whole, nothing after it (without --keep-going).

@Suite("CLI: bad input")
struct BadInputTests {
  @Test("malformed JSON: file:line:column, the documents before it written, status 1")
  func malformedJSON() throws {
    let scratch = try Scratch()
    try scratch.write(
      "bad.json",
      "{\"a\":1}\n{\"b\":{\"@type\":\"blob\",\"digest\":\"d\"}}\n{\"c\":3,}\n{\"d\":4}\n")
    let result = try CLI.run(["--push", "bad.json"], in: scratch.directory)
    expectRun(
      result,
      stdout:
        "{\"a\":1}\n{\"b\":{\"@type\":\"blob\",\"digest\":\"d\"},\"_attachments\":{\"$.b\":{\"digest\":\"d\"}}}\n",
      stderr:
        "cbl-attachments: bad.json:3:8: error: malformed JSON: invalid object key (must be a string)\n",
      status: 1)
  }

  @Test(
    "an input that is not JSON at all says what it is: multipart, HTTP headers, compressed, HTML",
    arguments: [
      (
        Array("--77645f38\r\nContent-Type: application/json\r\n\r\n{}\r\n--77645f38--".utf8),
        "1:1",
        "not JSON: the input is a MIME multipart body (its first line is the boundary"
          + " --77645f38); read it as one, or ask the server for JSON (curl -H 'Accept:"
          + " application/json') (--format multipart)"
      ),
      (
        Array("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n{}".utf8), "1:1",
        "not JSON: the input starts with an HTTP response's headers (curl -i?); leave them out"
      ),
      (
        [0x1F, 0x8B, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03], "1:1",
        "not JSON: the input is gzip-compressed; decompress it first (zcat, or curl --compressed)"
      ),
      (
        Array("BZh91AY&SY".utf8), "1:1",
        "not JSON: the input is bzip2-compressed; decompress it first (bzcat)"
      ),
      (
        [0xEF, 0xBB, 0xBF] + Array("\n <!DOCTYPE html>\n<html>".utf8), "2:2",
        "not JSON: the input is an HTML page (an error or login page? check the URL and the"
          + " credentials)"
      ),
      // A line that only looks like a boundary is JSON's problem.
      (
        Array("--\n".utf8), "1:1",
        "malformed JSON: malformed number, a digit is required after the minus sign"
      ),
    ])
  func notJSON(input: [UInt8], position: String, message: String) throws {
    expectRun(
      try CLI.run(["--pull"], stdin: input), stdout: "",
      stderr: "cbl-attachments: <stdin>:\(position): error: \(message)\n", status: 1)
    // Only an input's first value is looked at: the same bytes later are malformed JSON.
    let later = try CLI.run(["--pull"], stdin: Array("{}\n".utf8) + input)
    #expect(later.status == 1 && !later.stderr.contains("not JSON"), "\(later)")
  }

  @Test("malformed JSON on standard input is reported as <stdin>")
  func malformedOnStdin() throws {
    let result = try CLI.run(["--pull"], stdin: Array("{\"a\":1}\n  {\"b\" 2}\n".utf8))
    #expect(result.out == "{\"a\":1}\n")
    #expect(result.stderr.hasPrefix("cbl-attachments: <stdin>:2:"), "\(result)")
    #expect(result.stderr.contains(": error: malformed JSON: "), "\(result)")
    #expect(
      result.stderr.hasSuffix("\n") && result.stderr.split(separator: "\n").count == 1, "\(result)")
    #expect(result.status == 1)
  }

  // The location is the first byte that starts no valid UTF-8 sequence: the lead byte 0xE9, whose
  // continuation byte is missing.
  @Test("invalid UTF-8 in a string")
  func invalidUTF8() throws {
    let scratch = try Scratch()
    try scratch.write(
      "latin1.json", Array("{\"ok\":true}\n{\"name\":\"caf".utf8) + [0xE9] + Array("\"}\n".utf8))
    let result = try CLI.run(["--push", "latin1.json"], in: scratch.directory)
    expectRun(
      result, stdout: "{\"ok\":true}\n",
      stderr:
        "cbl-attachments: latin1.json:2:13: error: malformed JSON: invalid UTF-8 (byte 0xE9)\n",
      status: 1)
  }

  @Test("truncated last document: named by its _id, located at the end of the input")
  func truncatedLastDocument() throws {
    let result = try CLI.run(
      ["--push"], stdin: Array("{\"a\":1}\n{\"_id\":\"x\",\"b\":[1,\n".utf8))
    expectRun(
      result, stdout: "{\"a\":1}\n",
      stderr:
        "cbl-attachments: <stdin>:3:1: error: document \"x\": malformed JSON: truncated document (the input ends inside it)\n",
      status: 1)
  }

  @Test(
    "truncated last document without a final newline: the location is a real position of the input")
  func truncatedLastDocumentNoNewline() throws {
    // The input's last line is line 2, 18 characters long: it ends at 2:19.
    let result = try CLI.run(["--push"], stdin: Array("{\"a\":1}\n{\"_id\":\"x\",\"b\":[1,".utf8))
    expectRun(
      result, stdout: "{\"a\":1}\n",
      stderr:
        "cbl-attachments: <stdin>:2:19: error: document \"x\": malformed JSON: truncated document (the input ends inside it)\n",
      status: 1)
  }

  @Test("a top-level array in lines format: not an object, with the --format list hint")
  func arrayHintsAtFormatList() throws {
    let result = try CLI.run(["--push"], stdin: Array("[{\"_id\":\"a\"},{\"_id\":\"b\"}]\n".utf8))
    expectRun(
      result, stdout: "",
      stderr:
        "cbl-attachments: <stdin>:1:1: error: document is not a JSON object (it is an array); a file holding one array of documents is read in list framing (--format list)\n",
      status: 1)
  }

  @Test("other non-objects: no hint; located at the document's first character")
  func otherNonObjects() throws {
    let cases: [(String, String)] = [
      ("\"text\"", "(it is a string)"), ("42", "(it is a number)"), ("false", "(it is a boolean)"),
      ("null", "(it is null)"),
    ]
    for (document, what) in cases {
      let result = try CLI.run(
        ["--pull"], stdin: Array("{\"a\":1}\n   \(document)\n{\"b\":2}\n".utf8))
      expectRun(
        result, stdout: "{\"a\":1}\n",
        stderr: "cbl-attachments: <stdin>:2:4: error: document is not a JSON object \(what)\n",
        status: 1)
    }
  }

  @Test("in --format list an array element that is an array gets no --format hint")
  func arrayElementInListFormat() throws {
    let result = try CLI.run(
      ["--push", "--format", "list"], stdin: Array("[{\"a\":1},\n [2]]\n".utf8))
    expectRun(
      result, stdout: "[\n{\"a\":1}\n]\n",
      stderr:
        "cbl-attachments: <stdin>:2:2: error: document is not a JSON object (it is an array)\n",
      status: 1)
  }

  @Test("duplicate top-level _attachments is rejected (push and pull), located at the second key")
  func duplicateAttachments() throws {
    let document = "{\"_id\":\"d\",\"_attachments\":{},\"_attachments\":{}}\n"
    for mode in ["--push", "--pull"] {
      let result = try CLI.run([mode], stdin: Array(document.utf8))
      expectRun(
        result, stdout: "",
        stderr:
          "cbl-attachments: <stdin>:1:30: error: document \"d\": more than one top-level \"_attachments\" member; refusing to guess which one is meant\n",
        status: 1)
    }
  }

  @Test("a document with several problems is reported once, with its first error and no warnings")
  func oneErrorPerRejectedDocument() throws {
    // Duplicate _attachments (found first), a non-object _attachments with a blob, and that blob
    // has no digest: one line only.
    let document =
      "{\"_id\":\"m\",\"_attachments\":1,\"a\":{\"@type\":\"blob\"},\"_attachments\":2}\n"
    expectRun(
      try CLI.run(["--push"], stdin: Array(document.utf8)), stdout: "",
      stderr:
        "cbl-attachments: <stdin>:1:50: error: document \"m\": more than one top-level \"_attachments\" member; refusing to guess which one is meant\n",
      status: 1)
  }

  @Test("push: non-object _attachments and blobs cannot be converted; pull passes it through")
  func attachmentsNotAnObject() throws {
    let document =
      "{\"_id\":\"s\",\"a\":{\"@type\":\"blob\",\"digest\":\"d\"},\"_attachments\":\"oops\"}\n"
    let push = try CLI.run(["--push"], stdin: Array(document.utf8))
    expectRun(
      push, stdout: "",
      stderr:
        "cbl-attachments: <stdin>:1:46: error: document \"s\": \"_attachments\" is a string, not an object, and the document has blobs: push cannot add their entries without losing data\n",
      status: 1)
    let pull = try CLI.run(["--pull"], stdin: Array(document.utf8))
    expectRun(pull, stdout: document, stderr: "", status: 0)
    // Without blobs there is nothing to add: push leaves the document alone.
    let noBlobs = try CLI.run(["--push"], stdin: Array("{\"_attachments\":\"oops\"}\n".utf8))
    expectRun(noBlobs, stdout: "{\"_attachments\":\"oops\"}\n", stderr: "", status: 0)
  }

  @Test("a blob without digest: a warning, the document still written, status 0")
  func blobWithoutDigestWarns() throws {
    let document = "{\"_id\":\"w\",\"p\":{\"@type\":\"blob\",\"length\":3}}\n"
    let result = try CLI.run(["--push"], stdin: Array(document.utf8))
    expectRun(
      result, stdout: document,
      stderr:
        "cbl-attachments: <stdin>:1:16: warning: document \"w\": blob at $.p has no string \"digest\"; it gets no _attachments entry\n",
      status: 0)
    // Warnings are for --push only.
    let pull = try CLI.run(["--pull"], stdin: Array(document.utf8))
    expectRun(pull, stdout: document, stderr: "", status: 0)
  }

  @Test("--strict turns the warning into an error: the document is rejected, status 1")
  func strictMakesWarningsErrors() throws {
    let input =
      "{\"_id\":\"ok\"}\n{\"_id\":\"w\",\"p\":{\"@type\":\"blob\",\"length\":3}}\n{\"_id\":\"after\"}\n"
    let message =
      "cbl-attachments: <stdin>:2:16: error: document \"w\": blob at $.p has no string \"digest\"; it gets no _attachments entry\n"
    let strict = try CLI.run(["--push", "--strict"], stdin: Array(input.utf8))
    expectRun(strict, stdout: "{\"_id\":\"ok\"}\n", stderr: message, status: 1)
    let keepGoing = try CLI.run(["--push", "--strict", "-k"], stdin: Array(input.utf8))
    expectRun(
      keepGoing, stdout: "{\"_id\":\"ok\"}\n{\"_id\":\"after\"}\n",
      stderr: message.dropLast() + " (skipped 2:1 to 2:43)\n", status: 1)
  }

  @Test("by default the first bad document stops the whole run, later files included")
  func stopsAtFirstBadDocument() throws {
    let scratch = try Scratch()
    try scratch.write("one.json", "{\"n\":1}\n[2]\n{\"n\":3}\n")
    try scratch.write("two.json", "{\"n\":4}\n")
    let result = try CLI.run(["--pull", "one.json", "two.json"], in: scratch.directory)
    expectRun(
      result, stdout: "{\"n\":1}\n",
      stderr:
        "cbl-attachments: one.json:2:1: error: document is not a JSON object (it is an array); a file holding one array of documents is read in list framing (--format list)\n",
      status: 1)
  }

  @Test("a file that cannot be opened: status 2, the other files still processed")
  func missingFile() throws {
    let scratch = try Scratch()
    try scratch.write("a.json", "{\"a\":{\"@type\":\"blob\",\"digest\":\"x\"}}\n")
    try scratch.write("b.json", "{\"b\":2}\n")
    let result = try CLI.run(["--push", "a.json", "missing.json", "b.json"], in: scratch.directory)
    expectRun(
      result,
      stdout:
        "{\"a\":{\"@type\":\"blob\",\"digest\":\"x\"},\"_attachments\":{\"$.a\":{\"digest\":\"x\"}}}\n{\"b\":2}\n",
      stderr: "cbl-attachments: missing.json: error: cannot open: No such file or directory\n",
      status: 2)
  }

  @Test("a directory as input: status 2, the other files still processed")
  func directoryAsInput() throws {
    let scratch = try Scratch()
    try FileManager.default.createDirectory(
      at: scratch.url("dir"), withIntermediateDirectories: false)
    try scratch.write("a.json", "{\"a\":1}\n")
    try scratch.write("b.json", "{\"b\":2}\n")
    let result = try CLI.run(["--pull", "a.json", "dir", "b.json"], in: scratch.directory)
    expectRun(
      result, stdout: "{\"a\":1}\n{\"b\":2}\n",
      stderr: "cbl-attachments: dir: error: cannot read: Is a directory\n", status: 2)
  }

  @Test(
    "a file without read permission: status 2, the other files still processed",
    .enabled(if: getuid() != 0, "root reads every file"))
  func unreadableFile() throws {
    let scratch = try Scratch()
    try scratch.write("a.json", "{\"a\":1}\n")
    try scratch.write("secret.json", "{\"s\":1}\n")
    try FileManager.default.setAttributes(
      [.posixPermissions: 0o000], ofItemAtPath: scratch.url("secret.json").path)
    let result = try CLI.run(["--pull", "secret.json", "a.json"], in: scratch.directory)
    expectRun(
      result, stdout: "{\"a\":1}\n",
      stderr: "cbl-attachments: secret.json: error: cannot open: Permission denied\n", status: 2)
  }

  @Test("an unreadable input and a rejected document: the higher status, 2, wins")
  func unreadableAndRejected() throws {
    let scratch = try Scratch()
    try scratch.write("bad.json", "\"x\"\n{\"ok\":1}\n")
    let result = try CLI.run(["--pull", "-k", "missing.json", "bad.json"], in: scratch.directory)
    expectRun(
      result, stdout: "{\"ok\":1}\n",
      stderr: """
        cbl-attachments: missing.json: error: cannot open: No such file or directory
        cbl-attachments: bad.json:1:1: error: document is not a JSON object (it is a string) (skipped 1:1 to 1:3)

        """,
      status: 2)
  }
}
