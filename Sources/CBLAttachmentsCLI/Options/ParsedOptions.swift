import LegacyAttachments

/// What the options read so far say: the invocation they build, and the values whose meaning
/// depends on other options, kept until every option is read (``OptionSpec/finish``).
struct ParsedOptions {
  var invocation = Invocation()
  /// Which options were given (their long names), in the order first given.
  var given: [String] = []
  var naming: EntryNaming? = nil
  /// `--format NAME` for a named envelope or multipart (nil for lines and list).
  var namedFormat: String? = nil
  var bulkDocs: Int? = nil
  var newEdits: Bool? = nil
  var blobsPath: String? = nil
  var into: String? = nil
  var missingBlobs: MissingBlobs? = nil
  var couchDBMaxDocumentSize: Int? = nil
  var boundary: String? = nil
  var inlineBytes = false

  var mode: ConversionMode { invocation.options.mode }

  mutating func setMode(_ mode: ConversionMode, _ spelling: String) throws(UsageError) {
    if let previous = invocation.modeGiven, previous != spelling {
      throw UsageError(message: "choose one mode: \(previous) and \(spelling) were both given")
    }
    invocation.modeGiven = spelling
    invocation.options.mode = mode
  }

  /// `--format`: how documents are framed; the last one given counts.
  mutating func readFormat(_ text: String) throws(UsageError) {
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
      let formats = ["lines", "list", "changes", "all-docs", "bulk-docs", "bulk-get", "multipart"]
      throw UsageError(
        message:
          "--format must be lines, list, changes, all-docs, bulk-docs, bulk-get or multipart,"
          + " not '\(text)'"
          + (closest(to: text, among: formats).map { "; did you mean '\($0)'?" } ?? ""))
    }
  }

  /// `--docs`, once `--format` is known: a named format has its own path.
  mutating func applyDocumentPath() throws(UsageError) {
    guard let path = invocation.documentPath else { return }
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
}
