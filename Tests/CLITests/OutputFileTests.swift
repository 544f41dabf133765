import Foundation
import Testing

/// `--output FILE`: the output is written beside FILE and renamed over it only at the end of a
/// run that did not fail; FILE may be an input, which is then replaced only if nothing of it is
/// lost (README, "Writing to a file"; SPEC.md, "Nothing lost").
@Suite("CLI: --output, in place and atomic")
struct OutputFileTests {
  let program = "cbl-attachments"
  let dump =
    "{\"_id\":\"a\",\"img\":{\"@type\":\"blob\",\"digest\":\"sha1-AAAAAAAAAAAAAAAAAAAAAAAAAAA=\",\"length\":3}}\n"
    + "{\"_id\":\"b\",\"n\":12345678901234567890123}\n"
  /// The dump with a truncated record between its two documents.
  let broken =
    "{\"_id\":\"a\",\"img\":{\"@type\":\"blob\",\"digest\":\"sha1-AAAAAAAAAAAAAAAAAAAAAAAAAAA=\",\"length\":3}}\n"
    + "{\"_id\":\"cut\",\n"
    + "{\"_id\":\"b\",\"n\":12345678901234567890123}\n"
  let truncation =
    "broken.ndjson:2:14: error: document \"cut\": malformed JSON: the document is cut short at"
    + " the end of its"
    + " line (a truncated record?); the next line starts a new document"

