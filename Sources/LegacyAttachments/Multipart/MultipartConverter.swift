/// How a MIME multipart body is read (`--format multipart`).
public struct MultipartOptions: Sendable, Equatable {
  /// The body's boundary (without the leading `--`); nil takes it from the body's first line
  /// that starts with `--`.
  public var boundary: String?
  /// Put each attachment part's bytes back in its entry as `data` (base64) instead of storing
  /// them (`--inline`). Push always does.
  public var inline: Bool

  /// Options for a body with `boundary` (nil: found in the body), the bytes kept inline or not.
  public init(boundary: String? = nil, inline: Bool = false) {
    self.boundary = boundary
    self.inline = inline
  }
}

/// Converts MIME multipart bodies, as CouchDB and Sync Gateway send documents with their
/// attachments' bytes (`_bulk_get` as `multipart/mixed`, a document as `multipart/related`),
/// into converted documents, one per line, as ``StreamConverter`` writes them.
///
/// Each document is its JSON part and the parts its `"follows":true` entries name. Their bytes
/// are checked as they arrive against the entry's digest (of the bytes as sent) and lengths,
/// decoded when the part says `Content-Encoding: gzip`, and then stored in the blob store
/// (named by their SHA-1, the entry becoming a stub that names them), put back as `data`
/// (``MultipartOptions/inline``, and always for push), or dropped (no store: the entry becomes
/// the stub it stands for, with a warning). The document then converts as if it had come as
/// JSON. A part is never held whole, except as `data` asked for.
///
/// Messages are located by byte offset in the body
/// (``ConversionDiagnostic/byteOffset``); `--list` and `--check` rows give each document's
/// number in the body as its `line`. A rejected document's whole part goes to ``rejects``.
/// One thread converts (`jobs` does not apply).
public final class MultipartConverter {
  /// What the conversion does, as given.
  public let options: ConversionOptions
  /// How the body is read.
  public let multipart: MultipartOptions
  /// Where converted documents (or rows) go.
  public let output: any ByteSink
  /// Where the parts of rejected documents go, as they were in the body, if anywhere.
  public let rejects: (any ByteSink)?
  /// Called for every warning and error, with the name of the input it is in.
  public var diagnosticHandler: (ConversionDiagnostic, String) -> Void = { _, _ in }
  /// Called after each read with the bytes read so far from the current input.
  public var progressHandler: ((Int, ConversionStatistics) -> Void)? = nil
  /// Bytes asked of each read (tests set tiny sizes); sizes below 1 are taken as 1.
  public var readSize = 1 << 18 {
    didSet { if readSize < 1 { readSize = 1 } }
  }

  private let store: BlobStore?
  private let bodies: BodyAssembler?
  private let feeder: DocumentFeeder
  /// The thread that hashes large CouchDB parts' MD5 beside the SHA-1 (made when first needed).
  private lazy var sideHasher: SideHasher? = SideHasher()
  private let kept: BytesKept
  /// Counters of what the engine does not see (bytes, multipart errors and warnings).
  private var counted = ConversionStatistics()
  private var input: MultipartInput? = nil
  private var isFinished = false

  /// A converter of bodies with `options` and `multipart` to `output`, and of rejected
  /// documents' parts to `rejects` when it is given.
  public convenience init(
    options: ConversionOptions, multipart: MultipartOptions = MultipartOptions(),
    output: any ByteSink, rejects: (any ByteSink)? = nil
  ) {
    self.init(
      options: options, multipart: multipart, output: output, rejects: rejects,
      capacities: .standard)
  }

  @_spi(Testing) public init(
    options: ConversionOptions, multipart: MultipartOptions, output: any ByteSink,
    rejects: (any ByteSink)?, capacities: EngineCapacities
  ) {
    self.options = options
    self.multipart = multipart
    self.output = output
    self.rejects = rejects
    store = options.blobs.map { BlobStore(options: $0) }
    bodies = BodyAssembler.forRun(options)
    feeder = DocumentFeeder(options: options, store: store, capacities: capacities)
    kept =
      options.mode == .push || multipart.inline
      ? .inline
      : (store != nil && (options.mode == .pull || options.mode == .upgrade)) ? .stored : .dropped
  }

