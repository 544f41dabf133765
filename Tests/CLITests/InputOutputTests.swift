import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

// SPEC.md "Input and output framing", "--keep-going / --rejects: nothing lost", closed pipes,
// write failures and --unbuffered, run on the real executable.

private let blobDocument = "{\"_id\":\"b\",\"a\":{\"@type\":\"blob\",\"digest\":\"d\"}}\n"
private let blobPushed =
  "{\"_id\":\"b\",\"a\":{\"@type\":\"blob\",\"digest\":\"d\"},\"_attachments\":{\"$.a\":{\"digest\":\"d\"}}}\n"

/// A large NDJSON input: `count` documents with one blob each.
private func bigInput(_ count: Int) -> String {
  var text = ""
  text.reserveCapacity(count * 80)
  for index in 0..<count {
    text +=
      "{\"_id\":\"doc-\(index)\",\"photo\":{\"@type\":\"blob\",\"digest\":\"sha1-\(index)\",\"length\":\(index)}}\n"
  }
  return text
}

private func pushedBig(_ index: Int) -> String {
  "{\"_id\":\"doc-\(index)\",\"photo\":{\"@type\":\"blob\",\"digest\":\"sha1-\(index)\",\"length\":\(index)},"
    + "\"_attachments\":{\"$.photo\":{\"digest\":\"sha1-\(index)\",\"length\":\(index)}}}\n"
}

@Suite("CLI: inputs and outputs")
struct InputOutputTests {
  @Test("standard input when there is no file operand")
  func stdinByDefault() throws {
    expectRun(
      try CLI.run(["--push"], stdin: Array(blobDocument.utf8)), stdout: blobPushed, stderr: "",
      status: 0)
    expectRun(
      try CLI.run(["--pull"], stdin: Array(blobPushed.utf8)), stdout: blobDocument, stderr: "",
      status: 0)
  }

  @Test("`-` reads standard input, in its place among the files; messages name it <stdin>")
  func dashIsStdin() throws {
    let scratch = try Scratch()
    try scratch.write("a.json", "{\"n\":\"a\"}\n")
    try scratch.write("b.json", "{\"n\":\"b\"}\n")
    let result = try CLI.run(
      ["--pull", "-k", "a.json", "-", "b.json"], stdin: Array("{\"n\":\"stdin\"}\n7\n".utf8),
      in: scratch.directory)
    expectRun(
      result, stdout: "{\"n\":\"a\"}\n{\"n\":\"stdin\"}\n{\"n\":\"b\"}\n",
      stderr:
        "cbl-attachments: <stdin>:2:1: error: document is not a JSON object (it is a number) (skipped 2:1 to 2:1)\n",
      status: 1)
  }

  @Test("several files are converted in command-line order; line numbers restart per file")
  func severalFilesInOrder() throws {
    let scratch = try Scratch()
    try scratch.write(
      "1.json", "{\"f\":1,\"a\":{\"@type\":\"blob\",\"digest\":\"x\"}}\n{\"f\":1.5}\n")
    try scratch.write("2.json", "\n{\"f\":2,\"p\":{\"@type\":\"blob\"}}\n")
    try scratch.write("3.json", "{\"f\":3}")
    let result = try CLI.run(["--push", "3.json", "1.json", "2.json"], in: scratch.directory)
    expectRun(
      result,
      stdout: """
        {"f":3}
        {"f":1,"a":{"@type":"blob","digest":"x"},"_attachments":{"$.a":{"digest":"x"}}}
        {"f":1.5}
        {"f":2,"p":{"@type":"blob"}}

        """,
      stderr:
        "cbl-attachments: 2.json:2:12: warning: blob at $.p has no string \"digest\"; it gets no _attachments entry\n",
      status: 0)
  }

