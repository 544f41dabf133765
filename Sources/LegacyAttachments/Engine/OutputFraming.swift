/// How converted documents are laid out in the output: one per line (`lines`), or as the elements
/// of one JSON array, one per line, merged over all inputs (`list`). `--list` and `--check` rows
/// are NDJSON either way.
struct OutputFraming {
  /// Whether the output is documents (push, pull) rather than rows.
  private let writesDocuments: Bool
  private let asList: Bool
  /// Elements written into the output array so far.
  private var elements = 0

  init(options: ConversionOptions) {
    writesDocuments = options.mode == .push || options.mode == .pull
    asList = options.framing == .list && writesDocuments
  }

  /// Before a converted document: `[` and a newline before the first element, a comma and a
  /// newline before the others.
  mutating func beginDocument(in output: inout ByteBuffer) {
    guard asList else { return }
    output.append(elements == 0 ? "[\n" : ",\n")
    elements += 1
  }

  /// After a converted document: its newline, in `lines` framing.
  func endDocument(in output: inout ByteBuffer) {
    if writesDocuments && !asList { output.append(UInt8(ascii: "\n")) }
  }

  /// At the end of the run: closes the array (`[\n]\n` when no element was written).
  mutating func finish(in output: inout ByteBuffer) {
    guard asList else { return }
    output.append(elements == 0 ? "[\n]\n" : "\n]\n")
  }
}
