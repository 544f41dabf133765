import Foundation
import Testing

// SPEC.md "Command line" and shared_decisions.md: usage errors are
// `cbl-attachments: error: MESSAGE` + `Try 'cbl-attachments --help' for more information.`,
// status 2, nothing on standard output and no input read.

@Suite("CLI: usage")
struct UsageTests {
  /// Standard input that must not be read (or at least not converted) on a usage error.
  private let input = Array("{\"a\":{\"@type\":\"blob\",\"digest\":\"d\"}}\n".utf8)

  @Test("no mode")
  func noMode() throws {
    let scratch = try Scratch()
    try scratch.write("in.json", input)
    expectRun(
      try CLI.run(["in.json"], stdin: input, in: scratch.directory), stdout: "",
      stderr: usageError("choose a mode: --push, --pull, --upgrade, --list or --check"), status: 2)
    expectRun(
      try CLI.run([], stdin: input), stdout: "",
      stderr: usageError("choose a mode: --push, --pull, --upgrade, --list or --check"), status: 2)
  }

  @Test("the README's first rows work on the bundled data as they are written")
  func readmeRowsRun() throws {
    let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
      .deletingLastPathComponent().deletingLastPathComponent()
    let readme = String(
      decoding: try Data(contentsOf: repository.appendingPathComponent("README.md")), as: UTF8.self)
    for command in [
      "cbl-attachments --push --blobs app.cblite2 --bulk-docs 100 app-dump.ndjson",
      "cbl-attachments --check --blobs app.cblite2 app-dump.ndjson",
      "cbl-attachments --list app-dump.ndjson",
    ] {
      #expect(readme.contains(command), "the README shows \(command)")
      let result = try CLI.run(
        command.split(separator: " ").dropFirst().map(String.init),
        in: repository.appendingPathComponent("examples/data"))
      #expect(
        result.status == 0 && (command.contains("--check") || !result.out.isEmpty),
        "\(command): \(result)")
      #expect(result.stderr.isEmpty || result.stderr.hasPrefix("cbl-attachments: checked 4"))
    }
  }

  @Test("a mode word without its dashes is named, as is a short option in the other case")
  func hints() throws {
    // With a mode given, the word is an input that cannot be opened: named as a mode too.
    let named = try CLI.run(["--push", "push"], stdin: input)
    #expect(named.status == 2)
    #expect(
      named.stderr
        == "cbl-attachments: push: error: cannot open: No such file or directory (a mode is"
        + " --push)\n")
    expectRun(
      try CLI.run(["push", "dump.ndjson"], stdin: input), stdout: "",
      stderr: usageError(
        "choose a mode: --push, --pull, --upgrade, --list or --check; 'push' is read as an"
          + " input file: did you mean '--push'?"), status: 2)
    expectRun(
      try CLI.run(["--push", "-J2"], stdin: input), stdout: "",
      stderr: usageError("unknown option '-J'; did you mean '-j'?"), status: 2)
    expectRun(
      try CLI.run(["--push", "--format=bulkdocs"], stdin: input), stdout: "",
      stderr: usageError(
        "--format must be lines, list, changes, all-docs, bulk-docs, bulk-get or multipart,"
          + " not 'bulkdocs'; did you mean 'bulk-docs'?"), status: 2)
    // Far from every option: no guess.
    expectRun(
      try CLI.run(["--push", "-Z"], stdin: input), stdout: "",
      stderr: usageError("unknown option '-Z'"), status: 2)
  }

  @Test("two modes")
  func twoModes() throws {
    expectRun(
      try CLI.run(["--push", "--pull"], stdin: input), stdout: "",
      stderr: usageError("choose one mode: --push and --pull were both given"), status: 2)
    expectRun(
      try CLI.run(["--list", "-k", "--check"], stdin: input), stdout: "",
      stderr: usageError("choose one mode: --list and --check were both given"), status: 2)
  }

  @Test("unknown option")
  func unknownOption() throws {
    expectRun(
      try CLI.run(["--push", "--frobnicate"], stdin: input), stdout: "",
      stderr: usageError("unknown option '--frobnicate'"), status: 2)
    expectRun(
      try CLI.run(["-x", "--push"], stdin: input), stdout: "",
      stderr: usageError("unknown option '-x'"), status: 2)
  }

  @Test("bad --naming, in both spellings")
  func badNaming() throws {
    expectRun(
      try CLI.run(["--push", "--naming", "xpath"], stdin: input), stdout: "",
      stderr: usageError("--naming must be jsonpath or litecore, not 'xpath'"), status: 2)
    expectRun(
      try CLI.run(["--push", "--naming=LiteCore"], stdin: input), stdout: "",
      stderr: usageError("--naming must be jsonpath or litecore, not 'LiteCore'"), status: 2)
  }

  @Test("--rejects - and --rejects '' are usage errors; ./- is a file called -")
  func rejectsDash() throws {
    let scratch = try Scratch()
    for (value, message) in [
      (
        "-",
        "--rejects - would mix the rejects into standard output; name a file (./- for a file"
          + " called -)"
      ),
      ("", "--rejects needs a file name"),
    ] {
      for arguments in [["--push", "--rejects", value], ["--push", "--rejects=" + value]] {
        expectRun(
          try CLI.run(arguments, stdin: Array("{\"a\":1}\n{\n".utf8), in: scratch.directory),
          stdout: "", stderr: usageError(message), status: 2)
      }
    }
    #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.directory.path) == [])
    let file = try CLI.run(
      ["--push", "--rejects", "./-"], stdin: Array("{\"a\":1}\n{\n".utf8), in: scratch.directory)
    #expect(file.status == 1 && file.out == "{\"a\":1}\n")
    #expect(try scratch.read("-") == "{\n")
  }

  @Test("an argument that is not UTF-8 is refused, not altered: no file is read or written")
  func argumentNotUTF8() throws {
    let scratch = try Scratch()
    // A Latin-1 file name, and a property name with a stray byte: as Strings they would name
    // another file and another property.
    let result = try CLI.shell(
      #"name=$(printf 'caf\351.ndjson'); printf '{"a":1}\n' > "$name"; "#
        + #""$EXE" --push --rejects rj.ndjson "$name"; echo "status $?"; test ! -e rj.ndjson || echo wrote"#,
      in: scratch.directory)
    expectRun(
      result, stdout: "status 2\n",
      stderr: usageError(
        "argument 4 is not valid UTF-8; names, paths and properties must be UTF-8"),
      status: 0)
    expectRun(
      try CLI.shell(#""$EXE" --upgrade --into "$(printf 'blobs\377')""#, stdin: input), stdout: "",
      stderr: usageError(
        "argument 3 is not valid UTF-8; names, paths and properties must be UTF-8"),
      status: 2)
  }

  @Test("an option's value missing at the end")
  func missingValue() throws {
    expectRun(
      try CLI.run(["--push", "--naming"], stdin: input), stdout: "",
      stderr: usageError("option --naming needs a value"), status: 2)
  }

  @Test("bad --format")
  func badFormat() throws {
    expectRun(
      try CLI.run(["--pull", "--format=ndjson"], stdin: input), stdout: "",
      stderr: usageError(
        "--format must be lines, list, changes, all-docs, bulk-docs, bulk-get or multipart,"
          + " not 'ndjson'"),
      status: 2)
  }

  @Test(
    "a --docs path outside the subset is a usage error",
    arguments: [
      "results[].doc", ".results[0].doc", ".", ".a..b", ".1a", #"."a"#, #"."\x""#, ".a[", "",
    ])
  func badDocsPath(_ path: String) throws {
    if path == "." {
      // `.` itself is the default path, and fine.
      let result = try CLI.run(["--pull", "--docs", path], stdin: input)
      #expect(result.status == 0)
      return
    }
    expectRun(
      try CLI.run(["--pull", "--docs", path], stdin: input), stdout: "",
      stderr: usageError(
        "--docs must be . or steps .NAME, .\"JSON string\" and [] (like .results[].doc), not '\(path)'"
      ), status: 2)
  }

  @Test("--docs with a named --format is a usage error (the format names its own path)")
  func docsWithNamedFormat() throws {
    expectRun(
      try CLI.run(["--push", "--format", "changes", "--docs", ".doc"], stdin: input), stdout: "",
      stderr: usageError(
        "--docs cannot be combined with --format changes, which names its own path"
          + " (.results[].doc); use --format lines or list with --docs"), status: 2)
  }

  @Test("--bulk-docs takes 1 to 1000000 documents, with --push or --pull only")
  func bulkDocsRange() throws {
    for value in ["0", "1000001", "-3", "x"] {
      expectRun(
        try CLI.run(["--push", "--bulk-docs", value], stdin: input), stdout: "",
        stderr: usageError("--bulk-docs must be a whole number from 1 to 1000000, not '\(value)'"),
        status: 2)
    }
    expectRun(
      try CLI.run(["--check", "--bulk-docs", "5"], stdin: input), stdout: "",
      stderr: usageError("--bulk-docs applies to --push, --pull and --upgrade only, not --check"),
      status: 2)
  }

  @Test("--new-edits needs --bulk-docs, and takes false")
  func newEdits() throws {
    expectRun(
      try CLI.run(["--push", "--new-edits", "false"], stdin: input), stdout: "",
      stderr: usageError("--new-edits applies to --bulk-docs only"), status: 2)
    expectRun(
      try CLI.run(["--push", "--bulk-docs", "2", "--new-edits", "no"], stdin: input), stdout: "",
      stderr: usageError("--new-edits must be false (or true), not 'no'"), status: 2)
  }

  @Test("--revpos without --naming litecore")
  func revposNeedsLitecore() throws {
    expectRun(
      try CLI.run(["--push", "--revpos", "3"], stdin: input), stdout: "",
      stderr: usageError("--revpos applies to --naming litecore only"), status: 2)
    expectRun(
      try CLI.run(["--push", "--naming=jsonpath", "--revpos=3"], stdin: input), stdout: "",
      stderr: usageError("--revpos applies to --naming litecore only"), status: 2)
    // With litecore naming it is accepted, in either order, and used.
    expectRun(
      try CLI.run(["--push", "--revpos=3", "--naming", "litecore"], stdin: input),
      stdout:
        "{\"a\":{\"@type\":\"blob\",\"digest\":\"d\"},\"_attachments\":{\"blob_/a\":{\"digest\":\"d\",\"stub\":true,\"revpos\":3}}}\n",
      stderr: "", status: 0)
  }

  @Test("--help and -h: the usage on standard output, status 0, no input read")
  func help() throws {
    let result = try CLI.run(["--help"], stdin: input)
    #expect(result.status == 0 && !result.signaled, "\(result)")
    #expect(result.stderr == "")
    #expect(
      result.out.hasPrefix(
        "Usage: cbl-attachments (--push | --pull | --upgrade | --list | --check) [OPTION]... [FILE]...\n"
      ),
      "\(result)")
    #expect(result.out.hasSuffix("\n"))
    // Every option of SPEC.md's command line is documented.
    for option in [
      "--push", "--pull", "--list", "--check", "--naming", "jsonpath", "litecore", "--revpos",
      "--format", "lines", "list", "-k, --keep-going", "--rejects FILE", "--strict", "--stats",
      "--progress", "-j, --jobs N", "--unbuffered", "-h, --help", "--version",
    ] {
      #expect(result.out.contains(option), "--help does not mention \(option)")
    }
    #expect(
      !result.out.contains("\"_attachments\":{\"$.a\""), "--help must not convert standard input")
    let short = try CLI.run(["-h"])
    expectRun(short, stdout: result.out, stderr: "", status: 0)
    // --help shows the help and exits, whatever else is on the command line; no file is read.
    let withMode = try CLI.run(["--push", "--help", "missing.json"])
    expectRun(withMode, stdout: result.out, stderr: "", status: 0)
  }

  @Test("--version: one line, `cbl-attachments X.Y.Z ...`, status 0")
  func version() throws {
    let result = try CLI.run(["--version"], stdin: input)
    #expect(result.status == 0 && !result.signaled, "\(result)")
    #expect(result.stderr == "")
    let lines = result.out.split(separator: "\n", omittingEmptySubsequences: false)
    #expect(lines.count == 2 && lines[1].isEmpty, "one line: \(result)")
    let words = lines[0].split(separator: " ")
    #expect(words.first == "cbl-attachments", "\(result)")
    let version = words.dropFirst().first.map(String.init) ?? ""
    let parts = version.split(separator: ".")
    #expect(parts.count == 3 && parts.allSatisfy { Int($0) != nil }, "X.Y.Z version: \(result)")
    // One version everywhere: the CHANGELOG's latest release (the tag) and the man page's title.
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
      .deletingLastPathComponent().deletingLastPathComponent()
    let changelog = try String(
      contentsOf: root.appendingPathComponent("CHANGELOG.md"), encoding: .utf8)
    let released = changelog.split(separator: "\n").first {
      $0.hasPrefix("## [") && !$0.contains("Unreleased")
    }
    #expect(
      released?.hasPrefix("## [\(version)]") == true, "CHANGELOG: \(released ?? "no release")")
    let manual = try String(
      contentsOf: root.appendingPathComponent("man/cbl-attachments.1"), encoding: .utf8)
    #expect(
      manual.contains("\"cbl-attachments \(version)\""), "the man page's .TH names \(version)")
  }

  @Test("--help and --version given a value are usage errors, like every flag that takes none")
  func flagsWithValues() throws {
    for flag in ["--help", "--version", "--push", "--strict", "--keep-going"] {
      let arguments = flag == "--push" ? ["--push=yes"] : ["--push", "\(flag)=x"]
      let name = flag == "--push" ? "--push" : flag
      expectRun(
        try CLI.run(arguments, stdin: input), stdout: "",
        stderr:
          "cbl-attachments: error: option \(name) takes no value\nTry 'cbl-attachments --help' for more information.\n",
        status: 2)
    }
  }

  @Test("`--` ends the options: a file named like an option")
  func doubleDash() throws {
    let scratch = try Scratch()
    try scratch.write("--pull", "{\"x\":1}\n")
    expectRun(
      try CLI.run(["--push", "--", "--pull"], in: scratch.directory), stdout: "{\"x\":1}\n",
      stderr: "", status: 0)
  }
}

@Suite("CLI: make demo")
struct DemoTests {
  @Test("make demo pushes the bundled dump and shows what push did to one document")
  func demo() throws {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
      .deletingLastPathComponent().deletingLastPathComponent()
    let result = try CLI.shell("scripts/demo.sh \"$EXE\"", in: root)
    #expect(result.status == 0, "\(result)")
    let lines = result.out.split(separator: "\n").map(String.init)
    #expect(
      lines.first
        == "$ cbl-attachments --push --stats examples/data/dump.ndjson > .build/demo/pushed.ndjson")
    #expect(lines.contains("What push did to product::124C41: its blobs stay where they are, and"))
    #expect(
      lines.contains {
        $0.hasPrefix("  $.photos.thumbnail: {\"content_type\":\"image/jpeg\",\"digest\":\"sha1-")
      })
    #expect(
      lines.contains("Everything else is byte for byte as it was (--pull gives the document back).")
    )
    #expect(lines.count < 20, "a short summary: \(lines.count) lines")
    #expect(result.stderr.hasPrefix("cbl-attachments: 20 documents, 20 blobs, 20 entries added"))
  }
}
