import Foundation
import Testing

// SPEC.md "Inspection", `--stats` and `--progress`, and issue 4, on the real executable: the
// exact rows of `--list` and findings of `--check` on standard output, the one-line summary of
// `--check` and the `--stats` numbers on standard error, exit statuses, and that `--progress`
// writes nothing unless standard error is a terminal (and, on one, draws a line that is cleared,
// never touching standard output). Every expectation is computed by hand from SPEC.md.

/// `count` documents with one blob each, one per line.
private func generated(_ count: Int) -> String {
  var text = ""
  text.reserveCapacity(count * 90)
  for index in 0..<count {
    text +=
      "{\"_id\":\"doc-\(index)\",\"photo\":{\"@type\":\"blob\",\"digest\":\"sha1-\(index)\",\"length\":\(index)}}\n"
  }
  return text
}

/// What `--push` makes of `generated(count)`.
private func generatedPushed(_ count: Int) -> String {
  var text = ""
  text.reserveCapacity(count * 140)
  for index in 0..<count {
    text +=
      "{\"_id\":\"doc-\(index)\",\"photo\":{\"@type\":\"blob\",\"digest\":\"sha1-\(index)\",\"length\":\(index)},"
      + "\"_attachments\":{\"$.photo\":{\"digest\":\"sha1-\(index)\",\"length\":\(index)}}}\n"
  }
  return text
}

/// What `--list` makes of `generated(count)`.
private func generatedRows(_ count: Int) -> String {
  var text = ""
  text.reserveCapacity(count * 140)
  for index in 0..<count {
    text +=
      "{\"id\":\"doc-\(index)\",\"line\":\(index + 1),\"kind\":\"blob\",\"name\":\"$.photo\",\"pointer\":\"/photo\","
      + "\"digest\":\"sha1-\(index)\",\"length\":\(index),\"content_type\":null}\n"
  }
  return text
}

/// The numbers of one `--stats` line.
private struct Stats: Equatable, CustomStringConvertible {
  var documents: Int
  var blobs: Int
  var added: Int
  var removed: Int
  var warnings: Int
  var errors: Int
  var bytesIn: Int
  var bytesOut: Int
  /// Input bytes of rejected documents not saved (without --rejects).
  var skipped = 0

  var description: String {
    "\(documents) documents, \(blobs) blobs, \(added) added, \(removed) removed, \(warnings) warnings, "
      + "\(errors) errors; \(bytesIn) in, \(bytesOut) out; \(skipped) skipped"
  }
}

/// The `--stats` line of standard error (the last line), decoded; nil when it has not the
/// documented form `cbl-attachments: N documents, N blobs, N entries added, N removed,
/// N warnings, N errors; N bytes in, N bytes out; S s (R MB/s)`, then `; N bytes skipped` when
/// something was. Singular nouns are accepted for a count of one.
private func stats(_ stderr: String) -> Stats? {
  guard let line = stderr.split(separator: "\n").last.map(String.init) else { return nil }
  let pattern =
    #"cbl-attachments: (\d+) documents?, (\d+) blobs?, (\d+) (?:entries|entry) added, (\d+) removed, "#
    + #"(\d+) warnings?, (\d+) errors?; (\d+) bytes in, (\d+) bytes out; \d+\.\d{3} s \(\d+\.\d MB/s\)"#
    + #"(?:; (\d+) bytes? skipped)?"#
  guard let regex = try? Regex(pattern), let match = try? regex.wholeMatch(in: line) else {
    return nil
  }
  let numbers = (1...9).map { Int(match.output[$0].substring ?? "") ?? 0 }
  return Stats(
    documents: numbers[0], blobs: numbers[1], added: numbers[2], removed: numbers[3],
    warnings: numbers[4], errors: numbers[5], bytesIn: numbers[6], bytesOut: numbers[7],
    skipped: numbers[8])
}

/// The lines of standard error except the last (the `--stats` line).
private func linesBeforeStats(_ stderr: String) -> [String] {
  Array(stderr.split(separator: "\n").dropLast().map(String.init))
}

/// Whether `script` (util-linux) can give the program a terminal.
private let haveScript = FileManager.default.isExecutableFile(atPath: "/usr/bin/script")