  /// Counters so far.
  public var statistics: ConversionStatistics {
    var total = feeder.statistics
    total.add(counted)
    return total
  }

  /// Converts everything readable from `descriptor`, named `name` in messages.
  public func convert(_ descriptor: SystemFileDescriptor, name: String) throws(ConversionIOError)
    -> InputOutcome
  {
    var source = DescriptorSource(descriptor: descriptor, name: name)
    return try convert(from: &source, name: name)
  }

  /// Converts a body held in memory, named `name` in messages.
  public func convert(bytes: UnsafeRawBufferPointer, name: String) throws(ConversionIOError)
    -> InputOutcome
  {
    var source = BytesSource(bytes: bytes)
    return try convert(from: &source, name: name)
  }

  /// Converts one body read from `source`, ``readSize`` bytes at a time.
  public func convert(from source: inout some ByteSource, name: String) throws(ConversionIOError)
    -> InputOutcome
  {
    precondition(!isFinished, "MultipartConverter: convert after finish()")
    input = MultipartInput(
      name: name, boundary: multipart.boundary.map { Array($0.utf8) },
      recordsRejects: rejects != nil)
    defer { input = nil }
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: readSize, alignment: 1)
    defer { buffer.deallocate() }
    var total = 0
    while input!.outcome == nil {
      let count = try source.read(into: buffer)
      total += count
      counted.bytesIn += count
      if count == 0 {
        try endOfBody()
        break
      }
      try read(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
      progressHandler?(total, statistics)
    }
    try closeRejects()
    return input!.outcome ?? .completed
  }

  /// Ends the run: writes the last `_bulk_docs` body. Converting after it traps.
  public func finish() throws(ConversionIOError) {
    guard !isFinished else { return }
    isFinished = true
    try bodies?.finish { body throws(ConversionIOError) in try writeBody(body) }
  }

  // MARK: Reading

  private func read(_ bytes: UnsafeRawBufferPointer) throws(ConversionIOError) {
    input!.recorder?.append(bytes)
    do throws(MultipartFailure<ConversionIOError>) {
      try input!.reader.read(bytes) { (event) throws(ConversionIOError) in try handle(event) }
    } catch {
      try readFailed(error)
    }
  }

  private func endOfBody() throws(ConversionIOError) {
    do throws(MultipartFailure<ConversionIOError>) {
      try input!.reader.finish { (event) throws(ConversionIOError) in try handle(event) }
    } catch {
      try readFailed(error)
      return
    }
    try finishDocument(endingAt: input!.lastBodyEnd)
  }

  /// The body cannot be read on: the document it was in is rejected (its part up to the end
  /// of what was read), and the rest of the body is not read.
  private func readFailed(_ failure: MultipartFailure<ConversionIOError>) throws(ConversionIOError)
  {
    switch failure {
    case .handler(let error):
      throw error
    case .invalid(let invalid):
      let start = input!.document?.start ?? input!.documentsEnd
      report(
        .error, .malformedMultipart, at: invalid.offset,
        message: Messages.multipart(invalid.reason), id: input!.document?.id)
      input!.document.map { removeStored($0) }
      try reject(from: start, to: nil)
      input!.document = nil
      input!.outcome = .abandoned
    }
  }

  // MARK: Events

  private func handle(_ event: MultipartReader.Event) throws(ConversionIOError) {
    // A stopped run reads nothing more, even of the piece it stopped in.
    guard input!.outcome == nil else { return }
    switch event {
    case .partBegins(let headers, let depth, let offset, let bodyOffset):
      try partBegins(headers, depth: depth, offset: offset, bodyStart: bodyOffset)
    case .bytes(let bytes):
      try take(bytes)
    case .partEnds(let depth, let offset, let end):
      try partEnds(depth: depth, offset: offset, end: end)
    case .boundaryFound(let delimiter, let lineBreak):
      input!.delimiter = delimiter
      input!.lineBreak = lineBreak
    }
  }

