import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

// SPEC.md, "Nothing lost — the invariant", item by item on the real executable: exact standard
// output, rejects, standard error and exit status. Expected text is worked out from the inputs
// by hand (line and column numbers included).

private let program = "cbl-attachments"

/// `count` compact documents of about 120 bytes, one per line: NDJSON that fills the engine's
/// 512 KiB input window, so that what follows comes after it has compacted.
private func filler(lines count: Int) -> String {
  (0..<count).map { "{\"_id\":\"f\($0)\",\"pad\":\"\(String(repeating: "x", count: 100))\"}\n" }
    .joined()
}

@Suite("CLI: nothing lost")
struct NothingLostTests {
  // MARK: Rejects are complete at any size

  /// About 530 KB of documents, then a 31 KB malformed document over 502 lines, then one more.
  private static let fillerLines = 4_500
  private static let badDocument =
    "{\"_id\":\"bad\",\n"
    + (0..<500).map { "  \"k\($0)\": \"\(String(repeating: "y", count: 50))\",\n" }.joined()
    + "  \"z\": tru\n}\n"
  private static let after = "{\"_id\":\"after\"}\n"

  @Test(
    "a 31 KB malformed document after 530 KB of input is saved whole in --rejects",
    arguments: [["-j", "1"], ["-j", "2"], ["--unbuffered"], ["--check"]])
  func rejectsCompleteAfterCompaction(options: [String]) throws {
    let scratch = try Scratch()
    let good = filler(lines: Self.fillerLines)
    try scratch.write("in.ndjson", good + Self.badDocument + Self.after)
    let mode = options == ["--check"] ? [String]() : ["--pull"]
    let result = try CLI.run(
      mode + options + ["--rejects", "bad.ndjson", "in.ndjson"], in: scratch.directory)
    // The error is at `tru`: line 4,500 + 1 (the document's first) + 500 + 1, column 8.
    let line = Self.fillerLines + 502
    let message =
      "document \"bad\": malformed JSON: invalid literal (only true, false and null are)"
    if options == ["--check"] {
      #expect(
        result.out
          == "{\"id\":\"bad\",\"line\":\(Self.fillerLines + 1),\"problem\":\"malformed-json\",\"pointer\":\"\",\"detail\":\"malformed JSON: invalid literal (only true, false and null are)\"}\n",
        "\(result)")
      #expect(result.stderr == "\(program): checked 4502 documents: 1 finding in 1 document\n")
    } else {
      #expect(result.out == good + Self.after, "\(result)")
      #expect(result.stderr == "\(program): in.ndjson:\(line):8: error: \(message)\n")
    }
    #expect(result.status == 1)
    #expect(try scratch.read("bad.ndjson") == Self.badDocument, "every byte of the document")
  }

  @Test("an error's column is the same at -j 1 and -j 2 after the input window compacted")
  func columnAfterCompaction() throws {
    let scratch = try Scratch()
    // 524,286 bytes of NDJSON (4,200 documents and a line of spaces), then a document whose
    // second line starts with a stray comma: the comma is at offset 524,288, where the 512 KiB
    // input window is full. It is on line 4,203, column 1, however the input was split.
    let documents = filler(lines: 4_200)
    let good = documents + String(repeating: " ", count: 524_286 - documents.utf8.count - 1) + "\n"
    #expect(good.utf8.count == 524_286)
    try scratch.write("in.ndjson", good + "{\n,\"b\":1}\n")
    for threads in ["1", "2"] {
      let result = try CLI.run(["--push", "-j", threads, "in.ndjson"], in: scratch.directory)
      expectRun(
        result, stdout: documents,
        stderr:
          "\(program): in.ndjson:4203:1: error: malformed JSON: invalid object key (must be a string)\n",
        status: 1)
    }
  }

  // MARK: A broken list

  @Test("--format list: a malformed element sends the rest of the input to --rejects, and says so")
  func brokenListToRejects() throws {
    let scratch = try Scratch()
    try scratch.write(
      "list.json", "[\n  {\"_id\":\"a\"},\n  {\"_id\":\"b\",,},\n  {\"_id\":\"c\"}\n]\n")
    let message =
      "\(program): list.json:3:14: error: document \"b\": malformed JSON: invalid object key (must be a string); the rest of the input (3:3 to 5:1) is not converted\n"
    let saved = try CLI.run(
      ["--push", "--format", "list", "--rejects", "rest.json", "list.json"], in: scratch.directory)
    expectRun(saved, stdout: "[\n{\"_id\":\"a\"}\n]\n", stderr: message, status: 1)
    #expect(try scratch.read("rest.json") == "{\"_id\":\"b\",,},\n  {\"_id\":\"c\"}\n]\n")
    // Without --rejects the message is the same: it names what is not converted.
    let skipped = try CLI.run(
      ["--push", "--format", "list", "-k", "--stats", "list.json"], in: scratch.directory)
    #expect(skipped.out == "[\n{\"_id\":\"a\"}\n]\n")
    #expect(skipped.stderr.hasPrefix(message), "\(skipped)")
    // `{"_id":"b",,},`, a newline, `  {"_id":"c"}`, a newline and `]`.
    #expect(skipped.stderr.hasSuffix("; 30 bytes skipped\n"), "\(skipped)")
  }

  // MARK: Skipped ranges

  @Test("-k without --rejects: an error that skips documents says how far, and --stats counts it")
  func skippedRangeReported() throws {
    // The indented documents after a cut-short one cannot be told apart from its rest.
    let input = "{\"_id\":\"b\",\n  {\"_id\":\"c\"}\n  {\"_id\":\"d\"}\n"
    let result = try CLI.run(["--push", "-k"], stdin: Array(input.utf8))
    expectRun(
      result, stdout: "",
      stderr:
        "\(program): <stdin>:2:3: error: document \"b\": malformed JSON: invalid object key (must be a string) (skipped 1:1 to end of input)\n",
      status: 1)
    let stats = try CLI.run(["--push", "-k", "--stats"], stdin: Array(input.utf8))
    #expect(stats.stderr.hasSuffix("; 39 bytes skipped\n"), "\(stats)")
  }

  // MARK: The rejects file

  @Test("a rejects file that is an input is refused before anything is truncated")
  func rejectsIsInput() throws {
    let scratch = try Scratch()
    let original = "{\"a\":1}\n[2]\n"
    try scratch.write("m.ndjson", original)
    #expect(link(scratch.url("m.ndjson").path, scratch.url("alias.ndjson").path) == 0)
    for (rejects, inputs) in [
      ("m.ndjson", ["m.ndjson"]), ("alias.ndjson", ["other.ndjson", "m.ndjson"]),
    ] {
      let result = try CLI.run(
        ["--push", "--rejects", rejects] + inputs, in: scratch.directory)
      expectRun(
        result, stdout: "",
        stderr:
          "\(program): \(rejects): error: the rejects file is also an input (m.ndjson); refusing to overwrite it\n",
        status: 2)
      #expect(try scratch.read("m.ndjson") == original, "the input is untouched")
    }
    // Standard input counts as an input.
    let piped = try CLI.shell(
      "\"$EXE\" --push --rejects m.ndjson < m.ndjson", in: scratch.directory)
    expectRun(
      piped, stdout: "",
      stderr:
        "\(program): m.ndjson: error: the rejects file is also an input (<stdin>); refusing to overwrite it\n",
      status: 2)
    #expect(try scratch.read("m.ndjson") == original)
  }

  @Test("a rejects file that is standard output is refused; /dev/null is always allowed")
  func rejectsIsOutput() throws {
    let scratch = try Scratch()
    try scratch.write("in.ndjson", "{\"a\":1}\n[2]\n")
    let same = try CLI.shell(
      "\"$EXE\" --push --rejects out.ndjson in.ndjson > out.ndjson", in: scratch.directory)
    expectRun(
      same, stdout: "",
      stderr:
        "\(program): out.ndjson: error: the rejects file is also standard output; refusing to write both to one file\n",
      status: 2)
    let null = try CLI.shell(
      "\"$EXE\" --push --rejects /dev/null in.ndjson > /dev/null", in: scratch.directory)
    expectRun(
      null, stdout: "",
      stderr:
        "\(program): in.ndjson:2:1: error: document is not a JSON object (it is an array); a file holding one array of documents is read in list framing (--format list)\n",
      status: 1)
  }

  @Test("an input that is standard output is not read (it could never end, or be empty)")
  func inputIsOutput() throws {
    let scratch = try Scratch()
    try scratch.write("in.ndjson", "{\"a\":1}\n")
    try scratch.write("other.ndjson", "{\"b\":2}\n")
    let result = try CLI.shell(
      "\"$EXE\" --push in.ndjson other.ndjson >> in.ndjson", in: scratch.directory)
    expectRun(
      result, stdout: "",
      stderr: "\(program): in.ndjson: error: input file is also standard output; not read (to"
        + " convert a file in place, use -o FILE FILE: a shell's > empties the file before the"
        + " program runs)\n",
      status: 2)
    #expect(try scratch.read("in.ndjson") == "{\"a\":1}\n{\"b\":2}\n")
  }

  @Test("an input that is standard error is not read (its own messages would come back in)")
  func inputIsStandardError() throws {
    let scratch = try Scratch()
    try scratch.write("in.ndjson", "{\"a\":1}\n[1]\n")
    try scratch.write("other.ndjson", "{\"b\":2}\n")
    let result = try CLI.shell(
      "\"$EXE\" --push in.ndjson other.ndjson 2>> in.ndjson; echo \"status $?\"",
      in: scratch.directory)
    expectRun(result, stdout: "{\"b\":2}\nstatus 2\n", stderr: "", status: 0)
    #expect(
      try scratch.read("in.ndjson")
        == "{\"a\":1}\n[1]\n\(program): in.ndjson: error: input file is also standard error; not"
        + " read\n")
  }

  @Test("a failed write of the rejects file ends the run: status 2, nothing later reported")
  func rejectsWriteFails() throws {
    let scratch = try Scratch()
    try scratch.write("in.json", "{\"a\":1}\n[3]\n{\"d\":4}\n\"x\"\n")
    for threads in ["1", "2"] {
      let result = try CLI.run(
        ["--pull", "-j", threads, "--rejects", "/dev/full", "in.json"], in: scratch.directory)
      expectRun(
        result, stdout: "{\"a\":1}\n",
        stderr:
          "\(program): in.json:2:1: error: document is not a JSON object (it is an array); a file holding one array of documents is read in list framing (--format list)\n"
          + "\(program): /dev/full: error: write failed: No space left on device\n",
        status: 2)
    }
    // With _bulk_docs bodies too: the documents before the failure are out, their body closed.
    for threads in ["1", "2"] {
      let result = try CLI.run(
        ["--push", "--bulk-docs", "3", "-j", threads, "--rejects", "/dev/full", "in.json"],
        in: scratch.directory)
      expectRun(
        result, stdout: "{\"docs\":[{\"a\":1}]}\n",
        stderr:
          "\(program): in.json:2:1: error: document is not a JSON object (it is an array); a file holding one array of documents is read in list framing (--format list)\n"
          + "\(program): /dev/full: error: write failed: No space left on device\n",
        status: 2)
    }
  }

  @Test("a rejects file that fails mid-way is cut back to its last whole rejected document")
  func rejectsCutBack() throws {
    let scratch = try Scratch()
    // A small rejected document, then one whose skipped text (about 1 MB, saved in pieces as
    // the input window fills) outgrows a file size limit of 768,000 bytes.
    let small = "{\"_id\":\"bad1\",\"k\":1,\n"
    let large =
      "{\"_id\":\"bad2\",,\n"
      + String(
        repeating: "  junk, not a document: " + String(repeating: "z", count: 76) + "\n",
        count: 10_000)
    try scratch.write(
      "in.ndjson",
      "{\"_id\":\"g\"}\n" + small + "{\"_id\":\"ok\"}\n" + large + "{\"_id\":\"last\"}\n")
    let result = try CLI.shell(
      "trap '' XFSZ; ulimit -f 1500; \"$EXE\" --push -j 1 --rejects r.json in.ndjson",
      in: scratch.directory)
    expectRun(
      result, stdout: "{\"_id\":\"g\"}\n{\"_id\":\"ok\"}\n",
      stderr:
        "\(program): in.ndjson:2:21: error: document \"bad1\": malformed JSON: the document is cut short at the end of its line (a truncated record?); the next line starts a new document\n"
        + "\(program): r.json: error: write failed: File too large\n",
      status: 2)
    #expect(try scratch.read("r.json") == small, "only whole rejected documents are left")
  }

  // MARK: Pull keeps the bytes

  @Test("pull keeps an entry that carries the only copy of the bytes, and warns")
  func pullKeepsData() throws {
    let document =
      "{\"_id\":\"p\",\"f\":{\"@type\":\"blob\",\"digest\":\"sha1-d\"},\"_attachments\":{\"$.f\":{\"digest\":\"sha1-d\",\"data\":\"aGk=\"}}}\n"
    let warning =
      "<stdin>:1:67: warning: document \"p\": _attachments entry \"$.f\" carries the attachment's bytes (\"data\") and is kept: removing it would lose the only copy of them\n"
    expectRun(
      try CLI.run(["--pull"], stdin: Array(document.utf8)), stdout: document,
      stderr: "\(program): " + warning, status: 0)
    expectRun(
      try CLI.run(["--pull", "--strict"], stdin: Array(document.utf8)), stdout: "",
      stderr: "\(program): " + warning.replacingOccurrences(of: "warning:", with: "error:"),
      status: 1)
  }

  @Test("push warns when an entry it replaces carries bytes the output will not have")
  func pushWarnsOfDroppedData() throws {
    // As `GET /db/doc?attachments=true` gives a Couchbase Lite 2 document back: the entry of
    // its blob, named by the replicator, with the bytes.
    let blob = "{\"@type\":\"blob\",\"digest\":\"sha1-d\",\"length\":2}"
    let document =
      "{\"_id\":\"s\",\"_rev\":\"2-a\",\"img\":\(blob),\"_attachments\":{\"blob_/img\":"
      + "{\"digest\":\"sha1-d\",\"length\":2,\"revpos\":2,\"data\":\"aGk=\"}}}\n"
    let pushed =
      "{\"_id\":\"s\",\"_rev\":\"2-a\",\"img\":\(blob),\"_attachments\":{\"blob_/img\":"
      + "{\"digest\":\"sha1-d\",\"length\":2,\"stub\":true,\"revpos\":2}}}\n"
    let warning =
      "<stdin>:1:93: warning: document \"s\": _attachments entry \"blob_/img\" carries the"
      + " attachment's bytes (\"data\"); push replaces it with the blob's entry, which has none"
      + " (a push with a blob store carries them) (--blobs DIR)\n"
    expectRun(
      try CLI.run(["--push", "--naming", "litecore"], stdin: Array(document.utf8)),
      stdout: pushed, stderr: "\(program): " + warning, status: 0)
    expectRun(
      try CLI.run(["--push", "--naming", "litecore", "--strict"], stdin: Array(document.utf8)),
      stdout: "",
      stderr: "\(program): " + warning.replacingOccurrences(of: "warning:", with: "error:"),
      status: 1)
    // A blob that holds the same bytes keeps them in its entry: nothing is dropped.
    let carried = document.replacingOccurrences(
      of: "\"length\":2}", with: "\"length\":2,\"data\":\"aGk=\"}")
    let quiet = try CLI.run(["--push", "--naming", "litecore"], stdin: Array(carried.utf8))
    #expect(quiet.status == 0 && quiet.stderr == "")
  }
}