/// Single-quotes `text` for /bin/sh.
private func shellQuoted(_ text: String) -> String {
  "'" + text.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
}

// A small input whose every number is known (see the tests that use it).
private let knownInput = """
  {"_id":"a","p":{"@type":"blob","digest":"d1","length":1}}
  {"_id":"b","q":[{"@type":"blob","digest":"d2"},{"@type":"blob","digest":"d3"}],"_attachments":{"$.old":{"digest":"zz"},"keep":{"digest":"k"}}}
  {"_id":"c","r":{"@type":"blob"}}
  [1]
  {"plain":true}

  """
private let knownPushed = """
  {"_id":"a","p":{"@type":"blob","digest":"d1","length":1},"_attachments":{"$.p":{"digest":"d1","length":1}}}
  {"_id":"b","q":[{"@type":"blob","digest":"d2"},{"@type":"blob","digest":"d3"}],"_attachments":{"keep":{"digest":"k"},"$.q[0]":{"digest":"d2"},"$.q[1]":{"digest":"d3"}}}
  {"_id":"c","r":{"@type":"blob"}}
  {"plain":true}

  """
private let knownPulled = """
  {"_id":"a","p":{"@type":"blob","digest":"d1","length":1}}
  {"_id":"b","q":[{"@type":"blob","digest":"d2"},{"@type":"blob","digest":"d3"}],"_attachments":{"keep":{"digest":"k"}}}
  {"_id":"c","r":{"@type":"blob"}}
  {"plain":true}

  """
private let knownRows = """
  {"id":"a","line":1,"kind":"blob","name":"$.p","pointer":"/p","digest":"d1","length":1,"content_type":null}
  {"id":"b","line":2,"kind":"blob","name":"$.q[0]","pointer":"/q/0","digest":"d2","length":null,"content_type":null}
  {"id":"b","line":2,"kind":"blob","name":"$.q[1]","pointer":"/q/1","digest":"d3","length":null,"content_type":null}
  {"id":"b","line":2,"kind":"legacy","name":"$.old","pointer":"/_attachments/$.old","digest":"zz","length":null,"content_type":null}
  {"id":"b","line":2,"kind":"legacy","name":"keep","pointer":"/_attachments/keep","digest":"k","length":null,"content_type":null}
  {"id":"c","line":3,"kind":"blob","name":"$.r","pointer":"/r","digest":null,"length":null,"content_type":null}

  """
private let knownWarning =
  "cbl-attachments: in.ndjson:3:16: warning: document \"c\": blob at $.r has no string \"digest\"; it gets no _attachments entry"
private let knownNotAnObject =
  "cbl-attachments: in.ndjson:4:1: error: document is not a JSON object (it is an array); a file holding one array of documents is read in list framing (skipped 4:1 to 4:3) (--format list)"

/// Decodes `--check` rows to `id line problem pointer`, checking each has a non-empty detail.
private func findingSummaries(_ output: String, sourceLocation: SourceLocation = #_sourceLocation)
  -> [String]
{
  output.split(separator: "\n").map { line in
    guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
    else {
      Issue.record("not a JSON object: \(line)", sourceLocation: sourceLocation)
      return "?"
    }
    #expect(
      Set(object.keys) == ["id", "line", "problem", "pointer", "detail"], "members of \(line)",
      sourceLocation: sourceLocation)
    #expect(
      !((object["detail"] as? String) ?? "").isEmpty, "detail of \(line)",
      sourceLocation: sourceLocation)
    let id = (object["id"] as? String) ?? "null"
    return
      "\(id) \((object["line"] as? NSNumber)?.intValue ?? -1) \(object["problem"] as? String ?? "?") \(object["pointer"] as? String ?? "?")"
  }
}

@Suite("CLI: --list, --check, --stats, --progress")
struct CLIInspectionTests {
  // MARK: --list

  @Test("--list: exact rows on standard output, nothing on standard error, status 0")
  func listRows() throws {
    let scratch = try Scratch()
    try scratch.write("in.ndjson", knownInput.replacingOccurrences(of: "[1]\n", with: ""))
    expectRun(
      try CLI.run(["--list", "in.ndjson"], in: scratch.directory),
      stdout: knownRows, stderr: "", status: 0)
  }