  private func partBegins(_ headers: PartHeaders, depth: Int, offset: Int, bodyStart: Int)
    throws(ConversionIOError)
  {
    if depth == 1 {
      if input!.document!.jsonComplete {
        try attachmentBegins(headers, offset: offset, bodyStart: bodyStart)
      } else {
        startJSON(headers, bodyStart: bodyStart, offset: offset)
      }
      return
    }
    // At the top: an attachment of the document whose JSON part came last, or a new document.
    if let document = input!.document, !document.nested, document.jsonComplete,
      !document.isWhole, !Self.isDocument(headers)
    {
      try attachmentBegins(headers, offset: offset, bodyStart: bodyStart)
      return
    }
    try finishDocument(endingAt: input!.lastBodyEnd)
    if headers.boundary != nil {
      input!.document = MultipartDocument(start: offset, nested: true, headerID: headers.documentID)
      input!.phase = .idle
    } else if headers.isError {
      input!.phase = .errorPart(offset: offset, text: [])
    } else if Self.isDocument(headers) {
      input!.document = MultipartDocument(
        start: offset, nested: false, headerID: headers.documentID)
      startJSON(headers, bodyStart: bodyStart, offset: offset)
    } else {
      // Bytes that follow no document that awaits them: set aside as a document of their own.
      var stray = MultipartDocument(start: offset, nested: false, headerID: nil)
      stray.refusal = (offset, Messages.multipartStrayPart(Self.describe(headers)))
      input!.document = stray
      input!.phase = .skipping
    }
  }

  private static func isDocument(_ headers: PartHeaders) -> Bool {
    headers.filename == nil && headers.mediaType.elementsEqual("application/json".utf8)
  }

  private static func describe(_ headers: PartHeaders) -> String {
    let type =
      headers.mediaType.isEmpty
      ? "no Content-Type" : String(decoding: headers.mediaType, as: UTF8.self)
    return headers.filename.map { "\(type), filename \(String(decoding: $0, as: UTF8.self))" }
      ?? type
  }

  private func startJSON(_ headers: PartHeaders, bodyStart: Int, offset: Int) {
    guard Self.isDocument(headers) else {
      input!.document!.refusal = (
        offset, Messages.multipartFirstPartNotJSON(Self.describe(headers))
      )
      input!.phase = .skipping
      return
    }
    input!.document!.jsonOffset = bodyStart
    input!.phase = .json
    // Sync Gateway gzips a JSON part of 300 bytes or more when asked to (rest/multipart.go,
    // writeJSONPart).
    switch headers.contentEncoding.map({ String(decoding: $0, as: UTF8.self) }) {
    case nil, "identity"?:
      break
    case "gzip"?, "x-gzip"?:
      input!.jsonInflater = GzipDecompressor()
      input!.document!.jsonIsDecoded = true
    case let other?:
      input!.document!.refusal = (offset, Messages.multipartJSONEncoding(other))
      input!.phase = .skipping
    }
  }

  private func attachmentBegins(_ headers: PartHeaders, offset: Int, bodyStart: Int)
    throws(ConversionIOError)
  {
    guard input!.document!.refusal == nil else {
      input!.phase = .skipping
      return
    }
    switch input!.document!.entry(for: headers.filename, raw: headers.rawFilename) {
    case .failure(let mismatch):
      input!.document!.refusal = (offset, Messages.multipartUnmatchedPart(mismatch))
      input!.phase = .skipping
    case .success(let index):
      let entry = input!.document!.part.entries[index]
      input!.document!.partOffsets[index] = offset
      let destination: PartReceiver.Destination =
        switch kept {
        case .stored: .store(store!)
        case .inline: .inline
        case .dropped: .nowhere
        }
      do throws(PartReceiver.Refusal) {
        input!.receiver = try PartReceiver(
          entry: entry, headers: headers, destination: destination, side: sideHasher)
        input!.phase = .attachment(index: index, offset: bodyStart)
      } catch {
        try refuse(error, at: offset)
      }
    }
  }

