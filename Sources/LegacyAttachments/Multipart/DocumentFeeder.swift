/// Converts documents handed over one at a time, each on a line of its own, with one engine:
/// line N is the body's Nth document, so rows and messages number documents as an NDJSON file
/// of them would.
///
/// The engine keeps going past a rejected document whatever the options say (the caller
/// decides when to stop). A document that leaves the engine inside a value (cut short) or
/// that is not exactly one value ends the engine's input there, so that it is reported as a
/// cut last line is, and the next document starts a new input at the next line.
final class DocumentFeeder {
  /// What one document became.
  struct Result {
    var output: [UInt8] = []
    var diagnostics: [ConversionDiagnostic] = []
    var rejected = false
  }

  private let engine: ConversionEngine
  /// Lines fed so far (documents handed over).
  private(set) var linesFed = 0

  init(options: ConversionOptions, store: BlobStore?, capacities: EngineCapacities) {
    var engineOptions = options
    engineOptions.keepGoing = true
    engineOptions.framing = .lines
    engineOptions.documents = .root
    engine = ConversionEngine(
      options: engineOptions, keepsRejects: false, capacities: capacities, store: store)
  }

  var statistics: ConversionStatistics { engine.statistics }

  /// Converts `text` (one line, without its line break).
  func convert(_ text: [UInt8]) throws(ConversionIOError) -> Result {
    let before = engine.statistics
    linesFed += 1
    text.withUnsafeBytes { engine.appendWholeInput($0) }
    withUnsafeBytes(of: UInt8(0x0A)) { engine.feed($0) }
    let documents = engine.statistics.documents - before.documents
    let whole = !engine.isInsideValue && documents == 1
    if !whole {
      _ = engine.finishReading()
      engine.beginBatch(first: TextPosition(line: linesFed + 1, column: 1), atInputStart: false)
    }
    if let failure = engine.fatalFailure { throw failure }
    var result = Result()
    engine.deliver(
      output: { result.output.append(contentsOf: $0) }, rejects: { _, _ in },
      diagnostic: { result.diagnostics.append($0) })
    result.rejected = result.diagnostics.contains { $0.severity == .error }
    if !whole && !result.rejected {
      result.rejected = true
      result.output = []
      result.diagnostics.append(
        ConversionDiagnostic(
          severity: .error, kind: .notOneDocument, line: linesFed, column: 1,
          message: documents == 0 ? Messages.noDocument : Messages.severalDocuments))
    }
    return result
  }

  /// The byte offset in `text` (one line) of the 1-based `column`, counted in Unicode scalars.
  static func byteOffset(ofColumn column: Int, in text: UnsafeBufferPointer<UInt8>) -> Int {
    var scalars = 1
    var index = 0
    while index < text.count && scalars < column {
      index += 1
      while index < text.count && text[index] & 0xC0 == 0x80 { index += 1 }
      scalars += 1
    }
    return index
  }
}
