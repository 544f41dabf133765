/// Every option of the command line, once: the parser looks names up here (for "did you mean"
/// and bundled short flags), `--help` is made from it, and a test checks the man page against
/// `--help`.
struct OptionSpec {
  /// `--push`.
  let long: String
  /// `k` for `-k`.
  let short: Character?
  /// The value's placeholder in the help (`N`, `FILE`), or nil for a flag.
  let value: String?
  /// The help text, one string per line.
  let help: [String]
  let isMode: Bool

  init(
    _ long: String, short: Character? = nil, value: String? = nil, mode: Bool = false,
    _ help: String...
  ) {
    self.long = long
    self.short = short
    self.value = value
    self.help = help
    isMode = mode
  }

  var takesValue: Bool { value != nil }
}

let optionTable: [OptionSpec] = [
  OptionSpec(
    "--push", mode: true, "add an \"_attachments\" entry for every blob, named by its path",
    "($.photos.thumbnail); entries an earlier push made are replaced"),
  OptionSpec(
    "--pull", mode: true, "remove the \"_attachments\" entries whose digest matches a blob, and",
    "\"_attachments\" itself when nothing is left"),
  OptionSpec(
    "--upgrade", mode: true, "move legacy attachments (Couchbase Lite 1.x, CouchDB, PouchDB)",
    "into blobs under --into PROPERTY (default attachments); md5-",
    "digests re-hashed to SHA-1 when the bytes are inline"),
  OptionSpec(
    "--list", mode: true, "one NDJSON row per attachment (blob or legacy): id, line, kind, name,",
    "pointer, digest, length, content_type"),
  OptionSpec(
    "--check", mode: true, "one NDJSON finding per problem Sync Gateway or Couchbase Lite",
    "would refuse or a conversion would lose; a summary on standard error"),
  OptionSpec(
    "--naming", value: "NAMING", "jsonpath ($.a.b[2], the default) or litecore (blob_/a/b/2, with",
    "\"stub\":true and \"revpos\", as Couchbase Lite 2.1+ sends)"),
  OptionSpec(
    "--revpos", value: "N", "the revpos of litecore entries (default: the _rev generation, or 1)"),
  OptionSpec(
    "--format", value: "FORMAT", "lines (default: whitespace-separated documents, NDJSON), list",
    "(one JSON array of documents, as cbexport --format list writes),",
    "or a REST API body, converted in place: changes (.results[].doc),",
    "all-docs (.rows[].doc), bulk-docs (.docs[]), bulk-get",
    "(.results[].docs[].ok, CouchDB's JSON), or multipart (a MIME",
    "body: _bulk_get's multipart/mixed, a document's multipart/related)"),
  OptionSpec(
    "--boundary", value: "B", "--format multipart: the body's boundary (default: its first line",
    "that starts with --)"),
  OptionSpec(
    "--inline", "--format multipart: put each part's bytes back as \"data\" instead of",
    "storing them in --blobs DIR (push always does)"),
  OptionSpec(
    "--docs", value: "PATH", "where the documents are in each input value: a jq path of .NAME,",
    ".\"any key\" and [] steps (.doc for a continuous _changes feed)"),
  OptionSpec(
    "--bulk-docs", value: "N", "write _bulk_docs request bodies of N documents, one per line"),
  OptionSpec(
    "--new-edits", value: "false", "with --bulk-docs: bodies end with \"new_edits\":false"),
  OptionSpec(
    "--couchdb-max-document-size", value: "BYTES",
    "--check: CouchDB's [couchdb] max_document_size (default",
    "8000000; 0: not checked), for couchdb-document-too-large"),
  OptionSpec(
    "--blobs", value: "DIR", "carry attachment bytes to and from a Couchbase Lite blob store",
    "(DIR is .../Attachments or the .cblite2 folder): push writes",
    "\"data\" read from the files, pull stores \"data\" as files; both",
    "check every body against its digest and length"),
  OptionSpec("--into", value: "PROPERTY", "--upgrade: the top-level property the new blobs go in"),
  OptionSpec(
    "--update-blobs", "--pull: match entries by the place their name gives (blob_/…, $…),",
    "and copy a replaced attachment's digest, length and type into",
    "its blob, as Couchbase Lite's replicator does"),
  OptionSpec(
    "--missing-blobs", value: "error|stub",
    "push --blobs: a missing file rejects the document (error, the",
    "default) or makes a stub with a warning"),
  OptionSpec(
    "--output", short: "o", value: "FILE", "write to FILE instead of standard output, replacing it",
    "only at the end of a run that did not fail; FILE may be an",
    "input (converted in place, and replaced only if nothing was lost)"),
  OptionSpec(
    "--keep-going", short: "k", "report a bad document and go on with the next (default: stop)"),
  OptionSpec(
    "--rejects", value: "FILE", "save each bad document's original text to FILE (implies -k)"),
  OptionSpec(
    "--strict", "treat warnings as errors (a blob without a digest, an entry",
    "pull keeps for its bytes, an entry upgrade leaves, a blob",
    "--update-blobs does not update)"),
  OptionSpec("--stats", "print a summary on standard error at the end"),
  OptionSpec("--progress", "show progress on standard error while running (terminal only)"),
  OptionSpec(
    "--jobs", short: "j", value: "N", "convert on N threads; output stays in input order",
    "(default: the number of processors, at most 8)"),
  OptionSpec("--unbuffered", "write each document as soon as it is converted"),
  OptionSpec("--help", short: "h", "show this help and exit"),
  OptionSpec("--version", "show the version and exit"),
]