  @Test("--list: several inputs in order, lines counted per input, standard input as <stdin>")
  func listSeveralInputs() throws {
    let scratch = try Scratch()
    try scratch.write(
      "1.ndjson", "\n{\"_id\":\"x\",\"_attachments\":{\"f\":{\"digest\":\"1\",\"length\":2}}}\n")
    try scratch.write(
      "2.ndjson", "{\"a\":{\"@type\":\"blob\",\"digest\":\"2\",\"content_type\":\"text/plain\"}}\n")
    let result = try CLI.run(
      ["--list", "2.ndjson", "-", "1.ndjson"], stdin: Array("\n\n[7]\n".utf8), in: scratch.directory
    )
    expectRun(
      result,
      stdout: """
        {"id":null,"line":1,"kind":"blob","name":"$.a","pointer":"/a","digest":"2","length":null,"content_type":"text/plain"}

        """,
      stderr:
        "cbl-attachments: <stdin>:3:1: error: document is not a JSON object (it is an array); a file holding one array of documents is read in list framing (--format list)\n",
      status: 1)
    let kept = try CLI.run(
      ["--list", "-k", "2.ndjson", "-", "1.ndjson"], stdin: Array("\n\n[7]\n".utf8),
      in: scratch.directory)
    expectRun(
      kept,
      stdout: """
        {"id":null,"line":1,"kind":"blob","name":"$.a","pointer":"/a","digest":"2","length":null,"content_type":"text/plain"}
        {"id":"x","line":2,"kind":"legacy","name":"f","pointer":"/_attachments/f","digest":"1","length":2,"content_type":null}

        """,
      stderr:
        "cbl-attachments: <stdin>:3:1: error: document is not a JSON object (it is an array); a file holding one array of documents is read in list framing (skipped 3:1 to 3:3) (--format list)\n",
      status: 1)
  }

  @Test("--list: the same rows, in input order, with any number of jobs", arguments: [1, 2, 3])
  func listJobs(jobs: Int) throws {
    let scratch = try Scratch()
    let count = 40_000  // about 3 MB: several batches of work
    try scratch.write("in.ndjson", generated(count))
    let result = try CLI.run(["--list", "-j", String(jobs), "in.ndjson"], in: scratch.directory)
    #expect(result.out == generatedRows(count))
    #expect(result.stderr == "" && result.status == 0)
  }

  @Test("--list --format list: NDJSON rows, not an array")
  func listFormatList() throws {
    let input = "[{\"_id\":\"a\",\"b\":{\"@type\":\"blob\",\"digest\":\"1\"}},\n{\"_id\":\"z\"}]\n"
    expectRun(
      try CLI.run(["--list", "--format", "list"], stdin: Array(input.utf8)),
      stdout:
        "{\"id\":\"a\",\"line\":1,\"kind\":\"blob\",\"name\":\"$.b\",\"pointer\":\"/b\",\"digest\":\"1\",\"length\":null,\"content_type\":null}\n",
      stderr: "", status: 0)
  }

  // MARK: --check

  private static let problems = """
    {"_id":"ok","_rev":"1-a","v":{"@type":"blob","digest":"d","length":20971520},"_attachments":{"l":{"digest":"e","length":20971520,"stub":true,"revpos":1}}}
    {"_id":"big","_rev":"2-b","v/w":{"@type":"blob","digest":"d","length":20971521},"_attachments":{"x~y":{"digest":"e","length":2.5e7,"stub":true,"revpos":2}}}
    {"_id":"nod","a":[{"@type":"blob","length":1},{"@type":"blob","digest":42}]}
    {"_id":"notobj","_attachments":"x","b":{"@type":"blob","digest":"d"}}
    {"_id":"dup","_attachments":{},"_attachments":{}}
    [1,2]
    "str"
    {"_id":"mal","a":tru}
    {"_id":"after"}
    {"_id":"cut","a":
    {"_id":"last","b":{"@type":"blob"}}

    """
  private static let problemFindings = [
    "big 2 attachment-too-large /v~1w",
    "big 2 attachment-too-large /_attachments/x~0y",
    "nod 3 blob-without-digest /a/0",
    "nod 3 blob-without-digest /a/1",
    "notobj 4 attachments-not-object /_attachments",
    "dup 5 duplicate-attachments /_attachments",
    "null 6 not-an-object ",
    "null 7 not-an-object ",
    "mal 8 malformed-json ",
    "cut 10 malformed-json ",
    "last 11 blob-without-digest /b",
  ]