  private func take(_ bytes: UnsafeRawBufferPointer) throws(ConversionIOError) {
    switch input!.phase {
    case .json:
      guard var inflater = input!.jsonInflater.take() else {
        input!.document!.json.append(contentsOf: bytes)
        return
      }
      var json = input!.document!.json
      input!.document!.json = []
      do throws(DecompressionFailure<Never>) {
        try inflater.append(bytes) { (piece) throws(Never) in json.append(contentsOf: piece) }
        input!.jsonInflater = consume inflater
      } catch {
        if case .invalid(let invalid) = error {
          input!.document!.refusal = (
            input!.document!.jsonOffset, Messages.multipartJSONNotGzip(invalid.reason)
          )
          input!.phase = .skipping
        }
      }
      input!.document!.json = json
    case .attachment(_, let offset):
      do throws(PartReceiver.Refusal) {
        try input!.receiver!.append(bytes)
      } catch {
        input!.receiver = nil
        try refuse(error, at: offset)
      }
    case .errorPart(let offset, var text):
      if text.count < 1 << 16 { text.append(contentsOf: bytes.prefix((1 << 16) - text.count)) }
      input!.phase = .errorPart(offset: offset, text: text)
    case .idle, .skipping:
      break
    }
  }

  private func refuse(_ refusal: PartReceiver.Refusal, at offset: Int) throws(ConversionIOError) {
    switch refusal {
    case .refused(let kind, let message):
      if input!.document!.refusal == nil { input!.document!.refusal = (offset, message) }
      input!.document!.refusalKind = kind
      input!.phase = .skipping
    case .storeFailed(let file, let errno):
      throw ConversionIOError(operation: .storeBlob, errno: errno, target: file)
    }
  }

  private func partEnds(depth: Int, offset: Int, end: Int) throws(ConversionIOError) {
    switch input!.phase {
    case .json:
      if let inflater = input!.jsonInflater.take() {
        do throws(GzipDecompressor.Invalid) {
          try inflater.finish()
        } catch {
          input!.document!.refusal = (
            input!.document!.jsonOffset, Messages.multipartJSONNotGzip(error.reason)
          )
        }
      }
      input!.document!.jsonEnded()
    case .attachment(let index, let partOffset):
      do throws(PartReceiver.Refusal) {
        guard var receiver = input!.receiver.take() else { break }
        let received = try receiver.finish()
        input!.document!.received[index] = received
        if let name = received.storedName { input!.document!.stored.append(name) }
      } catch {
        try refuse(error, at: partOffset)
      }
    case .errorPart(let partOffset, let text):
      reportErrorPart(text, at: partOffset)
      input!.documentsEnd = end
    case .idle, .skipping:
      break
    }
    input!.phase = .idle
    if depth == 0 { input!.lastBodyEnd = offset }
    guard let document = input!.document else { return }
    if depth == 0 && (document.nested || document.isWhole) {
      try finishDocument(endingAt: offset)
    }
  }

  // MARK: Documents

  /// The document read so far is complete (what follows is another, or the end): converted,
  /// or set aside with the reason.
  private func finishDocument(endingAt end: Int) throws(ConversionIOError) {
    guard var document = input!.document else { return }
    input!.document = nil
    defer {
      input!.documentsEnd = end
      input!.recorder?.discard(before: end)
    }
    if document.refusal == nil && !document.jsonComplete {
      document.refusal = (end, Messages.multipartNoJSONPart)
    } else if document.refusal == nil && !document.isWhole {
      document.refusal = (end, Messages.multipartMissingParts(document.missingParts))
      document.refusalKind = .invalidData
    }
    if let (offset, message) = document.refusal {
      report(.error, document.refusalKind, at: offset, message: message, id: document.id)
      try setAside(document, end: end)
      return
    }
    try convert(document, end: end)
  }

