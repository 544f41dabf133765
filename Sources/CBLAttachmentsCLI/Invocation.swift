import LegacyAttachments

/// What the command line asked for.
struct Invocation {
  var options = ConversionOptions(mode: .push)
  var modeGiven: String? = nil
  var files: [String] = []
  /// Whether standard input is read because no input was named (not because of `-`).
  var readsImpliedStandardInput = false
  var rejectsPath: String? = nil
  /// `--output`: nil for standard output (also for `-o -`).
  var outputPath: String? = nil
  var stats = false
  var progress = false
  var jobs: Int? = nil
  var unbuffered = false
  var help = false
  var version = false
  /// `--docs`, applied once every option is read.
  var documentPath: DocumentPath? = nil
  /// `--format multipart`: how the MIME bodies are read.
  var multipart: MultipartOptions? = nil
}

/// The `--format` names of the common envelopes, and the path each stands for.
let namedEnvelopes: [String: DocumentPath] = [
  "changes": .changes, "all-docs": .allDocs, "bulk-docs": .bulkDocs, "bulk-get": .bulkGet,
]

/// A command line that cannot be run; the message says why.
struct UsageError: Error {
  var message: String
}

extension Invocation {
  /// The arguments after the program name, exactly as given. An argument that is not UTF-8 (a
  /// file name in another encoding, say) would reach a `String` changed, every bad byte made
  /// U+FFFD, and name another file or property than the one meant; it is refused instead.
  static func commandLineArguments() throws(UsageError) -> [String] {
    var arguments: [String] = []
    for index in 1..<Int(CommandLine.argc) {
      guard let pointer = CommandLine.unsafeArgv[index] else { break }
      guard let argument = String(validatingCString: pointer) else {
        throw UsageError(message: CommandMessages.argumentNotUTF8(position: index))
      }
      arguments.append(argument)
    }
    return arguments
  }

  /// Parses the arguments after the program name. Options take `--opt VALUE` or `--opt=VALUE`;
  /// `--` ends the options; `-` is standard input. Each option is read as ``optionTable``
  /// declares it; then, a mode being given, each option given is finished in the table's order.
  static func parse(_ commandLine: [String]) throws(UsageError) -> Invocation {
    let arguments = unbundledShortFlags(commandLine)
    var parsed = ParsedOptions()
    var index = 0
    var optionsEnded = false
    while index < arguments.count {
      let argument = arguments[index]
      index += 1
      if optionsEnded || argument == "-" || !argument.hasPrefix("-") {
        parsed.invocation.files.append(argument)
      } else if argument == "--" {
        optionsEnded = true
      } else {
        let (name, inline) = splitOption(argument)
        guard let spec = OptionSpec.named(name) else {
          let hint = OptionSpec.suggestion(for: name).map { "; did you mean '\($0)'?" } ?? ""
          throw UsageError(message: "unknown option '\(name)'" + hint)
        }
        var value = inline
        if !spec.takesValue && inline != nil {
          throw UsageError(message: "option \(name) takes no value")
        } else if spec.takesValue && inline == nil {
          guard index < arguments.count else {
            throw UsageError(message: "option \(name) needs a value")
          }
          value = arguments[index]
          index += 1
        }
        try spec.read(&parsed, name, value)
        if !parsed.given.contains(spec.long) { parsed.given.append(spec.long) }
      }
    }
    if parsed.invocation.help || parsed.invocation.version { return parsed.invocation }
    guard parsed.invocation.modeGiven != nil else {
      // `cbl-attachments push dump.ndjson`: the mode word is read as an input file.
      let word = parsed.invocation.files.first { ConversionMode(rawValue: $0) != nil }
      throw UsageError(
        message: "choose a mode: --push, --pull, --upgrade, --list or --check"
          + (word.map { "; '\($0)' is read as an input file: did you mean '--\($0)'?" } ?? ""))
    }
    for spec in optionTable where parsed.given.contains(spec.long) {
      try spec.finish?(&parsed)
    }
    if parsed.invocation.files.isEmpty {
      parsed.invocation.files = ["-"]
      parsed.invocation.readsImpliedStandardInput = true
    }
    return parsed.invocation
  }

  /// An option argument's name and the value joined to it: `--naming=litecore`, and a short
  /// option's (`-j4`, `-oout.ndjson`).
  private static func splitOption(_ argument: String) -> (name: String, inline: String?) {
    if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
      return (String(argument[..<equals]), String(argument[argument.index(after: equals)...]))
    }
    if !argument.hasPrefix("--") && argument.count > 2,
      OptionSpec.named(String(argument.prefix(2)))?.takesValue == true
    {
      return (String(argument.prefix(2)), String(argument.dropFirst(2)))
    }
    return (argument, nil)
  }
}
