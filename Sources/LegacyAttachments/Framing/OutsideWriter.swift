/// What the framer writes around the documents, laid out as ``OutputStyle`` says: the envelope
/// copied through compactly, the separators between values, the line that ends each input
/// value, and the merged list's brackets and commas (`--format list`).
struct OutsideWriter {
  let style: OutputStyle
  /// `--format list`: the input is one array, whose elements go into one merged list.
  let listFraming: Bool
  /// Whether the output is one compact value per input value.
  let writesValues: Bool
  /// The separator the next document's output starts with (`:`, `,`, a list's line break).
  var pendingSeparator: StaticString? = nil
  /// Whether something was written for the current input value (a line to end).
  var wroteValue = false
  /// List framing: the input's array has closed.
  var listClosed = false
  /// List framing: elements written, over all inputs (the merged list's commas).
  var listElements = 0
  /// ``listElements`` when the current batch began (a worker's batches each count their own).
  var listElementsAtBatchStart = 0

  init(options: ConversionOptions) {
    style = OutputStyle(options: options)
    listFraming = options.framing == .list
    writesValues = style == .values
  }

  /// Forgets the current input value (a new input, or the rest of this one skipped).
  mutating func restart() {
    pendingSeparator = nil
    wroteValue = false
    listClosed = false
  }

  /// Copies an envelope token, after its separator.
  @inline(__always)
  func write(
    _ token: EnvelopeToken, separator: UInt8, view: InputView, suppressed: Bool,
    results: inout Results
  ) {
    guard style.writesEnvelope, !suppressed else { return }
    if separator != 0 { results.output.append(separator) }
    results.output.append(view.bytes(from: token.start, to: token.end))
  }

  /// Copies the first token of an envelope value (a scalar, or a container's bracket), after
  /// its separator (a list element's: the merged list's).
  @inline(__always)
  mutating func writeValueStart(
    _ token: EnvelopeToken, separator: UInt8, inList: Bool, view: InputView, suppressed: Bool,
    results: inout Results
  ) {
    guard style.writesEnvelope, !suppressed else { return }
    if inList {
      results.output.append(listElements == 0 ? "[\n" : ",\n")
    } else if separator != 0 {
      results.output.append(separator)
    }
    results.output.append(view.bytes(from: token.start, to: token.end))
    wroteValue = true
  }

  /// The separator text written before a value that starts after `separator` (`,` or `:`, or
  /// 0), in a list element (`inList`) or not.
  func separatorText(_ separator: UInt8, inList: Bool) -> StaticString? {
    if inList { return listElements == 0 ? "[\n" : ",\n" }
    switch separator {
    case UInt8(ascii: ","): return ","
    case UInt8(ascii: ":"): return ":"
    default: return nil
    }
  }

  /// Copies the compact text of envelope members or a value the scanner read through, after
  /// the pending separator.
  mutating func copy(
    _ text: UnsafeBufferPointer<UInt8>, endsValue: Bool, suppressed: Bool, results: inout Results
  ) {
    if style.writesEnvelope && !suppressed {
      if let separator = pendingSeparator { results.output.append(separator) }
      results.output.append(text)
      if endsValue { wroteValue = true }
    }
    pendingSeparator = nil
  }

  /// An input value that is itself a document has ended: its line ends, when it was written.
  @inline(__always)
  mutating func endDocumentValue(results: inout Results) {
    if wroteValue { results.output.append(UInt8(ascii: "\n")) }
    wroteValue = false
  }

  /// An input value has ended: its line ends, when something was written of it.
  mutating func endValue(results: inout Results) {
    if writesValues && wroteValue { results.output.append(UInt8(ascii: "\n")) }
    wroteValue = false
  }

  /// Before an accepted document's converted text: its separator (`atTop`: the document is a
  /// whole input value).
  mutating func beginDocument(atTop: Bool, results: inout Results) {
    switch style {
    case .rows:
      return
    case .values, .mergedList:
      if let separator = pendingSeparator { results.output.append(separator) }
      if atTop && writesValues { wroteValue = true }
    case .bulkDocs:
      break
    }
    pendingSeparator = nil
  }

  /// After an accepted document's converted text: a `_bulk_docs` run's document ends its line
  /// (``BodyAssembler`` makes bodies of the lines).
  func endDocument(results: inout Results) {
    if style == .bulkDocs { results.output.append(UInt8(ascii: "\n")) }
  }

  /// At the end of the run: closes the merged list.
  func finish(results: inout Results) {
    switch style {
    case .mergedList:
      results.output.append(listElements == 0 ? "[\n]\n" : "\n]\n")
    case .rows, .values, .bulkDocs:
      break
    }
  }
}
