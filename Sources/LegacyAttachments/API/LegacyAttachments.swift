/// Converting documents held in memory.
///
/// ```swift
/// let pushed = try CBLAttachments.push(Array(#"{"a":{"@type":"blob","digest":"sha1-x"}}"#.utf8))
/// // {"a":{"@type":"blob","digest":"sha1-x"},"_attachments":{"$.a":{"digest":"sha1-x"}}}
/// let original = try CBLAttachments.pull(pushed)
/// ```
///
/// For files, pipes and file descriptors use ``StreamConverter``.
public enum CBLAttachments {
  /// Pushes one document: adds an `_attachments` entry for every blob. Returns the compact
  /// document without a trailing newline.
  public static func push(
    _ document: [UInt8], naming: EntryNaming = .jsonpath, revpos: Int? = nil
  ) throws(DocumentError) -> [UInt8] {
    try convert(document, options: ConversionOptions(mode: .push, naming: naming, revpos: revpos))
      .bytes
  }

  /// Pulls one document: removes the `_attachments` entries that match a blob by digest.
  public static func pull(_ document: [UInt8]) throws(DocumentError) -> [UInt8] {
    try convert(document, options: ConversionOptions(mode: .pull)).bytes
  }

  /// Converts exactly one document with `options` (framing, the document path, `_bulk_docs`
  /// bodies, keep-going and rejects do not apply). Returns the converted document, compact (for
  /// `.list` and `.check`, its rows, one per line, without the last newline). Errors (and, with
  /// `strict`, warnings) are thrown; warnings are returned. Options the command line refuses (`revpos: 0`, `naming`
  /// for pull) throw a diagnostic of kind ``ConversionDiagnostic/Kind/invalidOptions``.
  /// ``DocumentConverter`` does the same for many documents, faster.
  public static func convert(_ document: [UInt8], options: ConversionOptions) throws(DocumentError)
    -> ConvertedDocument
  {
    do throws(InvalidOptions) {
      try options.validateConversion()
    } catch {
      throw DocumentError(
        diagnostic: ConversionDiagnostic(
          severity: .error, kind: .invalidOptions, line: 1, column: 1, message: error.message))
    }
    var single = options
    single.framing = .lines
    single.documents = .root
    single.bulkDocs = nil
    single.keepGoing = false
    let result = convertStream(document, options: single)
    if let error = result.diagnostics.first(where: { $0.severity == .error }) {
      throw DocumentError(diagnostic: error)
    }
    guard result.statistics.documents == 1 else {
      throw DocumentError(
        diagnostic: ConversionDiagnostic(
          severity: .error, kind: .notOneDocument, line: 1, column: 1,
          message: result.statistics.documents == 0
            ? Messages.noDocument : Messages.severalDocuments))
    }
    var bytes = result.output
    if bytes.last == 0x0A { bytes.removeLast() }
    return ConvertedDocument(bytes: bytes, warnings: result.diagnostics)
  }

  /// Converts a whole stream held in memory, fed to the engine `chunkSize` bytes at a time
  /// (any size from 1 up gives the same result). Options the command line refuses
  /// (``ConversionOptions/validate()``) convert nothing: the result holds one diagnostic of kind
  /// ``ConversionDiagnostic/Kind/invalidOptions``.
  public static func convertStream(
    _ input: [UInt8], options: ConversionOptions, chunkSize: Int = 1 << 16
  ) -> StreamResult {
    convertStream(input, options: options, chunkSize: chunkSize, capacities: .standard)
  }

  /// ``convertStream(_:options:chunkSize:)`` with the engine's buffers starting at `capacities`,
  /// and, unless `keepsRejects`, rejected text only counted and reported as skipped (as the
  /// command line does without `--rejects`).
  @_spi(Testing) public static func convertStream(
    _ input: [UInt8], options: ConversionOptions, chunkSize: Int = 1 << 16,
    capacities: EngineCapacities, keepsRejects: Bool = true
  ) -> StreamResult {
    var refused = StreamResult()
    do throws(InvalidOptions) {
      try options.validate()
    } catch {
      // Nothing is converted with options the command line refuses.
      refused.diagnostics.append(
        ConversionDiagnostic(
          severity: .error, kind: .invalidOptions, line: 1, column: 1, message: error.message))
      return refused
    }
    let engine = ConversionEngine(
      options: options, keepsRejects: keepsRejects, capacities: capacities)
    var result = StreamResult()
    let bodies = BodyAssembler.forRun(options)
    func append(_ bytes: UnsafeRawBufferPointer) {
      guard let bodies else { return result.output.append(contentsOf: bytes) }
      bodies.append(lines: bytes) { result.output.append(contentsOf: $0) }
    }
    func collect() {
      engine.deliver(
        output: { append($0) },
        rejects: { bytes, _ in result.rejects.append(contentsOf: bytes) },
        diagnostic: { result.diagnostics.append($0) })
    }
    input.withUnsafeBytes { bytes in
      var offset = 0
      let step = max(1, chunkSize)
      while offset < bytes.count && engine.stop == nil {
        let end = min(bytes.count, offset + step)
        engine.feed(UnsafeRawBufferPointer(rebasing: bytes[offset..<end]))
        collect()
        offset = end
      }
    }
    result.outcome = engine.finishReading()
    engine.finishOutput()
    collect()
    bodies?.finish { result.output.append(contentsOf: $0) }
    result.failure = engine.fatalFailure
    result.statistics = engine.statistics
    result.statistics.bytesOut = result.output.count
    return result
  }
}

/// One converted document and the warnings it raised.
public struct ConvertedDocument: Sendable, Equatable {
  /// The compact document, without a trailing newline.
  public var bytes: [UInt8]
  /// The warnings the document raised, in input order (an error is thrown instead).
  public var warnings: [ConversionDiagnostic]
}

/// A document that could not be converted.
public struct DocumentError: Error, Sendable, Equatable, CustomStringConvertible {
  /// What is wrong, and where in the document given (line and column).
  public var diagnostic: ConversionDiagnostic
  public var description: String { diagnostic.description }
}

/// Everything a stream conversion produced.
public struct StreamResult: Sendable, Equatable {
  /// Converted documents (or `--list`/`--check` rows).
  public var output: [UInt8] = []
  /// Original text of rejected documents, each ending in a newline.
  public var rejects: [UInt8] = []
  /// Every warning and error, in input order.
  public var diagnostics: [ConversionDiagnostic] = []
  /// The run's counters (`--stats`); `bytesOut` is `output.count`.
  public var statistics = ConversionStatistics()
  /// Whether the whole input was read, or a bad document or a broken `list` array ended it.
  public var outcome: InputOutcome = .completed
  /// A failure of the blob store (`--blobs`) that ended the conversion.
  public var failure: ConversionIOError? = nil
}
