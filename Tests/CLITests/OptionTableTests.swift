import CBLAttachmentsCLI
import Foundation
import Testing

/// The options are written once (the executable's option table); `--help` is made from it. These
/// tests hold the man page and the parser to the same list, and check the getopt conveniences:
/// "did you mean" and bundled short flags.
@Suite("CLI: one list of options (help, parser, man page)")
struct OptionTableTests {
  let input = Array("{\"_id\":\"a\",\"f\":{\"@type\":\"blob\",\"digest\":\"sha1-x\"}}\n".utf8)

  /// (long name, short letter, value placeholder) of every option line in `--help`.
  static func helpOptions() throws -> [(long: String, short: String?, value: String?)] {
    let help = try CLI.run(["--help"]).out
    let pattern = try Regex(#"^(?:  -([a-z]), |      )(--[a-z0-9-]+)(?: (\S+))?(?:\s|$)"#)
    return help.split(separator: "\n").compactMap { line -> (String, String?, String?)? in
      guard let match = try? pattern.prefixMatch(in: String(line)) else { return nil }
      return (
        String(match.output[2].substring!), match.output[1].substring.map(String.init),
        match.output[3].substring.map(String.init)
      )
    }
  }

  /// The long options and short letters the man page's MODES and OPTIONS sections describe
  /// (the item lines after `.TP`).
  static func manualOptions() throws -> (long: Set<String>, short: Set<String>) {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
      .deletingLastPathComponent().deletingLastPathComponent()
    let manual = try String(
      contentsOf: root.appendingPathComponent("man/cbl-attachments.1"), encoding: .utf8)
    let lines = manual.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    guard let start = lines.firstIndex(of: ".SH MODES"),
      let end = lines.firstIndex(of: ".SH NAMING RULES")
    else { return ([], []) }
    var long = Set<String>()
    var short = Set<String>()
    let longPattern = try Regex(#"\\-\\-([a-z0-9\\-]+)"#)
    let shortPattern = try Regex(#"(?:^|[^-])\\-([a-z])(?![a-z\\])"#)
    for index in start..<end - 1 where lines[index].hasPrefix(".TP") {
      let item = lines[index + 1]
      guard item.hasPrefix(".B") else { continue }
      for match in item.matches(of: longPattern) {
        long.insert(
          "--" + String(match.output[1].substring!).replacingOccurrences(of: "\\-", with: "-"))
      }
      for match in item.matches(of: shortPattern) {
        short.insert(String(match.output[1].substring!))
      }
    }
    return (long, short)
  }

  @Test("the man page describes exactly the options --help lists, short letters included")
  func manualAgreesWithHelp() throws {
    let help = try Self.helpOptions()
    #expect(help.count > 20, "the help lists the options: \(help.count)")
    let manual = try Self.manualOptions()
    let helpLong = Set(help.map(\.long))
    #expect(
      helpLong.subtracting(manual.long).isEmpty,
      "not in the man page: \(helpLong.subtracting(manual.long).sorted())")
    #expect(
      manual.long.subtracting(helpLong).isEmpty,
      "not in --help: \(manual.long.subtracting(helpLong).sorted())")
    #expect(Set(help.compactMap(\.short)) == manual.short)
  }

  @Test("the guide's option table lists every option --help lists")
  func guideListsEveryOption() throws {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
      .deletingLastPathComponent().deletingLastPathComponent()
    let guide = try String(
      contentsOf: root.appendingPathComponent("docs/guide.md"), encoding: .utf8)
    // The first cell of each table row, where the guide names modes and options.
    let named = guide.split(separator: "\n").filter { $0.hasPrefix("| `-") }.map {
      $0.split(separator: "|", maxSplits: 1).first.map(String.init) ?? ""
    }.joined(separator: " ")
    let help = try Self.helpOptions()
    #expect(help.count > 20, "the help lists the options: \(help.count)")
    let missing = help.map(\.long).filter { !named.contains("`\($0)") && !named.contains(" \($0)") }
    #expect(missing.isEmpty, "not in the guide's tables: \(missing)")
  }

  @Test("the parser takes every option --help lists, in each spelling it shows")
  func parserTakesEveryOption() throws {
    let samples = [
      "NAMING": "jsonpath", "N": "1", "FORMAT": "lines", "PATH": ".", "false": "false",
      "DIR": "/tmp", "PROPERTY": "files", "error|stub": "stub", "FILE": "/dev/null",
      "BYTES": "8000000", "B": "b0undary",
    ]
    for option in try Self.helpOptions() {
      var spellings = [[option.long]]
      if let short = option.short { spellings.append(["-" + short]) }
      for var arguments in spellings {
        if let value = option.value {
          let sample = try #require(samples[value], "a sample value for \(value)")
          arguments.append(sample)
        }
        // --help ends the parse once every option was read: an unknown one is still an error.
        let result = try CLI.run(arguments + ["--help"], stdin: input)
        #expect(result.status == 0 && result.stderr.isEmpty, "\(arguments): \(result)")
      }
    }
  }

  @Test("a mistyped option gets a suggestion; a far one does not")
  func didYouMean() throws {
    for (typed, meant) in [
      ("--psuh", "--push"), ("--pul", "--pull"), ("--upgarde", "--upgrade"),
      ("--keep-goign", "--keep-going"), ("--rejetcs", "--rejects"), ("--stat", "--stats"),
      // Cut short: the one option it begins (never taken as that option).
      ("--keep", "--keep-going"), ("--unbuf", "--unbuffered"), ("--missing", "--missing-blobs"),
    ] {
      expectRun(
        try CLI.run(["--push", typed], stdin: input), stdout: "",
        stderr: usageError("unknown option '\(typed)'; did you mean '\(meant)'?"), status: 2)
    }
    expectRun(
      try CLI.run(["--push", "--frobnicate"], stdin: input), stdout: "",
      stderr: usageError("unknown option '--frobnicate'"), status: 2)
    // Too short to tell which option is meant (--pull or --push; --rejects or --revpos).
    for typed in ["--pu", "--re"] {
      expectRun(
        try CLI.run(["--push", typed], stdin: input), stdout: "",
        stderr: usageError("unknown option '\(typed)'"), status: 2)
    }
  }

  @Test("bundled short flags work as with getopt: -kj2, -kj 2, -kh")
  func bundledShortFlags() throws {
    let separate = try CLI.run(["--push", "-k", "-j", "2", "--stats"], stdin: input)
    #expect(separate.status == 0, "\(separate)")
    for bundle in [["-kj2"], ["-kj", "2"]] {
      let result = try CLI.run(["--push"] + bundle + ["--stats"], stdin: input)
      #expect(result.out == separate.out && result.status == 0, "\(bundle): \(result)")
    }
    let help = try CLI.run(["-kh"])
    #expect(help.status == 0 && help.out.hasPrefix("Usage: cbl-attachments"), "\(help)")
    expectRun(
      try CLI.run(["--push", "-kx"], stdin: input), stdout: "",
      stderr: usageError("unknown option '-x'"), status: 2)
    // A value that looks like a short flag is a value, not flags.
    expectRun(
      try CLI.run(["--push", "--naming", "litecore", "--revpos", "-50"], stdin: input), stdout: "",
      stderr: usageError("--revpos must be a positive whole number, not '-50'"), status: 2)
  }
}

/// The man page's OPTIONS items come from the option table. With `UPDATE_MANUAL=1` in the
/// environment (`make man`), the test writes them into the page instead of comparing.
@Suite("CLI: the man page's OPTIONS come from the option table")
struct ManualPageTests {
  @Test("man/cbl-attachments.1 holds exactly the items the table makes")
  func optionItemsComeFromTheTable() throws {
    let page = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
      .deletingLastPathComponent().deletingLastPathComponent()
      .appendingPathComponent("man/cbl-attachments.1")
    let manual = try String(contentsOf: page, encoding: .utf8)
    var lines = manual.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    let section = try #require(lines.firstIndex(of: ".SH OPTIONS"))
    let first = try #require(lines[section...].firstIndex(of: ".TP"))
    let end = try #require(lines.firstIndex(of: ".SH NAMING RULES"))
    let items = lines[first..<end].joined(separator: "\n") + "\n"
    if ProcessInfo.processInfo.environment["UPDATE_MANUAL"] == "1" {
      lines.replaceSubrange(
        first..<end,
        with: ManualPage.optionItems.split(separator: "\n", omittingEmptySubsequences: false)
          .dropLast().map(String.init))
      try lines.joined(separator: "\n").write(to: page, atomically: true, encoding: .utf8)
      return
    }
    #expect(items == ManualPage.optionItems, "run make man after changing the option table")
  }
}