  private func convert(_ document: MultipartDocument, end: Int) throws(ConversionIOError) {
    if kept == .dropped && options.mode != .list && options.mode != .check {
      for index in document.part.entries.indices {
        let size = document.received[index]?.size ?? 0
        report(
          .warning, .dataDropped, at: document.partOffsets[index],
          message: Messages.multipartBytesDropped(
            name: String(decoding: document.part.entries[index].name, as: UTF8.self), size: size),
          id: document.id, advice: .blobStore)
      }
    }
    let (text, edits) = document.converted(keeping: kept)
    let result = try feeder.convert(text)
    for var diagnostic in result.diagnostics {
      let column = text.withUnsafeBufferPointer {
        DocumentFeeder.byteOffset(ofColumn: diagnostic.column, in: $0)
      }
      // In a compressed JSON part, the part's start is as near as the body can say.
      diagnostic.byteOffset =
        document.jsonOffset
        + (document.jsonIsDecoded ? 0 : MultipartDocument.originalOffset(of: column, edits: edits))
      diagnosticHandler(diagnostic, input!.name)
    }
    if result.rejected {
      try setAside(document, end: end)
      return
    }
    var failure: ConversionIOError? = nil
    result.output.withUnsafeBytes { bytes in
      do throws(ConversionIOError) { try writeOutput(bytes) } catch { failure = error }
    }
    if let failure { throw failure }
  }

  /// A rejected document: its stored files go, its part goes to the rejects, and without
  /// keep-going the run stops.
  private func setAside(_ document: MultipartDocument, end: Int) throws(ConversionIOError) {
    removeStored(document)
    try reject(from: document.start, to: end)
    if !options.keepGoing { input!.outcome = .stopped }
  }

  private func removeStored(_ document: MultipartDocument) {
    if let store, !document.stored.isEmpty { store.remove(document.stored) }
  }

  /// Writes the part from `start` to `end` (nil: all that was read) to the rejects, as a part
  /// of a multipart body with the input's boundary, so that the rejects file is itself a body
  /// to read again (its closing boundary line comes at the end of the input).
  private func reject(from start: Int, to end: Int?) throws(ConversionIOError) {
    guard let rejects, let recorder = input!.recorder else { return }
    let lineBreak = input!.lineBreak
    if let delimiter = input!.delimiter {
      try write(delimiter + lineBreak, to: rejects)
      input!.rejectsWritten = true
    }
    try recorder.write(from: start, to: end) { (bytes) throws(ConversionIOError) in
      try rejects.write(bytes, after: 0)
    }
    if input!.delimiter != nil { try write(lineBreak, to: rejects) }
  }

  /// Closes the rejects written for the input as a multipart body.
  private func closeRejects() throws(ConversionIOError) {
    guard let rejects, input!.rejectsWritten, let delimiter = input!.delimiter else { return }
    try write(delimiter + Array("--".utf8) + input!.lineBreak, to: rejects)
  }

  private func write(_ bytes: [UInt8], to sink: any ByteSink) throws(ConversionIOError) {
    var failure: ConversionIOError? = nil
    bytes.withUnsafeBytes { buffer in
      do throws(ConversionIOError) { try sink.write(buffer, after: 0) } catch { failure = error }
    }
    if let failure { throw failure }
  }

  private func reportErrorPart(_ text: [UInt8], at offset: Int) {
    var id = ""
    var error = ""
    var reason = ""
    text.withUnsafeBufferPointer { buffer in
      let walker = LooseJSON(text: buffer)
      for member in walker.object(at: walker.skipSpace(from: 0)) ?? [] {
        guard buffer[member.value.start] == UInt8(ascii: "\"") else { continue }
        let value = String(decoding: walker.decoded(member.value), as: UTF8.self)
        switch String(decoding: member.name, as: UTF8.self) {
        case "id": id = value
        case "error": error = value
        case "reason": reason = value
        default: break
        }
      }
    }
    report(
      options.strict ? .error : .warning, .documentError, at: offset,
      message: Messages.multipartErrorPart(error: error, reason: reason), id: id)
  }

  private func report(
    _ severity: ConversionDiagnostic.Severity, _ kind: ConversionDiagnostic.Kind, at offset: Int,
    message: String, id: String?, advice: ConversionDiagnostic.Advice? = nil
  ) {
    if severity == .error { counted.errors += 1 } else { counted.warnings += 1 }
    var diagnostic = ConversionDiagnostic(
      severity: severity, kind: kind, line: feeder.linesFed + 1, column: 1, message: message,
      documentID: id, advice: advice)
    diagnostic.byteOffset = offset
    diagnosticHandler(diagnostic, input!.name)
  }