  /// The names in the scratch folder other than `expected`: temporary files left behind.
  func strayFiles(_ scratch: Scratch, expected: Set<String>) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: scratch.directory.path)
      .filter { !expected.contains($0) }
  }

  func pushed(_ text: String) throws -> String {
    try CLI.run(["--push"], stdin: Array(text.utf8)).out
  }

  @Test("-o FILE holds what standard output would, and standard output stays empty")
  func writesTheFile() throws {
    let scratch = try Scratch()
    try scratch.write("d.ndjson", dump)
    for arguments in [
      ["--push", "-o", "out.ndjson", "d.ndjson"], ["--push", "-oout.ndjson", "d.ndjson"],
      ["--push", "--output=out.ndjson", "-j", "2", "d.ndjson"],
    ] {
      let result = try CLI.run(arguments, in: scratch.directory)
      expectRun(result, stdout: "", stderr: "", status: 0)
      #expect(try scratch.read("out.ndjson") == pushed(dump), "\(arguments)")
      #expect(try strayFiles(scratch, expected: ["d.ndjson", "out.ndjson"]) == [])
    }
    // `-o -` is standard output.
    let dash = try CLI.run(["--push", "-o", "-", "d.ndjson"], in: scratch.directory)
    expectRun(dash, stdout: try pushed(dump), stderr: "", status: 0)
  }

  @Test(
    "-o FILE with no input named and nothing on standard input keeps FILE: status 2, the fix named"
  )
  func nothingDoesNotReplaceAFile() throws {
    let scratch = try Scratch()
    try scratch.write("victim.ndjson", dump)
    try scratch.write("empty", "")
    let size = dump.utf8.count
    let kept =
      "cbl-attachments: victim.ndjson: error: not replaced: standard input was empty and no"
      + " input file is named, so the output is empty; the file (\(size) bytes) is as it was."
      + " Name the input (in place: -o victim.ndjson victim.ndjson), or give - to mean standard"
      + " input\n"
    // An empty regular file, /dev/null and an empty pipe on standard input; every mode.
    for (command, mode) in [
      ("$EXE --push -o victim.ndjson < empty", "push"),
      ("$EXE --pull -o victim.ndjson < /dev/null", "pull"),
      (": | $EXE --check -j 2 -o victim.ndjson", "check"),
      ("$EXE --upgrade --stats -o victim.ndjson < /dev/null 2>/dev/null; echo $? >&2", "upgrade"),
    ] {
      let result = try CLI.shell(command, in: scratch.directory)
      switch mode {
      case "upgrade":
        #expect(result.stderr == "2\n", "\(result)")
      case "check":
        expectRun(
          result, stdout: "",
          stderr: "cbl-attachments: checked 0 documents: 0 findings in 0 documents\n" + kept,
          status: 2)
      default:
        expectRun(result, stdout: "", stderr: kept, status: 2)
      }
      #expect(try scratch.read("victim.ndjson") == dump, "\(mode): the file is as it was")
      #expect(try strayFiles(scratch, expected: ["victim.ndjson", "empty"]) == [])
    }
    // `-` says "standard input, as it is": then nothing replaces it, as asked.
    expectRun(
      try CLI.shell("$EXE --push -o victim.ndjson - < /dev/null", in: scratch.directory),
      stdout: "", stderr: "", status: 0)
    #expect(try scratch.read("victim.ndjson") == "")
    // Something on standard input, an empty file or a new one: written as ever.
    try scratch.write("victim.ndjson", dump)
    expectRun(
      try CLI.run(
        ["--push", "-o", "victim.ndjson"], stdin: Array("{\"b\":2}\n".utf8),
        in: scratch.directory), stdout: "", stderr: "", status: 0)
    #expect(try scratch.read("victim.ndjson") == "{\"b\":2}\n")
    for name in ["empty", "new.ndjson"] {
      expectRun(
        try CLI.shell("$EXE --push -o \(name) < /dev/null", in: scratch.directory), stdout: "",
        stderr: "", status: 0)
      #expect(try scratch.read(name) == "")
    }
  }

  @Test(
    "-o FILE with no input named and a terminal on standard input: refused at once, status 2",
    .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script")))
  func terminalDoesNotReplaceAFile() throws {
    let scratch = try Scratch()
    try scratch.write("victim.ndjson", dump)
    // `script` gives the program a terminal on standard input (and output); it must not wait.
    let result = try CLI.shell(
      "script -qec '$EXE --push -o victim.ndjson; echo status $?' /dev/null < /dev/null",
      in: scratch.directory)
    let shown = result.out.replacingOccurrences(of: "\r\n", with: "\n")
    #expect(
      shown == usageError(
        "-o victim.ndjson would replace a file of \(dump.utf8.count) bytes with what is typed"
          + " here: standard input is a terminal and no input file is named; name it (in place:"
          + " -o victim.ndjson victim.ndjson), or give - to mean standard input") + "status 2\n",
      "\(result)")
    #expect(try scratch.read("victim.ndjson") == dump)
    #expect(try strayFiles(scratch, expected: ["victim.ndjson"]) == [])
  }

  @Test("a FILE whose name is too long for `.NAME.XXXXXX` gets a shorter temporary name")
  func longName() throws {
    let scratch = try Scratch()
    try scratch.write("d.ndjson", dump)
    // 248 bytes and the longest a name may be; a two-byte character where the name is cut.
    for name in [String(repeating: "n", count: 248), String(repeating: "é", count: 127) + "x"] {
      #expect(name.utf8.count >= 248 && name.utf8.count <= 255)
      let result = try CLI.run(["--push", "-o", name, "d.ndjson"], in: scratch.directory)
      expectRun(result, stdout: "", stderr: "", status: 0)
      #expect(try scratch.read(name) == pushed(dump))
      // In place too.
      let again = try CLI.run(["--pull", "-o", name, name], in: scratch.directory)
      expectRun(again, stdout: "", stderr: "", status: 0)
      #expect(try scratch.read(name) == dump)
      #expect(try strayFiles(scratch, expected: ["d.ndjson", name]) == [])
      try FileManager.default.removeItem(at: scratch.url(name))
    }
  }

  @Test("a folder nobody may create files in is named as the reason, not FILE")
  func unwritableFolder() throws {
    let scratch = try Scratch()
    try scratch.write("d.ndjson", dump)
    // /sys and /proc refuse new files even to root, each in its own words.
    for (folder, reason) in [
      ("/sys", "Permission denied"),
      ("/proc", "No such file or directory (the folder is there, but takes no new files)"),
    ] {
      let result = try CLI.run(
        ["--push", "-o", folder + "/out.ndjson", "d.ndjson"], in: scratch.directory)
      expectRun(
        result, stdout: "",
        stderr: "\(program): \(folder)/out.ndjson: error: cannot create a temporary file in"
          + " \(folder) to write it (--output renames it over the file at the end): \(reason)\n",
        status: 2)
    }
  }

  @Test("a refused rejects file is refused before a FIFO given to -o is opened")
  func refusalBeforeFIFO() throws {
    let scratch = try Scratch()
    try scratch.write("d.ndjson", dump)
    #expect(mkfifo(scratch.url("fifo").path, 0o600) == 0)
    // Opening the FIFO would wait for a reader that never comes.
    let result = try CLI.run(
      ["--push", "-o", "fifo", "--rejects", "d.ndjson", "d.ndjson"], in: scratch.directory)
    expectRun(
      result, stdout: "",
      stderr: "\(program): d.ndjson: error: the rejects file is also an input (d.ndjson); refusing"
        + " to overwrite it\n",
      status: 2)
    #expect(try scratch.read("d.ndjson") == dump)
  }

  @Test("an input converted in place keeps its permission bits, and a symbolic link stays one")
  func inPlace() throws {
    let scratch = try Scratch()
    try scratch.write("d.ndjson", dump)
    #expect(chmod(scratch.url("d.ndjson").path, 0o640) == 0)
    try FileManager.default.createSymbolicLink(
      atPath: scratch.url("link.ndjson").path, withDestinationPath: "d.ndjson")
    let push = try CLI.run(["--push", "-o", "link.ndjson", "link.ndjson"], in: scratch.directory)
    expectRun(push, stdout: "", stderr: "", status: 0)
    #expect(try scratch.read("d.ndjson") == pushed(dump))
    let attributes = try FileManager.default.attributesOfItem(atPath: scratch.url("d.ndjson").path)
    #expect((attributes[.posixPermissions] as? Int) == 0o640)
    let link = try FileManager.default.destinationOfSymbolicLink(
      atPath: scratch.url("link.ndjson").path)
    #expect(link == "d.ndjson")
    // Standard input is an input too; pull brings the dump back byte for byte.
    let pull = try CLI.shell(
      "\"$EXE\" --pull -o d.ndjson < d.ndjson", in: scratch.directory)
    expectRun(pull, stdout: "", stderr: "", status: 0)
    #expect(try scratch.read("d.ndjson") == dump)
    #expect(try strayFiles(scratch, expected: ["d.ndjson", "link.ndjson"]) == [])
  }

  @Test("in place, an input is not replaced when part of it would be lost")
  func inPlaceNothingLost() throws {
    let scratch = try Scratch()
    let notReplaced =
      "\(program): broken.ndjson: error: not replaced: the rejected documents would be lost"
      + " (keep them with --rejects FILE); the file is as it was\n"
    let stopped =
      "\(program): broken.ndjson: error: not replaced: the input after the error would be lost"
      + " (keep it with --rejects FILE); the file is as it was\n"
    for (options, message) in [
      ([], "\(program): \(truncation)\n" + stopped),
      (["-k"], "\(program): \(truncation) (skipped 2:1 to 2:13)\n" + notReplaced),
    ] {
      try scratch.write("broken.ndjson", broken)
      let result = try CLI.run(
        ["--push"] + options + ["-o", "broken.ndjson", "broken.ndjson"], in: scratch.directory)
      expectRun(result, stdout: "", stderr: message, status: 2)
      #expect(try scratch.read("broken.ndjson") == broken, "\(options): the input is as it was")
      #expect(try strayFiles(scratch, expected: ["broken.ndjson"]) == [])
    }
    // With the rejects saved, every byte is somewhere: the input is replaced.
    let kept = try CLI.run(
      ["--push", "--rejects", "r.ndjson", "-o", "broken.ndjson", "broken.ndjson"],
      in: scratch.directory)
    expectRun(kept, stdout: "", stderr: "\(program): \(truncation)\n", status: 1)
    #expect(try scratch.read("broken.ndjson") == pushed(dump))
    #expect(try scratch.read("r.ndjson") == "{\"_id\":\"cut\",\n")
  }

  @Test("a file that is not an input is written when documents are rejected, as stdout would be")
  func rejectedDocumentsStillWritten() throws {
    let scratch = try Scratch()
    try scratch.write("broken.ndjson", broken)
    let result = try CLI.run(
      ["--push", "-k", "-o", "out.ndjson", "broken.ndjson"], in: scratch.directory)
    expectRun(
      result, stdout: "", stderr: "\(program): \(truncation) (skipped 2:1 to 2:13)\n", status: 1)
    #expect(try scratch.read("out.ndjson") == pushed(dump))
  }

  @Test("a run that fails leaves FILE as it was, or does not make it")
  func failedRun() throws {
    let scratch = try Scratch()
    try scratch.write("d.ndjson", dump)
    let missing = "\(program): missing.ndjson: error: cannot open: No such file or directory\n"
    let new = try CLI.run(
      ["--push", "-o", "out.ndjson", "d.ndjson", "missing.ndjson"], in: scratch.directory)
    expectRun(
      new, stdout: "",
      stderr: missing + "\(program): out.ndjson: error: not written, because the run failed\n",
      status: 2)
    #expect(!FileManager.default.fileExists(atPath: scratch.url("out.ndjson").path))
    try scratch.write("out.ndjson", "old\n")
    let old = try CLI.run(
      ["--push", "-o", "out.ndjson", "d.ndjson", "missing.ndjson"], in: scratch.directory)
    expectRun(
      old, stdout: "",
      stderr: missing
        + "\(program): out.ndjson: error: not replaced, because the run failed; the file is as"
        + " it was\n",
      status: 2)
    #expect(try scratch.read("out.ndjson") == "old\n")
    #expect(try strayFiles(scratch, expected: ["d.ndjson", "out.ndjson"]) == [])
  }

  @Test("a failed write ends the run and leaves nothing half-written")
  func failedWrite() throws {
    let scratch = try Scratch()
    try scratch.write("d.ndjson", dump)
    let result = try CLI.run(["--push", "-o", "/dev/full", "d.ndjson"], in: scratch.directory)
    expectRun(
      result, stdout: "",
      stderr: "\(program): /dev/full: error: write failed: No space left on device\n", status: 2)
  }

  @Test("files that cannot be the output are refused before anything is written")
  func refusals() throws {
    let scratch = try Scratch()
    try scratch.write("d.ndjson", dump)
    var cases: [([String], String)] = [
      (
        ["--list", "-o", "d.ndjson", "d.ndjson"],
        "\(program): d.ndjson: error: the output file is also an input (d.ndjson); --list,"
          + " --check and --bulk-docs do not write its documents back as they were, so it is not"
          + " replaced\n"
      ),
      (
        ["--push", "-o", "x.ndjson", "--rejects", "./x.ndjson", "d.ndjson"],
        "\(program): ./x.ndjson: error: the rejects file is also the output file; refusing to"
          + " write both to one file\n"
      ),
      (
        ["--push", "-o", ".", "d.ndjson"],
        "\(program): .: error: cannot open for writing: Is a directory\n"
      ),
      (
        ["--push", "-o", "no/such/folder.ndjson", "d.ndjson"],
        "\(program): no/such/folder.ndjson: error: cannot open for writing: No such file or"
          + " directory\n"
      ),
    ]
    cases.append(
      (
        ["--push", "--bulk-docs", "10", "-o", "d.ndjson", "d.ndjson"],
        "\(program): d.ndjson: error: the output file is also an input (d.ndjson); --list,"
          + " --check and --bulk-docs do not write its documents back as they were, so it is not"
          + " replaced\n"
      ))
    cases.append(
      (
        ["--push", "-o", "", "d.ndjson"], usageError("-o needs a file name (- for standard output)")
      ))
    for (arguments, message) in cases {
      let result = try CLI.run(arguments, in: scratch.directory)
      expectRun(result, stdout: "", stderr: message, status: 2)
      #expect(try scratch.read("d.ndjson") == dump)
      #expect(try strayFiles(scratch, expected: ["d.ndjson"]) == [], "\(arguments)")
    }
  }

  @Test("a signal that ends the run removes the temporary file")
  func signalRemovesTemporaryFile() throws {
    let scratch = try Scratch()
    let target = scratch.url("out.ndjson").path
    // The test runner blocks SIGTERM, and a child inherits the starting thread's mask: unblock
    // it while the program is started, so that the signal reaches it.
    var terminate = sigset_t()
    var previous = sigset_t()
    sigemptyset(&terminate)
    sigaddset(&terminate, SIGTERM)
    pthread_sigmask(SIG_UNBLOCK, &terminate, &previous)
    let started = Result { try CLI.start(["--push", "-o", target]) }
    pthread_sigmask(SIG_SETMASK, &previous, nil)
    let (process, input, _, _) = try started.get()
    input.fileHandleForWriting.write(Data(dump.utf8))
    // Wait for the temporary file (the hang guard of the suite bounds this).
    var temporary: [String] = []
    while temporary.isEmpty {
      temporary = try strayFiles(scratch, expected: [])
      if temporary.isEmpty { usleep(10_000) }
    }
    #expect(temporary.count == 1 && temporary[0].hasPrefix(".out.ndjson."), "\(temporary)")
    process.terminate()
    process.waitUntilExit()
    #expect(process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGTERM)
    #expect(try strayFiles(scratch, expected: []) == [])
  }

  @Test("a --rejects pipe whose reader goes ends the run quietly and leaves no temporary file")
  func rejectsPipeClosed() throws {
    let scratch = try Scratch()
    // More rejected text than a pipe holds, so that writes go on after the reader has gone
    // (each document's error message is not what this test is about).
    try scratch.write("in.ndjson", String(repeating: "[1,\"rejected\"]\n", count: 20_000))
    let result = try CLI.shell(
      "mkfifo p; head -c 1 p > /dev/null & \"$EXE\" --push --rejects p -o out.ndjson in.ndjson 2>/dev/null;"
        + " echo \"status $?\"; wait",
      in: scratch.directory)
    expectRun(result, stdout: "status 141\n", stderr: "", status: 0)
    #expect(try strayFiles(scratch, expected: ["in.ndjson", "p"]) == [])
  }

  @Test("--rejects naming the output's temporary file by its descriptor (/proc/self/fd) is refused")
  func rejectsThroughDescriptor() throws {
    let scratch = try Scratch()
    try scratch.write("d.ndjson", broken)
    // The temporary file is the first file the run opens: descriptor 3.
    for (rejects, output) in [
      ("/proc/self/fd/3", "d.ndjson"), ("/dev/fd/3", "d.ndjson"), ("/proc/self/fd/3", "new.ndjson"),
    ] {
      let result = try CLI.run(
        ["--push", "--rejects", rejects, "-o", output, "d.ndjson"], in: scratch.directory)
      expectRun(
        result, stdout: "",
        stderr: "\(program): \(rejects): error: the rejects file is also the output file; refusing"
          + " to write both to one file\n",
        status: 2)
      #expect(try scratch.read("d.ndjson") == broken)
      #expect(try strayFiles(scratch, expected: ["d.ndjson"]) == [])
    }
  }

  @Test("-o naming standard output's own file writes to standard output, as -o - (>> appends)")
  func standardOutputByName() throws {
    let scratch = try Scratch()
    try scratch.write("d.ndjson", dump)
    try scratch.write("log", "earlier\n")
    let result = try CLI.shell(
      "{ echo header; \"$EXE\" --push -o /dev/stdout d.ndjson; echo footer; } >> log",
      in: scratch.directory)
    expectRun(result, stdout: "", stderr: "", status: 0)
    #expect(try scratch.read("log") == "earlier\nheader\n" + pushed(dump) + "footer\n")
  }

  @Test("in place, an input whose broken rest went to --rejects is replaced (list framing)")
  func abandonedRestInRejects() throws {
    let scratch = try Scratch()
    try scratch.write("l.json", "[\n{\"_id\":\"a\"},\n{\"_id\":\"b\",\n")
    let result = try CLI.run(
      ["--push", "--format", "list", "--rejects", "r.txt", "-o", "l.json", "l.json"],
      in: scratch.directory)
    expectRun(
      result, stdout: "",
      stderr:
        "\(program): l.json:4:1: error: document \"b\": malformed JSON: truncated document (the"
        + " input ends inside it); the rest of the input (3:1 to 3:11) is not converted\n",
      status: 1)
    #expect(try scratch.read("l.json") == "[\n{\"_id\":\"a\"}\n]\n")
    #expect(try scratch.read("r.txt") == "{\"_id\":\"b\",\n")
  }

  @Test("a link to a file not made yet: the file is made where it points, the link stays")
  func danglingLink() throws {
    let scratch = try Scratch()
    try scratch.write("d.ndjson", dump)
    try FileManager.default.createDirectory(
      at: scratch.url("sub"), withIntermediateDirectories: false)
    try FileManager.default.createSymbolicLink(
      atPath: scratch.url("link").path, withDestinationPath: "sub/new.ndjson")
    // The link's target is the output file: a rejects file of that name is refused.
    expectRun(
      try CLI.run(
        ["--push", "-o", "link", "--rejects", "sub/new.ndjson", "d.ndjson"],
        in: scratch.directory), stdout: "",
      stderr:
        "\(program): sub/new.ndjson: error: the rejects file is also the output file; refusing to"
        + " write both to one file\n",
      status: 2)
    #expect(!FileManager.default.fileExists(atPath: scratch.url("sub/new.ndjson").path))
    expectRun(
      try CLI.run(["--push", "-o", "link", "d.ndjson"], in: scratch.directory), stdout: "",
      stderr: "", status: 0)
    #expect(try scratch.read("sub/new.ndjson") == pushed(dump))
    #expect(
      try FileManager.default.destinationOfSymbolicLink(atPath: scratch.url("link").path)
        == "sub/new.ndjson")
  }

  @Test("in place keeps the owner, the group and set-id bits (when run as root)")
  func ownership() throws {
    guard getuid() == 0 else { return }
    let scratch = try Scratch()
    try scratch.write("d.ndjson", dump)
    let path = scratch.url("d.ndjson").path
    #expect(chown(path, 1234, 5678) == 0 && chmod(path, 0o4751) == 0)
    expectRun(
      try CLI.run(["--push", "-o", "d.ndjson", "d.ndjson"], in: scratch.directory), stdout: "",
      stderr: "", status: 0)
    var info = stat()
    #expect(stat(path, &info) == 0)
    #expect(info.st_uid == 1234 && info.st_gid == 5678 && info.st_mode & 0o7777 == 0o4751)
    #expect(try scratch.read("d.ndjson") == pushed(dump))
  }

  @Test("a write that fails says the file was not written, and leaves no temporary file")
  func failedWriteNotice() throws {
    let scratch = try Scratch()
    let documents = (0..<4000).map {
      "{\"_id\":\"d\($0)\",\"pad\":\"" + String(repeating: "x", count: 60) + "\"}\n"
    }
    try scratch.write("in.ndjson", documents.joined())
    try scratch.write("out.ndjson", "old\n")
    let result = try CLI.shell(
      "ulimit -f 100; \"$EXE\" --push -j 1 -o out.ndjson in.ndjson", in: scratch.directory)
    expectRun(
      result, stdout: "",
      stderr: "\(program): out.ndjson: error: write failed: File too large\n"
        + "\(program): out.ndjson: error: not replaced, because the run failed; the file is as"
        + " it was\n",
      status: 2)
    #expect(try scratch.read("out.ndjson") == "old\n")
    #expect(try strayFiles(scratch, expected: ["in.ndjson", "out.ndjson"]) == [])
  }
}
