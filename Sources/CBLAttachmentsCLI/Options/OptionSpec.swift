/// One option of the command line, declared once in ``optionTable``: the parser reads it from
/// here (`read`, then `finish` once every option is read), `--help` and "did you mean" are made
/// from its names and help, and the man page's OPTIONS section from its `manual` text (a test
/// holds the man page to it; `make man` writes it).
struct OptionSpec: Sendable {
  /// `--push`.
  let long: String
  /// `k` for `-k`.
  let short: Character?
  /// The value's placeholder in the help (`N`, `FILE`), or nil for a flag.
  let value: String?
  /// The help text, one string per line.
  let help: [String]
  let isMode: Bool
  /// The option's item in the man page's OPTIONS section, in troff, after its `.TP`; nil for a
  /// mode (the MODES section describes those).
  let manual: String?
  /// Reads one use of the option: `spelling` as given (`-j`, `--jobs`), `value` its value (nil
  /// for a flag). Checks the value on its own.
  let read:
    @Sendable (inout ParsedOptions, _ spelling: String, _ value: String?) throws(UsageError) -> Void
  /// Once every option is read, for an option that was given: checks it against the mode and
  /// the other options, and applies what depends on them.
  let finish: (@Sendable (inout ParsedOptions) throws(UsageError) -> Void)?

  init(
    _ long: String, short: Character? = nil, value: String? = nil, mode: Bool = false,
    _ help: String..., manual: String? = nil,
    read: @escaping @Sendable (inout ParsedOptions, String, String?) throws(UsageError) -> Void,
    finish: (@Sendable (inout ParsedOptions) throws(UsageError) -> Void)? = nil
  ) {
    self.long = long
    self.short = short
    self.value = value
    self.help = help
    isMode = mode
    self.manual = manual
    self.read = read
    self.finish = finish
  }

  var takesValue: Bool { value != nil }
}

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
