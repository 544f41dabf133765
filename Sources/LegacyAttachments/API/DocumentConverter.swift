#if canImport(Glibc)
import Glibc
#endif

/// Converts one document after another with the same options, without per-call setup.
///
/// A converter keeps one engine (its buffers and yajl handle) for all its documents, so
/// converting many small documents costs about what streaming them does. It is a class: share
/// it within one thread, make one per thread for several.
///
/// ```swift
/// let converter = try DocumentConverter(options: ConversionOptions(mode: .push, naming: .litecore))
/// for document in documents {
///   do {
///     let converted = try converter.convert(document)
///     for warning in converted.warnings { print(warning) }
///     send(converted.bytes)
///   } catch {
///     print(error.diagnostic.kind, error.diagnostic.message)
///   }
/// }
/// ```
///
/// A document is rejected (thrown as ``DocumentError``) for the reasons the user guide gives (docs/guide.md, "Bad input"), for
/// warnings when `strict` is set, and with ``ConversionDiagnostic/Kind/notOneDocument`` when the bytes
/// hold no document or more than one. Diagnostics are located in the document itself (line 1 is
/// its first line).
public final class DocumentConverter {
  /// The options every document is converted with.
  public let options: ConversionOptions
  private var engine: ConversionEngine

  /// A converter for `options`, checked as the command line checks them: `revpos` must be at
  /// least 1 and only for push with the `litecore` naming, `updateBlobs` only for pull, a
  /// missing-blob stub only for push, `upgradeInto` a usable property name and only for
  /// upgrade, and framing, document paths, `_bulk_docs` bodies and keep-going, which apply to
  /// streams only, are refused.
  public init(options: ConversionOptions) throws(InvalidOptions) {
    try options.validateForSingleDocuments()
    self.options = options
    engine = Self.makeEngine(options)
  }

  private static func makeEngine(_ options: ConversionOptions) -> ConversionEngine {
    ConversionEngine(
      options: options, keepsRejects: true,
      capacities: EngineCapacities(input: 1 << 14, text: 1 << 12, output: 1 << 14))
  }

  /// Converts exactly one document (any JSON text with one value; surrounding whitespace is
  /// allowed). Returns the compact converted document (for `.list` and `.check`, its rows, one
  /// per line, without the last newline) and its warnings.
  public func convert(_ document: [UInt8]) throws(DocumentError) -> ConvertedDocument {
    if fastPath, let converted = convertOnTheOpenInput(document) { return converted }
    return try convertAsOneInput(document)
  }

  /// Whether documents may follow one another in one input of the engine: not for `list` and
  /// `check`, whose rows carry line numbers in their text.
  private var fastPath: Bool { options.mode != .list && options.mode != .check }
  /// Lines the engine's open input holds, before the next document.
  private var linesBefore = 0

  /// The common case, without making yajl's handle anew: the document and a newline go into the
  /// engine's open input, and a document that converts cleanly is returned, its warnings
  /// located in it. Anything else (an error, no document, several, a cut one, a byte-order
  /// mark) returns nil, after starting a fresh engine, and is converted as an input of its own,
  /// so that what it says is exactly what a fresh conversion says.
  private func convertOnTheOpenInput(_ document: [UInt8]) -> ConvertedDocument? {
    guard !document.starts(with: [0xEF, 0xBB, 0xBF]) else { return nil }
    // Locals, not properties: no exclusivity checks in the closures, and the array returned is
    // the one built.
    let engine = self.engine
    var output: [UInt8] = []
    var diagnostics: [ConversionDiagnostic] = []
    let documentsBefore = engine.statistics.documents
    var lines = 1
    document.withUnsafeBytes { bytes in
      // memchr: most documents are one line, and this is then one call.
      guard var position = bytes.baseAddress else { return }
      let end = position + bytes.count
      while position < end, let found = memchr(position, 0x0A, end - position) {
        lines += 1
        position = UnsafeRawPointer(found) + 1
      }
      engine.appendWholeInput(bytes)
    }
    withUnsafeBytes(of: UInt8(0x0A)) { engine.feed($0) }
    let clean =
      engine.stop == nil && !engine.isInsideValue
      && engine.statistics.documents - documentsBefore == 1
    engine.deliver(
      output: { output.append(contentsOf: $0) }, rejects: { _, _ in },
      diagnostic: { diagnostics.append($0) })
    guard clean, !diagnostics.contains(where: { $0.severity == .error }) else {
      self.engine = Self.makeEngine(options)
      linesBefore = 0
      return nil
    }
    let base = linesBefore
    linesBefore += lines
    if output.last == 0x0A { output.removeLast() }
    return ConvertedDocument(
      bytes: output,
      warnings: diagnostics.map { warning in
        var warning = warning
        warning.line -= base
        return warning
      })
  }

