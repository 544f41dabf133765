import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

// SPEC.md, "Envelopes": the real APIs' bodies on the command line. Exact standard output,
// standard error and status, on the real executable.

private let changesBody = """
  {"results":[
  {"seq":1,"id":"a","changes":[{"rev":"1-a"}],"doc":{"_id":"a","p":{"@type":"blob","digest":"sha1-P"}}},
  {"seq":2,"id":"b","changes":[{"rev":"1-b"}],"doc":{"_id":"b","_attachments":1,"_attachments":2}},
  {"seq":3,"id":"c","changes":[{"rev":"1-c"}],"doc":{"_id":"c"}}
  ],
  "last_seq":"3"}

  """

private let changesPushed =
  #"{"results":[{"seq":1,"id":"a","changes":[{"rev":"1-a"}],"doc":{"_id":"a","p":{"@type":"blob","digest":"sha1-P"},"_attachments":{"$.p":{"digest":"sha1-P"}}}},{"seq":3,"id":"c","changes":[{"rev":"1-c"}],"doc":{"_id":"c"}}],"last_seq":"3"}"#
  + "\n"

private let duplicateError =
  "cbl-attachments: changes.json:3:79: error: document \"b\": more than one top-level"
  + " \"_attachments\" member; refusing to guess which one is meant\n"