  // MARK: Output

  private func writeOutput(_ bytes: UnsafeRawBufferPointer) throws(ConversionIOError) {
    guard let bodies else {
      counted.bytesOut += bytes.count
      try output.write(bytes, after: 0)
      return
    }
    try bodies.append(lines: bytes) { body throws(ConversionIOError) in try writeBody(body) }
  }

  private func writeBody(_ body: UnsafeRawBufferPointer) throws(ConversionIOError) {
    counted.bytesOut += body.count
    try output.write(body, after: 0)
  }
}

/// What one input being read holds.
final class MultipartInput {
  enum Phase {
    case idle
    /// In the JSON part of ``document``.
    case json
    /// In the part of the entry `index`; `offset` is where its body starts.
    case attachment(index: Int, offset: Int)
    /// In a `_bulk_get` error part that starts at `offset`.
    case errorPart(offset: Int, text: [UInt8])
    /// In a part whose bytes are dropped (its document is rejected).
    case skipping
  }

  let name: String
  var reader: MultipartReader
  var phase = Phase.idle
  var document: MultipartDocument? = nil
  var receiver: PartReceiver? = nil
  /// The JSON part being read is gzip-compressed (`Content-Encoding: gzip`).
  var jsonInflater: GzipDecompressor? = nil
  /// The input's bytes since the document being read started, for the rejects.
  var recorder: RawRecorder?
  /// Where the last document (or error part) ended: where the next top-level part's headers
  /// start.
  var documentsEnd = 0
  /// Where the body of the last top-level part ended (before its boundary line).
  var lastBodyEnd = 0
  /// The outer boundary line and the line break, once the body gave them.
  var delimiter: [UInt8]? = nil
  var lineBreak: [UInt8] = [0x0D, 0x0A]
  /// Whether a rejected part was written (the rejects body is then closed at the end).
  var rejectsWritten = false
  var outcome: InputOutcome? = nil

  init(name: String, boundary: [UInt8]?, recordsRejects: Bool) {
    self.name = name
    reader = MultipartReader(boundary: boundary)
    recorder = recordsRejects ? RawRecorder() : nil
  }
}

/// The bytes of an input from some offset on, for setting a rejected document's part aside.
final class RawRecorder {
  private var bytes: [UInt8] = []
  /// The offset of `bytes[0]` in the input.
  private var base = 0

  func append(_ more: UnsafeRawBufferPointer) { bytes.append(contentsOf: more) }

  /// Forgets what comes before `offset`.
  func discard(before offset: Int) {
    let count = min(bytes.count, max(0, offset - base))
    bytes.removeFirst(count)
    base += count
  }

  /// Hands over the bytes from `start` to `end` (nil: all that was read).
  func write<E: Error>(
    from start: Int, to end: Int?, _ sink: (UnsafeRawBufferPointer) throws(E) -> Void
  ) throws(E) {
    let from = max(0, start - base)
    let to = min(bytes.count, (end ?? Int.max) - base)
    guard to > from else { return }
    var failure: E? = nil
    bytes.withUnsafeBytes { all in
      do throws(E) {
        try sink(UnsafeRawBufferPointer(rebasing: all[from..<to]))
      } catch {
        failure = error
      }
    }
    if let failure { throw failure }
  }
}

/// A ``ByteSource`` over bytes in memory.
struct BytesSource: ByteSource {
  let bytes: UnsafeRawBufferPointer
  var offset = 0

  mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws(ConversionIOError) -> Int {
    let count = min(buffer.count, bytes.count - offset)
    guard count > 0 else { return 0 }
    buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + count]))
    offset += count
    return count
  }
}

/// A ``ByteSource`` over a descriptor.
struct DescriptorSource: ByteSource {
  let descriptor: SystemFileDescriptor
  let name: String

  mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws(ConversionIOError) -> Int {
    do {
      return try descriptor.read(into: buffer)
    } catch {
      throw ConversionIOError(operation: .read, errno: error, target: name)
    }
  }
}