extension OptionSpec {
  /// The option's lines in `--help`: names from column 3, the text from column 26 (on the next
  /// line when the names are longer).
  var helpLines: [String] {
    var names = (short.map { "  -\($0), " } ?? "      ") + long
    if let value { names += " " + value }
    let indent = String(repeating: " ", count: 25)
    if names.count <= 23 {
      let first = names + String(repeating: " ", count: 25 - names.count) + help[0]
      return [first] + help.dropFirst().map { indent + $0 }
    }
    return [names] + help.map { indent + $0 }
  }

  /// The option `name` (`--push`, `-k`) stands for.
  static func named(_ name: String) -> OptionSpec? {
    if name.hasPrefix("--") { return optionTable.first { $0.long == name } }
    guard name.count == 2, let letter = name.last else { return nil }
    return optionTable.first { $0.short == letter }
  }

  /// The long option closest to a mistyped `name`, when one is close enough to be meant; or
  /// the one option that `name` begins, when it is cut short (`--keep`). Options are never
  /// taken abbreviated: a later option could make an abbreviation ambiguous.
  static func suggestion(for name: String) -> String? {
    // A short option in the other case (`-J2`, `-O`).
    if !name.hasPrefix("--"), name.count == 2, let letter = name.last,
      let spec = optionTable.first(where: {
        $0.short.map { String($0).lowercased() == String(letter).lowercased() } == true
      })
    {
      return "-" + String(spec.short!)
    }
    let typed = Array(name.hasPrefix("--") ? name.dropFirst(2) : name.drop { $0 == "-" })
    guard typed.count >= 2 else { return nil }
    var best: (distance: Int, long: String)? = nil
    for spec in optionTable {
      let candidate = Array(spec.long.dropFirst(2))
      let distance = editDistance(typed, candidate)
      if distance <= max(1, candidate.count / 3), distance < (best?.distance ?? .max) {
        best = (distance, spec.long)
      }
    }
    if let best { return best.long }
    guard typed.count >= 3 else { return nil }
    let begun = optionTable.filter { $0.long.dropFirst(2).hasPrefix(String(typed)) }
    return begun.count == 1 ? begun[0].long : nil
  }
}

/// The spelling among `words` closest to `typed` (within a third of its length), for a "did you
/// mean" after a value that is none of them.
func closest(to typed: String, among words: [String]) -> String? {
  let best = words.map { (editDistance(Array(typed), Array($0)), $0) }.min { $0.0 < $1.0 }
  guard let best, best.0 <= max(1, best.1.count / 3) else { return nil }
  return best.1
}

/// The Damerau-Levenshtein distance (adjacent swaps count one) between two spellings.
func editDistance(_ a: [Character], _ b: [Character]) -> Int {
  if a.isEmpty { return b.count }
  if b.isEmpty { return a.count }
  var previous2 = [Int](repeating: 0, count: b.count + 1)
  var previous = Array(0...b.count)
  var current = [Int](repeating: 0, count: b.count + 1)
  for i in 1...a.count {
    current[0] = i
    for j in 1...b.count {
      let cost = a[i - 1] == b[j - 1] ? 0 : 1
      current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
      if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
        current[j] = min(current[j], previous2[j - 2] + 1)
      }
    }
    (previous2, previous, current) = (previous, current, previous2)
  }
  return previous[b.count]
}

/// Splits bundled short flags as getopt does: `-kj2` is `-k -j2`, `-kj 2` is `-k -j 2`. The
/// value of an option (`--revpos -5`, `-j -1`) and everything after `--` stay as they are.
func unbundledShortFlags(_ arguments: [String]) -> [String] {
  var result: [String] = []
  var optionsEnded = false
  var valueNext = false
  for argument in arguments {
    if valueNext {
      result.append(argument)
      valueNext = false
      continue
    }
    if optionsEnded || argument == "-" || !argument.hasPrefix("-") {
      result.append(argument)
      continue
    }
    if argument == "--" {
      optionsEnded = true
      result.append(argument)
      continue
    }
    if argument.hasPrefix("--") || argument.count == 2 {
      result.append(argument)
      valueNext = !argument.contains("=") && OptionSpec.named(argument)?.takesValue == true
      continue
    }
    var letters = argument.dropFirst()
    while let letter = letters.first {
      letters = letters.dropFirst()
      guard let spec = OptionSpec.named("-\(letter)") else {
        result.append("-\(letter)")  // unknown: the parser says so
        break
      }
      if spec.takesValue {
        result.append("-\(letter)" + letters)
        valueNext = letters.isEmpty
        break
      }
      result.append("-\(letter)")
    }
  }
  return result
}