  /// A document as one input of its own: lines count from 1, a byte-order mark is read, a cut
  /// document is reported as such, and the engine is ready for the next one whatever happened.
  private func convertAsOneInput(_ document: [UInt8]) throws(DocumentError) -> ConvertedDocument {
    var output: [UInt8] = []
    var diagnostics: [ConversionDiagnostic] = []
    // The open input, if any, ends first (it holds only documents already converted).
    if linesBefore > 0 {
      _ = engine.finishReading()
      engine.deliver(output: { _ in }, rejects: { _, _ in }, diagnostic: { _ in })
      linesBefore = 0
    }
    let documentsBefore = engine.statistics.documents
    document.withUnsafeBytes { engine.appendWholeInput($0) }
    _ = engine.finishReading()
    let documents = engine.statistics.documents - documentsBefore
    engine.deliver(
      output: { output.append(contentsOf: $0) }, rejects: { _, _ in },
      diagnostic: { diagnostics.append($0) })
    if let error = diagnostics.first(where: { $0.severity == .error }) {
      throw DocumentError(diagnostic: error)
    }
    guard documents == 1 else {
      throw DocumentError(
        diagnostic: ConversionDiagnostic(
          severity: .error, kind: .notOneDocument, line: 1, column: 1,
          message: documents == 0 ? Messages.noDocument : Messages.severalDocuments))
    }
    if output.last == 0x0A { output.removeLast() }
    return ConvertedDocument(bytes: output, warnings: diagnostics)
  }
}

/// Options that a ``DocumentConverter`` (or the command line) refuses.
public struct InvalidOptions: Error, Sendable, Equatable, CustomStringConvertible {
  /// What is wrong, in the command line's words.
  public var message: String
  public var description: String { message }
}

extension ConversionOptions {
  /// The command line's checks, for options that convert single documents.
  func validateForSingleDocuments() throws(InvalidOptions) {
    func refuse(_ message: String) throws(InvalidOptions) { throw InvalidOptions(message: message) }
    try validateConversion()
    if framing != .lines || documents != .root {
      try refuse("framing and document paths apply to streams only")
    }
    if bulkDocs != nil { try refuse("_bulk_docs bodies apply to streams only") }
    if keepGoing {
      try refuse("keepGoing applies to streams only: each document is thrown or returned")
    }
  }

  /// The command line's checks, all of them: a `revpos` from 1, for push (and check) with the
  /// `litecore` naming; `naming` for push (and check); `updateBlobs` for pull; a missing-blob
  /// stub for push with a store; `upgradeInto` a usable property name, and only for upgrade; a
  /// CouchDB document size limit from 1; and a `_bulk_docs` body size from 1 to 1,000,000, for
  /// push, pull and upgrade only.
  ///
  /// ``DocumentConverter`` and ``CBLAttachments/convert(_:options:)`` check options themselves,
  /// and so does ``CBLAttachments/convertStream(_:options:chunkSize:)``; a ``StreamConverter``
  /// converts what it is given, so check its options with this first (as the command line
  /// does), and a blob store's folder with ``BlobStoreOptions/check(_:creating:)``.
  public func validate() throws(InvalidOptions) {
    func refuse(_ message: String) throws(InvalidOptions) { throw InvalidOptions(message: message) }
    try validateConversion()
    if let bulkDocs {
      if bulkDocs.documentsPerBody < 1 || bulkDocs.documentsPerBody > 1_000_000 {
        try refuse(
          "bulkDocs must hold from 1 to 1000000 documents a body, not \(bulkDocs.documentsPerBody)")
      }
      if mode != .push && mode != .pull && mode != .upgrade {
        try refuse("bulkDocs applies to push, pull and upgrade only")
      }
    }
  }

  /// The command line's checks of what the conversion itself does: `revpos` at least 1, for
  /// push (and check) with the `litecore` naming; `naming` for push (and check); `updateBlobs`
  /// for pull; a missing-blob stub for push with a store; `upgradeInto` a usable property
  /// name, and only for upgrade; a CouchDB document size limit from 1.
  func validateConversion() throws(InvalidOptions) {
    func refuse(_ message: String) throws(InvalidOptions) { throw InvalidOptions(message: message) }
    if let revpos {
      if revpos < 1 { try refuse("revpos must be a whole number from 1, not \(revpos)") }
      if mode != .push && mode != .check { try refuse("revpos applies to push only") }
      if naming != .litecore { try refuse("revpos applies to the litecore naming only") }
    }
    if naming != .jsonpath && mode != .push && mode != .check {
      try refuse("naming applies to push only")
    }
    if updateBlobs && mode != .pull { try refuse("updateBlobs applies to pull only") }
    if let limit = couchDBMaxDocumentSize, limit < 1 {
      try refuse(
        "couchDBMaxDocumentSize must be a whole number of bytes from 1 (nil: none), not \(limit)")
    }
    if blobs?.missing == .stub && mode != .push {
      try refuse("a missing-blob stub applies to push only")
    }
    if mode == .upgrade {
      if upgradeInto.isEmpty { try refuse("upgradeInto must not be empty") }
      if upgradeInto.hasPrefix("_") {
        try refuse("upgradeInto must not start with \"_\": Couchbase Lite strips such properties")
      }
    } else if upgradeInto != ConversionOptions.defaultUpgradeInto {
      try refuse("upgradeInto applies to upgrade only")
    }
  }
}