  @Test("--format list: several list inputs give one output array, one element per line")
  func listFormatMergesInputs() throws {
    let scratch = try Scratch()
    try scratch.write(
      "l1.json",
      "[\n  {\"_id\":\"1\",\"_attachments\":{\"$.a\":{\"digest\":\"d\"}},\"a\":{\"@type\":\"blob\",\"digest\":\"d\"}},\n  {\"_id\":\"2\"}\n]\n"
    )
    try scratch.write("l2.json", "[]")
    try scratch.write("l3.json", "[{\"_id\":\"3\"}]")
    let result = try CLI.run(
      ["--pull", "--format", "list", "l1.json", "l2.json", "l3.json"], in: scratch.directory)
    expectRun(
      result,
      stdout:
        "[\n{\"_id\":\"1\",\"a\":{\"@type\":\"blob\",\"digest\":\"d\"}},\n{\"_id\":\"2\"},\n{\"_id\":\"3\"}\n]\n",
      stderr: "", status: 0)
    let empty = try CLI.run(["--push", "--format=list"], stdin: Array("[ ]\n".utf8))
    expectRun(empty, stdout: "[\n]\n", stderr: "", status: 0)
  }

  @Test("an empty input is a stream of no documents: no output, no error, status 0")
  func emptyInput() throws {
    expectRun(try CLI.run(["--push"], stdin: []), stdout: "", stderr: "", status: 0)
    expectRun(
      try CLI.run(["--pull"], stdin: Array("\n \r\n".utf8)), stdout: "", stderr: "", status: 0)
    let scratch = try Scratch()
    try scratch.write("empty.json", "")
    try scratch.write("one.json", "{\"a\":1}\n")
    expectRun(
      try CLI.run(["--push", "empty.json", "one.json"], in: scratch.directory),
      stdout: "{\"a\":1}\n",
      stderr: "", status: 0)
  }