@Suite("CLI: envelopes (--format changes|all-docs|bulk-docs|bulk-get, --docs, --bulk-docs)")
struct EnvelopeTests {
  @Test(
    "a rejected row leaves with its comma: valid JSON out, the row's text in --rejects, status 1",
    arguments: [["-j", "1"], ["-j", "2"], ["--unbuffered"]])
  func rejectedRow(_ extra: [String]) throws {
    let scratch = try Scratch()
    try scratch.write("changes.json", changesBody)
    let result = try CLI.run(
      ["--push", "--format", "changes", "--rejects", "rejects.txt"] + extra + ["changes.json"],
      in: scratch.directory)
    expectRun(result, stdout: changesPushed, stderr: duplicateError, status: 1)
    #expect(
      try scratch.read("rejects.txt")
        == #"{"seq":2,"id":"b","changes":[{"rev":"1-b"}],"doc":{"_id":"b","_attachments":1,"_attachments":2}}"#
        + "\n")
    #expect(
      (try? JSONSerialization.jsonObject(with: Data(result.stdout))) != nil,
      "the envelope stays valid JSON")
  }

  @Test(
    "a broken member off the path keeps its key: output plus rejects is the input",
    arguments: [["-j", "1"], ["-j", "2"]])
  func brokenMemberOffPath(_ extra: [String]) throws {
    let scratch = try Scratch()
    let rows = #"{"results":[{"seq":1,"id":"a","doc":{"_id":"a"}}]"#
    let cases: [(input: String, output: String, rejects: String, stderr: String)] = [
      // After the rows, an array cut short; an object with a bad literal before them.
      (
        rows + #","pending":[{"id":"z","note":"only copy"}"#, rows + "}\n",
        #""pending":[{"id":"z","note":"only copy"}"# + "\n",
        "changes.json:1:91: error: malformed JSON: truncated envelope (the input ends inside it);"
          + " the rest of the input (1:51 to 1:90) is not converted\n"
      ),
      (
        #"{"pre":{"k":[1, bad]},"results":[{"doc":{"_id":"a"}}]}"#, "{}\n",
        #""pre":{"k":[1, bad]},"results":[{"doc":{"_id":"a"}}]}"# + "\n",
        "changes.json:1:17: error: malformed JSON: invalid character; the rest of the input (1:2"
          + " to 1:54) is not converted\n"
      ),
    ]
    for (input, output, rejects, stderr) in cases {
      try scratch.write("changes.json", input)
      let result = try CLI.run(
        ["--pull", "--format", "changes", "--rejects", "rejects.txt"] + extra + ["changes.json"],
        in: scratch.directory)
      expectRun(result, stdout: output, stderr: "cbl-attachments: " + stderr, status: 1)
      #expect(try scratch.read("rejects.txt") == rejects)
    }
  }

  @Test("-k without --rejects: the extent of the row taken out is reported as skipped")
  func skippedRow() throws {
    let scratch = try Scratch()
    try scratch.write("changes.json", changesBody)
    let result = try CLI.run(
      ["--push", "--format=changes", "-k", "changes.json"], in: scratch.directory)
    expectRun(
      result, stdout: changesPushed,
      stderr: String(duplicateError.dropLast()) + " (skipped 3:1 to 3:96)\n", status: 1)
  }

  @Test("without -k a rejected row stops the run with the envelope closed before it")
  func stopCloses() throws {
    let scratch = try Scratch()
    try scratch.write("changes.json", changesBody)
    expectRun(
      try CLI.run(["--push", "--format", "changes", "changes.json"], in: scratch.directory),
      stdout:
        #"{"results":[{"seq":1,"id":"a","changes":[{"rev":"1-a"}],"doc":{"_id":"a","p":{"@type":"blob","digest":"sha1-P"},"_attachments":{"$.p":{"digest":"sha1-P"}}}}]}"#
        + "\n", stderr: duplicateError, status: 1)
  }

  @Test(
    "two arrays on the path: a stop closes the envelope before the innermost element, keeping the elements before it",
    arguments: [["-j", "1"], ["-j", "2"]])
  func stopClosesInnermost(_ extra: [String]) throws {
    let scratch = try Scratch()
    try scratch.write(
      "bulk.json",
      #"{"results":[{"id":"z","docs":[{"ok":{"_id":"z"}}]},{"id":"a","docs":[{"ok":{"_id":"a"}},{"ok":{"_id":"b"}},{"ok":5},{"ok":{"_id":"c"}}]}]}"#
        + "\n")
    let notAnObject =
      "cbl-attachments: bulk.json:1:114: error: document is not a JSON object (it is a number)\n"
    expectRun(
      try CLI.run(
        ["--push", "--format", "bulk-get"] + extra + ["bulk.json"], in: scratch.directory),
      stdout:
        #"{"results":[{"id":"z","docs":[{"ok":{"_id":"z"}}]},{"id":"a","docs":[{"ok":{"_id":"a"}},{"ok":{"_id":"b"}}]}]}"#
        + "\n", stderr: notAnObject, status: 1)
    // The same documents as `_bulk_docs` bodies: every one before the bad one is written.
    expectRun(
      try CLI.run(
        ["--push", "--format", "bulk-get", "--bulk-docs", "10"] + extra + ["bulk.json"],
        in: scratch.directory),
      stdout: #"{"docs":[{"_id":"z"},{"_id":"a"},{"_id":"b"}]}"# + "\n", stderr: notAnObject,
      status: 1)
    // Documents that are the inner array's elements themselves.
    try scratch.write(
      "nested.json", #"{"x":[[{"_id":"a"},{"_id":"b"}],[{"_id":"c"},5,{"_id":"d"}]]}"# + "\n")
    expectRun(
      try CLI.run(["--push", "--docs", ".x[][]"] + extra + ["nested.json"], in: scratch.directory),
      stdout: #"{"x":[[{"_id":"a"},{"_id":"b"}],[{"_id":"c"}]]}"# + "\n",
      stderr:
        "cbl-attachments: nested.json:1:46: error: document is not a JSON object (it is a number)\n",
      status: 1)
  }

  @Test(
    "two arrays on the path: a malformed envelope is closed after the innermost complete element, the rest rejected from the next",
    arguments: [["-j", "1"], ["-j", "2"], ["-k"]])
  func malformedClosesInnermost(_ extra: [String]) throws {
    let scratch = try Scratch()
    try scratch.write(
      "bulk.json",
      "{\"results\":[{\"id\":\"a\",\"docs\":[\n  {\"ok\":{\"_id\":\"a\"}},\n  {\"ok\":{\"_id\":\"b\",\n"
    )
    let result = try CLI.run(
      ["--push", "--format", "bulk-get", "--rejects", "rejects.txt"] + extra + ["bulk.json"],
      in: scratch.directory)
    expectRun(
      result, stdout: #"{"results":[{"id":"a","docs":[{"ok":{"_id":"a"}}]}]}"# + "\n",
      stderr:
        "cbl-attachments: bulk.json:4:1: error: document \"b\": malformed JSON: truncated document"
        + " (the input ends inside it); the rest of the input (3:3 to 3:19) is not converted\n",
      status: 1)
    #expect(try scratch.read("rejects.txt") == #"{"ok":{"_id":"b","# + "\n")
  }

  @Test(
    "two arrays on the path in list framing: the merged list stays one valid array across inputs",
    arguments: [["-j", "1"], ["-j", "2"]])
  func listClosesInnermost(_ extra: [String]) throws {
    let scratch = try Scratch()
    try scratch.write("l1.json", #"[{"k":[{"_id":"a"},{"_id":"b"},5,{"_id":"c"}]}]"# + "\n")
    try scratch.write("l2.json", #"[{"k":[{"_id":"d"}]}]"# + "\n")
    try scratch.write("l3.json", #"[{"k":[{"_id":"a"},{"_id":"b"}"#)
    // A stop in the first element: it is closed after b, and the list closed once.
    expectRun(
      try CLI.run(
        ["--push", "--format", "list", "--docs", ".k[]"] + extra + ["l1.json", "l2.json"],
        in: scratch.directory),
      stdout: "[\n" + #"{"k":[{"_id":"a"},{"_id":"b"}]}"# + "\n]\n",
      stderr:
        "cbl-attachments: l1.json:1:32: error: document is not a JSON object (it is a number)\n",
      status: 1)
    // An input cut short in its first element, then another input: one list, both elements.
    expectRun(
      try CLI.run(
        ["--push", "--format", "list", "--docs", ".k[]", "-k"] + extra + ["l3.json", "l2.json"],
        in: scratch.directory),
      stdout: "[\n" + #"{"k":[{"_id":"a"},{"_id":"b"}]}"# + ",\n" + #"{"k":[{"_id":"d"}]}"#
        + "\n]\n",
      stderr:
        "cbl-attachments: l3.json:1:31: error: malformed JSON: truncated list (the input ends"
        + " inside the array)\n",
      status: 1)
  }

  @Test(
    "two arrays on the path, --list: what is not converted starts after the last complete inner element"
  )
  func rowsCloseInnermost() throws {
    let scratch = try Scratch()
    try scratch.write(
      "bulk.json",
      #"{"results":[{"id":"a","docs":[{"ok":{"_id":"a","b":{"@type":"blob","digest":"sha1-A","length":1}}},{"ok":{"_id":"b","#
    )
    let result = try CLI.run(
      ["--list", "--format", "bulk-get", "--rejects", "rejects.txt", "bulk.json"],
      in: scratch.directory)
    expectRun(
      result,
      stdout:
        #"{"id":"a","line":1,"kind":"blob","name":"$.b","pointer":"/b","digest":"sha1-A","length":1,"content_type":null,"path":".results[0].docs[0].ok"}"#
        + "\n",
      stderr:
        "cbl-attachments: bulk.json:1:117: error: document \"b\": malformed JSON: truncated document"
        + " (the input ends inside it); the rest of the input (1:100 to 1:116) is not converted\n",
      status: 1)
    // Document a was listed; only what follows it is rejected.
    #expect(try scratch.read("rejects.txt") == #"{"ok":{"_id":"b","# + "\n")
  }

  @Test("-k: a unit rejected inside a unit, then malformed input: its error and text are kept")
  func rejectedInnerUnitThenMalformed() throws {
    let scratch = try Scratch()
    try scratch.write(
      "bulk.json",
      #"{"results":[{"id":"a","docs":[{"ok":{"_id":"a"}},{"ok":{"_id":"b","_attachments":1,"_attachments":2}},{"ok":{"_id":"c"}},{"ok":{"_id":"d","#
        + "\n")
    let result = try CLI.run(
      ["--push", "--format", "bulk-get", "-k", "--rejects", "rejects.txt", "bulk.json"],
      in: scratch.directory)
    expectRun(
      result,
      stdout: #"{"results":[{"id":"a","docs":[{"ok":{"_id":"a"}},{"ok":{"_id":"c"}}]}]}"# + "\n",
      stderr:
        "cbl-attachments: bulk.json:1:84: error: document \"b\": more than one top-level"
        + " \"_attachments\" member; refusing to guess which one is meant\n"
        + "cbl-attachments: bulk.json:2:1: error: document \"d\": malformed JSON: truncated"
        + " document (the input ends inside it); the rest of the input (1:122 to 1:138) is not"
        + " converted\n",
      status: 1)
    #expect(
      try scratch.read("rejects.txt")
        == #"{"ok":{"_id":"b","_attachments":1,"_attachments":2}}"# + "\n"
        + #"{"ok":{"_id":"d","# + "\n")
  }

  @Test("an input where the path finds no document gets one warning; --strict makes it status 1")
  func noDocument() throws {
    let body = Array("{\"results\":[],\"last_seq\":\"0\"}\n".utf8)
    expectRun(
      try CLI.run(["--pull", "--format", "changes"], stdin: body),
      stdout: "{\"results\":[],\"last_seq\":\"0\"}\n",
      stderr: "cbl-attachments: <stdin>:1:1: warning: no document at .results[].doc\n", status: 0)
    expectRun(
      try CLI.run(["--pull", "--docs", ".rows[].doc", "--strict"], stdin: body),
      stdout: "{\"results\":[],\"last_seq\":\"0\"}\n",
      stderr: "cbl-attachments: <stdin>:1:1: error: no document at .rows[].doc: no input value has"
        + " a \"rows\" member; documents one after another are read in lines framing (--format lines)\n",
      status: 1)
  }

  @Test("documents one after another read as an envelope: the warning says the path never matched")
  func documentsReadAsEnvelope() throws {
    let dump = Array(
      "{\"_id\":\"a\",\"f\":{\"@type\":\"blob\",\"digest\":\"sha1-x\"}}\n{\"_id\":\"b\"}\n".utf8)
    let hint = "; documents one after another are read in lines framing (--format lines)\n"
    for jobs in ["1", "2"] {
      expectRun(
        try CLI.run(["--push", "--format", "changes", "-j", jobs], stdin: dump),
        stdout: String(decoding: dump, as: UTF8.self),
        stderr: "cbl-attachments: <stdin>:1:1: warning: no document at .results[].doc: no input"
          + " value has a \"results\" member" + hint, status: 0)
    }
    // No input value at all, or list framing (its elements are where the path starts): the
    // warning alone, with nothing to suggest.
    expectRun(
      try CLI.run(["--push", "--format", "changes"], stdin: Array(" \n".utf8)), stdout: "",
      stderr: "cbl-attachments: <stdin>:1:1: warning: no document at .results[].doc\n", status: 0)
    expectRun(
      try CLI.run(
        ["--push", "--format", "list", "--docs", ".doc"], stdin: Array("[{\"a\":1}]".utf8)),
      stdout: "[\n{\"a\":1}\n]\n",
      stderr: "cbl-attachments: <stdin>:1:1: warning: no document at .doc\n", status: 0)
    expectRun(
      try CLI.run(["--pull", "--docs", ".[].doc", "--strict"], stdin: dump),
      stdout: String(decoding: dump, as: UTF8.self),
      stderr: "cbl-attachments: <stdin>:1:1: error: no document at .[].doc: no input value is an"
        + " array" + hint, status: 1)
  }

  @Test("--pull --bulk-docs warns that blob-only attachments are lost in Sync Gateway")
  func pullIntoBulkDocs() throws {
    let warning =
      "--pull --bulk-docs writes documents without the _attachments entries of their blobs;"
      + " Sync Gateway keeps no attachment that is only a blob, so those documents lose their"
      + " attachments there (push them first)\n"
    let input = Array("{\"_id\":\"a\"}\n".utf8)
    expectRun(
      try CLI.run(["--pull", "--bulk-docs", "10"], stdin: input),
      stdout: "{\"docs\":[{\"_id\":\"a\"}]}\n", stderr: "cbl-attachments: warning: " + warning,
      status: 0)
    expectRun(
      try CLI.run(["--pull", "--bulk-docs", "10", "--strict"], stdin: input),
      stdout: "{\"docs\":[{\"_id\":\"a\"}]}\n", stderr: "cbl-attachments: error: " + warning,
      status: 1)
  }

  @Test(
    "--bulk-docs N: every body parses, holds each document once and in order, N long but the last",
    arguments: [1, 2, 3, 7, 50])
  func bulkDocsBodies(_ perBody: Int) throws {
    var random = SplitMix64(seed: UInt64(perBody))
    var lines: [String] = []
    for index in 0..<(20 + Int(random.next() % 30)) {
      let blob = random.next() % 2 == 0 ? #","b":{"@type":"blob","digest":"sha1-\#(index)"}"# : ""
      lines.append(#"{"_id":"doc-\#(index)","n":12345678901234567890123\#(blob)}"#)
    }
    let scratch = try Scratch()
    try scratch.write("docs.ndjson", lines.joined(separator: "\n") + "\n")
    let plain = try CLI.run(["--push", "docs.ndjson"], in: scratch.directory)
    for extra in [["-j", "1"], ["-j", "2"], ["--new-edits", "false"]] {
      let result = try CLI.run(
        ["--push", "--bulk-docs", String(perBody)] + extra + ["docs.ndjson"],
        in: scratch.directory)
      #expect(result.status == 0 && result.stderr.isEmpty, "\(result)")
      let bodies = result.out.split(separator: "\n").map(String.init)
      #expect(bodies.count == (lines.count + perBody - 1) / perBody)
      var documents: [String] = []
      for (index, body) in bodies.enumerated() {
        let parsed = try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any]
        let docs = parsed?["docs"] as? [Any]
        #expect(
          docs?.count == (index == bodies.count - 1 ? lines.count - index * perBody : perBody))
        if extra.first == "--new-edits" {
          #expect(parsed?["new_edits"] as? Bool == false)
          #expect(body.hasSuffix(#"],"new_edits":false}"#))
        } else {
          #expect(parsed?["new_edits"] == nil)
        }
        // The documents as written (the big number intact), split at the top-level commas.
        #expect(body.hasPrefix(#"{"docs":["#))
        documents += splitTopLevel(String(body.dropFirst(#"{"docs":["#.count)))
      }
      #expect(documents == plain.out.split(separator: "\n").map(String.init))
    }
  }

  @Test("--bulk-docs: a body gathers several inputs, and each message names its own input")
  func bulkDocsAcrossInputs() throws {
    let scratch = try Scratch()
    try scratch.write("ia.json", "{\"_id\":\"z\"}\n{\"_id\":\"a\",\"f\":{\"@type\":\"blob\"}}\n")
    try scratch.write("ib.json", "{\"_id\":\"b\"}\n")
    for threads in ["1", "2"] {
      expectRun(
        try CLI.run(
          ["--push", "--bulk-docs", "3", "-j", threads, "ia.json", "ib.json"],
          in: scratch.directory),
        stdout: #"{"docs":[{"_id":"z"},{"_id":"a","f":{"@type":"blob"}},{"_id":"b"}]}"# + "\n",
        stderr:
          "cbl-attachments: ia.json:2:16: warning: document \"a\": blob at $.f has no string \"digest\"; it gets no _attachments entry\n",
        status: 0)
    }
  }

  @Test("a continuous feed with --unbuffered: each row is out as soon as its line is in")
  func continuousFeed() throws {
    let (process, input, output, errors) = try CLI.start([
      "--push", "--docs", ".doc", "--unbuffered",
    ])
    defer { if process.isRunning { process.terminate() } }
    let writer = input.fileHandleForWriting.fileDescriptor
    let reader = output.fileHandleForReading.fileDescriptor
    func send(_ text: String) {
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
    send(
      #"{"seq":1,"id":"a","changes":[],"doc":{"_id":"a","p":{"@type":"blob","digest":"d"}}}"# + "\n"
    )
    #expect(
      receiveLine()
        == #"{"seq":1,"id":"a","changes":[],"doc":{"_id":"a","p":{"@type":"blob","digest":"d"},"_attachments":{"$.p":{"digest":"d"}}}}"#
        + "\n")
    send("\n\n")  // heartbeats
    send(#"{"seq":2,"id":"b","removed":["x"],"changes":[]}"# + "\n")
    #expect(receiveLine() == #"{"seq":2,"id":"b","removed":["x"],"changes":[]}"# + "\n")
    send(#"{"last_seq":"2"}"# + "\n")
    #expect(receiveLine() == #"{"last_seq":"2"}"# + "\n")
    try input.fileHandleForWriting.close()
    process.waitUntilExit()
    #expect(process.terminationReason == .exit && process.terminationStatus == 0)
    let stderr = errors.fileHandleForReading.readDataToEndOfFile()
    #expect(stderr.isEmpty, "\(String(decoding: stderr, as: UTF8.self))")
  }

  @Test("--list rows of enveloped documents carry the line of their { and their path")
  func listRows() throws {
    let scratch = try Scratch()
    try scratch.write("changes.json", changesBody)
    let result = try CLI.run(
      ["--list", "--format", "changes", "-j", "2", "changes.json"], in: scratch.directory)
    expectRun(
      result,
      stdout:
        #"{"id":"a","line":2,"kind":"blob","name":"$.p","pointer":"/p","digest":"sha1-P","length":null,"content_type":null,"path":".results[0].doc"}"#
        + "\n", stderr: duplicateError, status: 1)
  }
}

/// Splits `text` (the inside of a `_bulk_docs` array and its end) at its top-level commas,
/// dropping what follows the array.
private func splitTopLevel(_ text: String) -> [String] {
  var parts: [String] = []
  var current = ""
  var depth = 0
  var inString = false
  var escaped = false
  for character in text {
    if inString {
      current.append(character)
      if escaped {
        escaped = false
      } else if character == "\\" {
        escaped = true
      } else if character == "\"" {
        inString = false
      }
      continue
    }
    switch character {
    case "\"":
      inString = true
      current.append(character)
    case "{", "[":
      depth += 1
      current.append(character)
    case "}", "]":
      if depth == 0 {
        parts.append(current)
        return parts
      }
      depth -= 1
      current.append(character)
    case "," where depth == 0:
      parts.append(current)
      current = ""
    default:
      current.append(character)
    }
  }
  return parts
}