  @Test(
    "--check: every finding on standard output, only the summary on standard error, status 1",
    arguments: [1, 2])
  func checkFindings(jobs: Int) throws {
    let scratch = try Scratch()
    try scratch.write("in.ndjson", Self.problems)
    let result = try CLI.run(["--check", "-j", String(jobs), "in.ndjson"], in: scratch.directory)
    #expect(findingSummaries(result.out) == Self.problemFindings)
    #expect(result.stderr == "cbl-attachments: checked 11 documents: 11 findings in 9 documents\n")
    #expect(result.status == 1 && !result.signaled)
  }

  @Test("--check reads every input to the end, without --keep-going, and sums up all of them")
  func checkWholeInput() throws {
    let scratch = try Scratch()
    try scratch.write(
      "a.ndjson",
      "{\"_id\":\"a1\",\"_attachments\":7}\n{\"_id\":\"a2\",\n{\"_id\":\"a3\",\"b\":{\"@type\":\"blob\"}}\n"
    )
    try scratch.write("b.ndjson", "{\"_id\":\"b1\"}\n[]\n")
    let result = try CLI.run(
      ["--check", "a.ndjson", "b.ndjson", "-"], stdin: Array("{\"_id\":\"s1\"}".utf8),
      in: scratch.directory)
    #expect(
      findingSummaries(result.out) == [
        "a1 1 attachments-not-object /_attachments", "a2 2 malformed-json ",
        "a3 3 blob-without-digest /b",
        "null 2 not-an-object ",
      ])
    #expect(result.stderr == "cbl-attachments: checked 6 documents: 4 findings in 4 documents\n")
    #expect(result.status == 1)
  }

  @Test("--check: no finding gives status 0 and a summary; singular and plural")
  func checkClean() throws {
    expectRun(
      try CLI.run(
        ["--check"],
        stdin: Array("{\"_id\":\"a\"}\n{\"b\":{\"@type\":\"blob\",\"digest\":\"x\"}}\n".utf8)),
      stdout: "", stderr: "cbl-attachments: checked 2 documents: 0 findings in 0 documents\n",
      status: 0)
    expectRun(
      try CLI.run(["--check"], stdin: []), stdout: "",
      stderr: "cbl-attachments: checked 0 documents: 0 findings in 0 documents\n", status: 0)
    let one = try CLI.run(["--check"], stdin: Array("{\"_id\":\"one\",\"_attachments\":[]}".utf8))
    #expect(findingSummaries(one.out) == ["one 1 attachments-not-object /_attachments"])
    #expect(one.stderr == "cbl-attachments: checked 1 document: 1 finding in 1 document\n")
    #expect(one.status == 1)
  }

  @Test("--check: an unreadable input is status 2; the others are still checked")
  func checkUnreadable() throws {
    let scratch = try Scratch()
    try scratch.write("a.ndjson", "{\"_id\":\"a\",\"_attachments\":\"s\"}\n")
    let result = try CLI.run(["--check", "missing.ndjson", "a.ndjson"], in: scratch.directory)
    #expect(findingSummaries(result.out) == ["a 1 attachments-not-object /_attachments"])
    #expect(
      result.stderr
        == "cbl-attachments: missing.ndjson: error: cannot open: No such file or directory\n"
        + "cbl-attachments: checked 1 document: 1 finding in 1 document\n")
    #expect(result.status == 2)
  }

  // MARK: --stats

  @Test("--stats --push: exact numbers on a known input; standard output unchanged")
  func statsPush() throws {
    let scratch = try Scratch()
    try scratch.write("in.ndjson", knownInput)
    let result = try CLI.run(["--push", "-k", "--stats", "in.ndjson"], in: scratch.directory)
    #expect(result.out == knownPushed)
    #expect(result.status == 1)
    #expect(linesBeforeStats(result.stderr) == [knownWarning, knownNotAnObject])
    #expect(
      stats(result.stderr)
        == Stats(
          documents: 5, blobs: 4, added: 3, removed: 1, warnings: 1, errors: 1,
          bytesIn: knownInput.utf8.count, bytesOut: knownPushed.utf8.count, skipped: 3),
      "\(result.stderr)")
    let plain = try CLI.run(["--push", "-k", "in.ndjson"], in: scratch.directory)
    #expect(plain.stdout == result.stdout)
    #expect(plain.stderr == knownWarning + "\n" + knownNotAnObject + "\n")
  }

  @Test("--stats --pull: exact numbers")
  func statsPull() throws {
    let result = try CLI.run(["--pull", "--stats"], stdin: Array(knownPushed.utf8))
    #expect(result.out == knownPulled)
    #expect(result.status == 0)
    #expect(linesBeforeStats(result.stderr) == [])
    #expect(
      stats(result.stderr)
        == Stats(
          documents: 4, blobs: 4, added: 0, removed: 3, warnings: 0, errors: 0,
          bytesIn: knownPushed.utf8.count, bytesOut: knownPulled.utf8.count),
      "\(result.stderr)")
  }

  @Test("--stats --list: exact numbers")
  func statsList() throws {
    let scratch = try Scratch()
    try scratch.write("in.ndjson", knownInput)
    let result = try CLI.run(["--list", "-k", "--stats", "in.ndjson"], in: scratch.directory)
    #expect(result.out == knownRows)
    #expect(result.status == 1)
    #expect(linesBeforeStats(result.stderr) == [knownNotAnObject])
    #expect(
      stats(result.stderr)
        == Stats(
          documents: 5, blobs: 4, added: 0, removed: 0, warnings: 0, errors: 1,
          bytesIn: knownInput.utf8.count, bytesOut: knownRows.utf8.count, skipped: 3),
      "\(result.stderr)")
  }

  @Test("--stats --check: exact numbers (errors: documents with a finding), after the summary")
  func statsCheck() throws {
    let scratch = try Scratch()
    try scratch.write("in.ndjson", knownInput)
    let result = try CLI.run(["--check", "--stats", "in.ndjson"], in: scratch.directory)
    // Document b's entries are neither stubs nor carry their bytes, and have no length.
    #expect(
      findingSummaries(result.out) == [
        "b 2 entry-without-data-or-stub /_attachments/$.old",
        "b 2 entry-without-length /_attachments/$.old",
        "b 2 entry-without-data-or-stub /_attachments/keep",
        "b 2 entry-without-length /_attachments/keep",
        // $.old names a place with no blob: Couchbase Lite's push would drop it.
        "b 2 orphan-entry /_attachments/$.old", "c 3 blob-without-digest /r",
        "null 4 not-an-object ",
      ])
    #expect(result.status == 1)
    #expect(
      linesBeforeStats(result.stderr) == [
        "cbl-attachments: checked 5 documents: 7 findings in 3 documents"
      ])
    #expect(
      stats(result.stderr)
        == Stats(
          documents: 5, blobs: 4, added: 0, removed: 0, warnings: 0, errors: 3,
          bytesIn: knownInput.utf8.count, bytesOut: result.stdout.count),
      "\(result.stderr)")
  }

  @Test(
    "--stats: the same numbers whatever the number of jobs, from a file or a pipe",
    arguments: [1, 3])
  func statsJobs(jobs: Int) throws {
    let scratch = try Scratch()
    let count = 40_000
    let input = generated(count)
    try scratch.write("in.ndjson", input)
    let expected = generatedPushed(count)
    for (arguments, stdin) in [(["in.ndjson"], [UInt8]()), ([], Array(input.utf8))] {
      let result = try CLI.run(
        ["--push", "--stats", "-j", String(jobs)] + arguments, stdin: stdin, in: scratch.directory)
      #expect(result.out == expected)
      #expect(
        stats(result.stderr)
          == Stats(
            documents: count, blobs: count, added: count, removed: 0, warnings: 0, errors: 0,
            bytesIn: input.utf8.count, bytesOut: expected.utf8.count),
        "\(result.stderr)")
    }
  }

  @Test("--stats: bytes out is what was written, also with --format list")
  func statsBytesOutList() throws {
    let input = "[{\"_id\":\"a\",\"b\":{\"@type\":\"blob\",\"digest\":\"1\"}},{\"_id\":\"z\"}]"
    let expected =
      "[\n{\"_id\":\"a\",\"b\":{\"@type\":\"blob\",\"digest\":\"1\"},\"_attachments\":{\"$.b\":{\"digest\":\"1\"}}},\n{\"_id\":\"z\"}\n]\n"
    let result = try CLI.run(["--push", "--format", "list", "--stats"], stdin: Array(input.utf8))
    #expect(result.out == expected)
    #expect(
      stats(result.stderr)
        == Stats(
          documents: 2, blobs: 1, added: 1, removed: 0, warnings: 0, errors: 0,
          bytesIn: input.utf8.count, bytesOut: expected.utf8.count),
      "\(result.stderr)")
  }

  // MARK: --progress

  @Test(
    "--progress writes nothing when standard error is not a terminal",
    arguments: ["--push", "--pull", "--list", "--check"])
  func progressNotATerminal(mode: String) throws {
    let scratch = try Scratch()
    let count = 40_000
    let input = generated(count)
    try scratch.write("in.ndjson", input)
    for jobs in ["1", "2"] {
      for (arguments, stdin) in [(["in.ndjson"], [UInt8]()), ([], Array(input.utf8))] {
        let plain = try CLI.run(
          [mode, "-j", jobs] + arguments, stdin: stdin, in: scratch.directory)
        let progress = try CLI.run(
          [mode, "--progress", "-j", jobs] + arguments, stdin: stdin, in: scratch.directory)
        #expect(progress.stdout == plain.stdout, "\(mode) -j \(jobs) \(arguments)")
        #expect(progress.status == 0 && plain.status == 0)
        let expectedStderr =
          mode == "--check"
          ? "cbl-attachments: checked 40000 documents: 0 findings in 0 documents\n" : ""
        #expect(progress.stderr == expectedStderr, "\(mode) -j \(jobs) \(arguments)")
      }
    }
    // Diagnostics still come, alone.
    let bad = try CLI.run(
      ["--push", "--progress"], stdin: Array("{\"a\":{\"@type\":\"blob\"}}\n".utf8))
    expectRun(
      bad, stdout: "{\"a\":{\"@type\":\"blob\"}}\n",
      stderr:
        "cbl-attachments: <stdin>:1:6: warning: blob at $.a has no string \"digest\"; it gets no _attachments entry\n",
      status: 0)
  }

  /// Runs `command` (a /bin/sh command line, `$EXE` being the program) with a terminal as its
  /// standard output and standard error, through `script`, in `directory`. Returns what the
  /// terminal showed.
  private func onTerminal(_ command: String, in directory: URL) throws -> CLIResult {
    try CLI.shell("script -qec \(shellQuoted(command)) /dev/null </dev/null", in: directory)
  }

  @Test(
    "--progress on a terminal: a line on standard error, redrawn in place and cleared at the end; stdout untouched",
    .enabled(if: haveScript), arguments: ["1", "2"])
  func progressOnTerminal(jobs: String) throws {
    let scratch = try Scratch()
    let count = 40_000
    try scratch.write("in.ndjson", generated(count))
    let expected = generatedPushed(count)

    // A regular file: size known, so percent and time left are shown.
    let file = try onTerminal(
      #""$EXE" --push --progress -j "# + jobs + " in.ndjson > out.ndjson", in: scratch.directory)
    #expect(file.status == 0)
    #expect(try scratch.read("out.ndjson") == expected, "standard output is only the documents")
    let drawn = file.out
    #expect(drawn.hasPrefix("\r\u{1B}[K"), "\(drawn.debugDescription)")
    #expect(
      drawn.hasSuffix("\r\u{1B}[K"), "the line is cleared at the end: \(drawn.debugDescription)")
    #expect(!drawn.contains("\n"), "the line is redrawn in place: \(drawn.debugDescription)")
    let states = drawn.components(separatedBy: "\r\u{1B}[K").dropFirst().dropLast()
    #expect(!states.isEmpty)
    // Rate and time left appear once a quarter second has passed (before that they mean nothing).
    let withSize = try Regex(
      #"in\.ndjson: \d+\.\d MiB, \d+ documents(, \d+\.\d MiB/s)?, \d{1,3}%(, \d+ s left)?"#)
    for state in states {
      #expect((try? withSize.wholeMatch(in: state)) != nil, "\(state.debugDescription)")
    }

    // A pipe: no size, so no percent.
    let pipe = try onTerminal(
      #"cat in.ndjson | "$EXE" --push --progress -j "# + jobs + " > out2.ndjson",
      in: scratch.directory)
    #expect(try scratch.read("out2.ndjson") == expected)
    let withoutSize = try Regex(#"<stdin>: \d+\.\d MiB, \d+ documents(, \d+\.\d MiB/s)?"#)
    let pipeStates = pipe.out.components(separatedBy: "\r\u{1B}[K").dropFirst().dropLast()
    #expect(!pipeStates.isEmpty && pipe.out.hasSuffix("\r\u{1B}[K"), "\(pipe.out.debugDescription)")
    for state in pipeStates {
      #expect((try? withoutSize.wholeMatch(in: state)) != nil, "\(state.debugDescription)")
    }
  }

  @Test(
    "--progress: --stats and the --check summary come after the line is cleared",
    .enabled(if: haveScript))
  func progressThenSummary() throws {
    let scratch = try Scratch()
    try scratch.write("in.ndjson", generated(20_000))
    let shown = try onTerminal(
      #""$EXE" --check --stats --progress in.ndjson"#, in: scratch.directory
    ).out
    // The terminal turns "\n" into "\r\n".
    let cleared = shown.range(of: "\r\u{1B}[K", options: .backwards)
    #expect(cleared != nil)
    if let cleared {
      let after = String(shown[cleared.upperBound...])
      #expect(
        after.hasPrefix("cbl-attachments: checked 20000 documents: 0 findings in 0 documents\r\n"),
        "\(after.debugDescription)")
      #expect(
        stats(after.replacingOccurrences(of: "\r\n", with: "\n"))?.documents == 20_000,
        "\(after.debugDescription)")
    }
  }

  @Test(
    "--progress: never on standard output, even when standard output is the terminal",
    .enabled(if: haveScript))
  func progressNeverOnStdout() throws {
    let scratch = try Scratch()
    let input = generated(3)
    try scratch.write("in.ndjson", input)
    let shown = try onTerminal(
      #""$EXE" --push --progress in.ndjson 2> err.txt"#, in: scratch.directory)
    #expect(shown.out == generatedPushed(3).replacingOccurrences(of: "\n", with: "\r\n"))
    #expect(try scratch.read("err.txt") == "", "standard error is not a terminal here")
  }

  @Test(
    "--progress on a terminal: a diagnostic starts on a line of its own, not after the progress text",
    .enabled(if: haveScript))
  func progressAndDiagnostics() throws {
    let scratch = try Scratch()
    let count = 20_000
    var input = generated(count)
    input += "{\"_id\":\"w\",\"r\":{\"@type\":\"blob\"}}\n"
    input += generated(count)
    try scratch.write("in.ndjson", input)
    let shown = try onTerminal(
      #""$EXE" --push --progress -j 1 in.ndjson > out.ndjson"#, in: scratch.directory
    ).out
    let message =
      "cbl-attachments: in.ndjson:20001:16: warning: document \"w\": blob at $.r has no string \"digest\"; it gets no _attachments entry\r\n"
    let found = shown.range(of: message)
    #expect(found != nil, "\(shown.debugDescription)")
    if let found {
      let before = String(shown[..<found.lowerBound])
      #expect(
        before.isEmpty || before.hasSuffix("\r\u{1B}[K") || before.hasSuffix("\n"),
        "the diagnostic follows the progress text on the same line: \(before.suffix(120).debugDescription)"
      )
    }
  }
}