  @Test(
    "--keep-going and --rejects FILE lose nothing: good documents on stdout, bad ones verbatim in FILE"
  )
  func keepGoingAndRejects() throws {
    let scratch = try Scratch()
    try scratch.write(
      "in.json",
      """
      {"_id":"1"}
      [1]
      {"_id":"2","a":{"@type":"blob","digest":"d"}}
      {"_id":"3","_attachments":{},"_attachments":{}}
      {"_id":"4","x":
      {"_id":"5"}
        "str"\t
      {"_id":"6"}

      """)
    try scratch.write("more.json", "{\"_id\":\"7\"}\nnull\n")
    let expectedStdout = """
      {"_id":"1"}
      {"_id":"2","a":{"@type":"blob","digest":"d"},"_attachments":{"$.a":{"digest":"d"}}}
      {"_id":"5"}
      {"_id":"6"}
      {"_id":"7"}

      """
    let expectedStderr = """
      cbl-attachments: in.json:2:1: error: document is not a JSON object (it is an array); a file holding one array of documents is read in list framing (--format list)
      cbl-attachments: in.json:4:30: error: document "3": more than one top-level "_attachments" member; refusing to guess which one is meant
      cbl-attachments: in.json:5:16: error: document "4": malformed JSON: the document is cut short at the end of its line (a truncated record?); the next line starts a new document
      cbl-attachments: in.json:7:3: error: document is not a JSON object (it is a string)
      cbl-attachments: more.json:2:1: error: document is not a JSON object (it is null)

      """
    // Without --rejects, each error says what was skipped.
    let skippedStderr = """
      cbl-attachments: in.json:2:1: error: document is not a JSON object (it is an array); a file holding one array of documents is read in list framing (skipped 2:1 to 2:3) (--format list)
      cbl-attachments: in.json:4:30: error: document "3": more than one top-level "_attachments" member; refusing to guess which one is meant (skipped 4:1 to 4:47)
      cbl-attachments: in.json:5:16: error: document "4": malformed JSON: the document is cut short at the end of its line (a truncated record?); the next line starts a new document (skipped 5:1 to 5:15)
      cbl-attachments: in.json:7:3: error: document is not a JSON object (it is a string) (skipped 7:3 to 7:7)
      cbl-attachments: more.json:2:1: error: document is not a JSON object (it is null) (skipped 2:1 to 2:4)

      """
    for arguments in [
      ["-k"], ["--keep-going"], ["--rejects", "rejects.txt"], ["--rejects=rejects.txt", "-k"],
    ] {
      let result = try CLI.run(
        ["--push"] + arguments + ["in.json", "more.json"], in: scratch.directory)
      let savesRejects = arguments.contains(where: { $0.hasPrefix("--rejects") })
      expectRun(
        result, stdout: expectedStdout, stderr: savesRejects ? expectedStderr : skippedStderr,
        status: 1)
      if savesRejects {
        #expect(
          try scratch.read("rejects.txt")
            == "[1]\n{\"_id\":\"3\",\"_attachments\":{},\"_attachments\":{}}\n{\"_id\":\"4\",\"x\":\n\"str\"\nnull\n",
          "rejects file for \(arguments)")
        try FileManager.default.removeItem(at: scratch.url("rejects.txt"))
      }
    }
  }

  @Test("--keep-going: a record cut short after a comma loses only its own line")
  func truncatedRecordAfterComma() throws {
    // shared_decisions.md: after malformed JSON, processing resumes at the first line after the
    // bad document's first line that starts with `{`. Here that is line 2, a good document.
    let scratch = try Scratch()
    try scratch.write(
      "in.json", "{\"_id\":\"cut\",\"a\":1,\n{\"_id\":\"next\"}\n  \"str\"\n{\"_id\":\"last\"}\n")
    let result = try CLI.run(["--pull", "--rejects", "bad.txt", "in.json"], in: scratch.directory)
    #expect(result.out == "{\"_id\":\"next\"}\n{\"_id\":\"last\"}\n", "\(result)")
    #expect(result.status == 1 && !result.signaled)
    #expect(try scratch.read("bad.txt") == "{\"_id\":\"cut\",\"a\":1,\n\"str\"\n")
    // Two bad documents, two errors; the wording and location of the first (found where the next
    // record starts) are the engine's, the second is exact.
    let lines = result.stderr.split(separator: "\n").map(String.init)
    #expect(lines.count == 2, "\(result)")
    #expect(lines.first?.hasPrefix("cbl-attachments: in.json:") == true)
    #expect(
      lines.first?.contains(": error: document \"cut\": malformed JSON: ") == true, "\(result)")
    #expect(
      lines.last
        == "cbl-attachments: in.json:3:3: error: document is not a JSON object (it is a string)")
  }

  @Test("--rejects in --format list saves the bad elements")
  func rejectsInListFormat() throws {
    let scratch = try Scratch()
    try scratch.write(
      "list.json",
      "[{\"a\":1},\n  {\"_attachments\":1,\n   \"_attachments\":2},\n  \"s\",{\"b\":2}]\n")
    let result = try CLI.run(
      ["--pull", "--format", "list", "--rejects", "bad.txt", "list.json"], in: scratch.directory)
    expectRun(
      result, stdout: "[\n{\"a\":1},\n{\"b\":2}\n]\n",
      stderr: """
        cbl-attachments: list.json:3:4: error: more than one top-level "_attachments" member; refusing to guess which one is meant
        cbl-attachments: list.json:4:3: error: document is not a JSON object (it is a string)

        """,
      status: 1)
    #expect(try scratch.read("bad.txt") == "{\"_attachments\":1,\n   \"_attachments\":2}\n\"s\"\n")
  }

  @Test("a closed output pipe (| head -1) ends the program silently, killed by SIGPIPE like cat")
  func closedPipe() throws {
    let scratch = try Scratch()
    try scratch.write("big.json", bigInput(40_000))
    let result = try CLI.shell(
      "(\"$EXE\" --push big.json 2>err.txt; echo $? >status.txt) | head -1", in: scratch.directory)
    expectRun(result, stdout: pushedBig(0), stderr: "", status: 0)
    #expect(
      try scratch.read("status.txt") == "141\n", "cbl-attachments should die of SIGPIPE (128+13)")
    #expect(try scratch.read("err.txt") == "", "nothing on standard error")
  }

  @Test("a full disk (> /dev/full): status 2 and the write-failed message")
  func fullDisk() throws {
    let scratch = try Scratch()
    try scratch.write("small.json", blobDocument)
    try scratch.write("big.json", bigInput(5_000))
    let message = "cbl-attachments: <stdout>: error: write failed: No space left on device\n"
    for file in ["small.json", "big.json"] {
      let direct = try CLI.run(["--push", file], in: scratch.directory, stdoutPath: "/dev/full")
      #expect(direct.stderr == message, "\(file): \(direct)")
      #expect(direct.status == 2 && !direct.signaled, "\(file): \(direct)")
    }
    try scratch.write("list.json", "[" + blobDocument + "]")
    let viaShell = try CLI.shell(
      "\"$EXE\" --pull --format list list.json > /dev/full", in: scratch.directory)
    expectRun(viaShell, stdout: "", stderr: message, status: 2)
  }

  @Test("--unbuffered writes each document as soon as it is read, before the input ends")
  func unbuffered() throws {
    let (process, input, output, errors) = try CLI.start(["--push", "--unbuffered"])
    defer { if process.isRunning { process.terminate() } }
    let writer = input.fileHandleForWriting.fileDescriptor
    let reader = output.fileHandleForReading.fileDescriptor
    func send(_ text: String) {
      #expect(process.isRunning, "the program ended before its input did")
      guard process.isRunning else { return }
      let bytes = Array(text.utf8)
      let written = bytes.withUnsafeBytes { Glibc.write(writer, $0.baseAddress, $0.count) }
      #expect(written == bytes.count)
    }
    /// Reads one line, waiting at most 10 minutes (a guard against a hang, not a speed test).
    func receiveLine() -> String {
      var line: [UInt8] = []
      let deadline = Date().addingTimeInterval(600)
      while line.last != 0x0A && Date() < deadline {
        var descriptor = pollfd(fd: reader, events: Int16(POLLIN), revents: 0)
        guard poll(&descriptor, 1, 200) > 0 else { continue }
        var byte: UInt8 = 0
        guard Glibc.read(reader, &byte, 1) == 1 else { break }
        line.append(byte)
      }
      return String(decoding: line, as: UTF8.self)
    }

    send("{\"first\":1}\n")
    #expect(receiveLine() == "{\"first\":1}\n")
    send(blobDocument)
    #expect(receiveLine() == blobPushed)
    send("{\"third\":\n3}\n")
    #expect(receiveLine() == "{\"third\":3}\n")
    try input.fileHandleForWriting.close()
    process.waitUntilExit()
    #expect(process.terminationReason == .exit && process.terminationStatus == 0)
    let rest = output.fileHandleForReading.readDataToEndOfFile()
    #expect(rest.isEmpty, "no more output: \(String(decoding: rest, as: UTF8.self))")
    let stderr = errors.fileHandleForReading.readDataToEndOfFile()
    #expect(stderr.isEmpty, "\(String(decoding: stderr, as: UTF8.self))")
  }

  @Test("pretty-printed, CRLF and BOM input: compact NDJSON out")
  func framingNormalised() throws {
    let input: [UInt8] =
      [0xEF, 0xBB, 0xBF]
      + Array(
        "{\r\n  \"a\" : [ 1.50 , \"\\u00e9\" ]\r\n}\r\n\r\n{\"b\":{\"@type\":\"blob\",\"digest\":\"d\"}}"
          .utf8)
    expectRun(
      try CLI.run(["--push"], stdin: input),
      stdout:
        "{\"a\":[1.50,\"\\u00e9\"]}\n{\"b\":{\"@type\":\"blob\",\"digest\":\"d\"},\"_attachments\":{\"$.b\":{\"digest\":\"d\"}}}\n",
      stderr: "", status: 0)
  }

  @Test(
    "the other options do not change the output: --jobs, --naming jsonpath, --stats on stderr only")
  func optionsKeepOutput() throws {
    let scratch = try Scratch()
    try scratch.write("big.json", bigInput(3_000))
    let expected = (0..<3_000).map(pushedBig).joined()
    for arguments in [["-j", "1"], ["--jobs=4"], ["-j3"], ["--naming", "jsonpath"]] {
      expectRun(
        try CLI.run(["--push"] + arguments + ["big.json"], in: scratch.directory), stdout: expected,
        stderr: "", status: 0)
    }
    let stats = try CLI.run(["--push", "--stats", "big.json"], in: scratch.directory)
    #expect(stats.out == expected)
    #expect(stats.status == 0)
    #expect(
      stats.stderr.hasPrefix("cbl-attachments: 3000 documents, 3000 blobs, 3000 entries added"),
      "\(stats.stderr)")
  }
}
