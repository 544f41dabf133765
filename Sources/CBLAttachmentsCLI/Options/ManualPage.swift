/// The parts of the man page (`man/cbl-attachments.1`) made from ``optionTable``.
public enum ManualPage {
  /// The items of the OPTIONS section: for each option but the modes, in the order `--help`
  /// lists them, `.TP` and its ``OptionSpec/manual`` text. The page holds them from the
  /// section's first `.TP` to the next section; a test checks it, `make man` writes them.
  public static var optionItems: String {
    optionTable.compactMap { spec in spec.manual.map { ".TP\n" + $0 + "\n" } }.joined()
  }
}
