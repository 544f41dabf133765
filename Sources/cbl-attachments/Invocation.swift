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
  /// `--` ends the options; `-` is standard input.
  static func parse(_ commandLine: [String]) throws(UsageError) -> Invocation {
    let arguments = unbundledShortFlags(commandLine)
    var invocation = Invocation()
    var naming: EntryNaming? = nil
    var namedFormat: String? = nil
    var bulkDocs: Int? = nil
    var newEdits: Bool? = nil
    var blobsPath: String? = nil
    var into: String? = nil
    var missingBlobs: MissingBlobs? = nil
    var couchDBMaxDocumentSize: Int? = nil
    var boundary: String? = nil
    var inlineBytes = false
    var index = 0
    var optionsEnded = false

    func value(for option: String, inline: String?) throws(UsageError) -> String {
      if let inline { return inline }
      index += 1
      guard index < arguments.count else {
        throw UsageError(message: "option \(option) needs a value")
      }
      return arguments[index]
    }

    func setMode(_ mode: ConversionMode, _ spelling: String) throws(UsageError) {
      if let previous = invocation.modeGiven, previous != spelling {
        throw UsageError(message: "choose one mode: \(previous) and \(spelling) were both given")
      }
      invocation.modeGiven = spelling
      invocation.options.mode = mode
    }

    while index < arguments.count {
      let argument = arguments[index]
      defer { index += 1 }
      if optionsEnded || argument == "-" || !argument.hasPrefix("-") {
        invocation.files.append(argument)
        continue
      }
      if argument == "--" {
        optionsEnded = true
        continue
      }
      var name = argument
      var inline: String? = nil
      if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
        name = String(argument[..<equals])
        inline = String(argument[argument.index(after: equals)...])
      } else if !argument.hasPrefix("--") && argument.count > 2,
        OptionSpec.named(String(argument.prefix(2)))?.takesValue == true
      {
        // A short option's value joined to it: -j4, -oout.ndjson.
        name = String(argument.prefix(2))
        inline = String(argument.dropFirst(2))
      }
      func noValue() throws(UsageError) {
        if inline != nil { throw UsageError(message: "option \(name) takes no value") }
      }
      switch name {
      case "--push":
        try noValue()
        try setMode(.push, name)
      case "--pull":
        try noValue()
        try setMode(.pull, name)
      case "--list":
        try noValue()
        try setMode(.list, name)
      case "--check":
        try noValue()
        try setMode(.check, name)
      case "--upgrade":
        try noValue()
        try setMode(.upgrade, name)
      case "--into":
        into = try value(for: name, inline: inline)
      case "--update-blobs":
        try noValue()
        invocation.options.updateBlobs = true
      case "--naming":
        let text = try value(for: name, inline: inline)
        guard let parsed = EntryNaming(rawValue: text) else {
          throw UsageError(message: "--naming must be jsonpath or litecore, not '\(text)'")
        }
        naming = parsed
      case "--revpos":
        let text = try value(for: name, inline: inline)
        guard let number = Int(text), number >= 1 else {
          throw UsageError(message: "--revpos must be a positive whole number, not '\(text)'")
        }
        invocation.options.revpos = number
      case "--format":
        let text = try value(for: name, inline: inline)
        invocation.multipart = nil
        if text == "multipart" {
          invocation.options.framing = .lines
          invocation.options.documents = .root
          invocation.multipart = MultipartOptions()
          namedFormat = text
        } else if let parsed = InputFraming(rawValue: text) {
          invocation.options.framing = parsed
          invocation.options.documents = .root
          namedFormat = nil
        } else if let path = namedEnvelopes[text] {
          invocation.options.framing = .lines
          invocation.options.documents = path
          namedFormat = text
        } else {
          let formats = [
            "lines", "list", "changes", "all-docs", "bulk-docs", "bulk-get", "multipart",
          ]
          throw UsageError(
            message:
              "--format must be lines, list, changes, all-docs, bulk-docs, bulk-get or multipart,"
              + " not '\(text)'"
              + (closest(to: text, among: formats).map { "; did you mean '\($0)'?" } ?? ""))
        }
      case "--boundary":
        let text = try value(for: name, inline: inline)
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty, bytes.count <= 200, !bytes.contains(where: { $0 < 0x20 || $0 > 0x7E })
        else {
          throw UsageError(
            message: "--boundary must be the boundary of the body's Content-Type (printable,"
              + " without the leading --), not '\(text)'")
        }
        boundary = text
      case "--inline":
        try noValue()
        inlineBytes = true
      case "--docs":
        let text = try value(for: name, inline: inline)
        do {
          invocation.documentPath = try DocumentPath(parsing: text)
        } catch {
          throw UsageError(message: "--docs must be \(DocumentPathError.rule), not '\(error.path)'")
        }
      case "--bulk-docs":
        let text = try value(for: name, inline: inline)
        guard let number = Int(text), number >= 1, number <= 1_000_000 else {
          throw UsageError(
            message: "--bulk-docs must be a whole number from 1 to 1000000, not '\(text)'")
        }
        bulkDocs = number
      case "--couchdb-max-document-size":
        let text = try value(for: name, inline: inline)
        guard let number = Int(text), number >= 0 else {
          throw UsageError(
            message: "--couchdb-max-document-size must be a whole number of bytes (0: no limit),"
              + " not '\(text)'")
        }
        couchDBMaxDocumentSize = number
      case "--blobs":
        let text = try value(for: name, inline: inline)
        guard !text.isEmpty else { throw UsageError(message: "--blobs needs a directory") }
        blobsPath = text
      case "--missing-blobs":
        let text = try value(for: name, inline: inline)
        guard let parsed = MissingBlobs(rawValue: text) else {
          throw UsageError(message: "--missing-blobs must be error or stub, not '\(text)'")
        }
        missingBlobs = parsed
      case "--new-edits":
        let text = try value(for: name, inline: inline)
        guard text == "false" || text == "true" else {
          throw UsageError(message: "--new-edits must be false (or true), not '\(text)'")
        }
        newEdits = text == "true"
      case "-k", "--keep-going":
        try noValue()
        invocation.options.keepGoing = true
      case "-o", "--output":
        let path = try value(for: name, inline: inline)
        guard !path.isEmpty else {
          throw UsageError(message: "\(name) needs a file name (- for standard output)")
        }
        invocation.outputPath = path == "-" ? nil : path
      case "--rejects":
        let path = try value(for: name, inline: inline)
        guard !path.isEmpty else { throw UsageError(message: "\(name) needs a file name") }
        // Where `-` names a stream elsewhere it would be standard output here, which carries
        // the converted documents: mixed with them the rejects could not be told apart.
        guard path != "-" else {
          throw UsageError(
            message: "\(name) - would mix the rejects into standard output; name a file"
              + " (./- for a file called -)")
        }
        invocation.rejectsPath = path
        invocation.options.keepGoing = true
      case "--strict":
        try noValue()
        invocation.options.strict = true
      case "--stats":
        try noValue()
        invocation.stats = true
      case "--progress":
        try noValue()
        invocation.progress = true
      case "-j", "--jobs":
        let text = try value(for: name, inline: inline)
        guard let number = Int(text), number >= 1, number <= 1024 else {
          throw UsageError(message: "\(name) must be a whole number from 1 to 1024, not '\(text)'")
        }
        invocation.jobs = number
      case "--unbuffered":
        try noValue()
        invocation.unbuffered = true
      case "-h", "--help":
        try noValue()
        invocation.help = true
      case "--version":
        try noValue()
        invocation.version = true
      default:
        let hint = OptionSpec.suggestion(for: name).map { "; did you mean '\($0)'?" } ?? ""
        throw UsageError(message: "unknown option '\(name)'" + hint)
      }
    }
    if invocation.help || invocation.version { return invocation }
    guard invocation.modeGiven != nil else {
      // `cbl-attachments push dump.ndjson`: the mode word is read as an input file.
      let word = invocation.files.first { ConversionMode(rawValue: $0) != nil }
      throw UsageError(
        message: "choose a mode: --push, --pull, --upgrade, --list or --check"
          + (word.map { "; '\($0)' is read as an input file: did you mean '--\($0)'?" } ?? ""))
    }
    let mode = invocation.options.mode
    if let into {
      guard mode == .upgrade else { throw UsageError(message: "--into applies to --upgrade only") }
      guard !into.isEmpty, !into.hasPrefix("_") else {
        throw UsageError(
          message:
            "--into must name a top-level property that does not start with _ (Couchbase Lite"
            + " removes those), not '\(into)'")
      }
      invocation.options.upgradeInto = into
    }
    if invocation.options.updateBlobs && mode != .pull {
      throw UsageError(message: "--update-blobs applies to --pull only")
    }
    if (naming != nil || invocation.options.revpos != nil) && mode != .push && mode != .check {
      throw UsageError(message: "--naming and --revpos apply to --push (and --check) only")
    }
    if let naming { invocation.options.naming = naming }
    if let couchDBMaxDocumentSize {
      guard mode == .check else {
        throw UsageError(message: "--couchdb-max-document-size applies to --check only")
      }
      invocation.options.couchDBMaxDocumentSize =
        couchDBMaxDocumentSize == 0 ? nil : couchDBMaxDocumentSize
    }
    if invocation.options.revpos != nil && invocation.options.naming != .litecore {
      throw UsageError(message: "--revpos applies to --naming litecore only")
    }
    if boundary != nil || inlineBytes {
      guard invocation.multipart != nil else {
        throw UsageError(
          message:
            "\(boundary != nil ? "--boundary" : "--inline") applies to --format multipart only")
      }
      invocation.multipart?.boundary = boundary
      invocation.multipart?.inline = inlineBytes
    }
    if let path = invocation.documentPath {
      if invocation.multipart != nil {
        throw UsageError(
          message: "--docs cannot be combined with --format multipart, whose documents are its"
            + " parts")
      }
      if let namedFormat {
        throw UsageError(
          message: "--docs cannot be combined with --format \(namedFormat), which names its own"
            + " path (\(namedEnvelopes[namedFormat]!)); use --format lines or list with --docs")
      }
      invocation.options.documents = path
    }
    if let missingBlobs {
      guard blobsPath != nil, invocation.options.mode == .push else {
        throw UsageError(message: "--missing-blobs applies to --push with --blobs only")
      }
      _ = missingBlobs
    }
    if let blobsPath {
      invocation.options.blobs = BlobStoreOptions(path: blobsPath, missing: missingBlobs ?? .error)
    }
    if newEdits != nil && bulkDocs == nil {
      throw UsageError(message: "--new-edits applies to --bulk-docs only")
    }
    if let bulkDocs {
      let mode = invocation.options.mode
      guard mode == .push || mode == .pull || mode == .upgrade else {
        throw UsageError(
          message:
            "--bulk-docs applies to --push, --pull and --upgrade only, not \(invocation.modeGiven!)"
        )
      }
      invocation.options.bulkDocs = BulkDocsOutput(
        documentsPerBody: bulkDocs, newEditsFalse: newEdits == false)
    }
    if invocation.files.isEmpty {
      invocation.files = ["-"]
      invocation.readsImpliedStandardInput = true
    }
    return invocation
  }
}
