/// What a malformed document leaves to be reported once the extent of what is skipped is known:
/// its error, already located, and the document's `_id` token as far as it was read.
struct MalformedReport {
  var diagnostic: ConversionDiagnostic
  /// The raw `_id` token, for a `--check` row.
  var identifierToken: [UInt8]?
  /// The line where the document starts, for a `--check` row.
  var line: Int
}

/// The per-document stage: takes each document the scanner finished, has the mode's writer find
/// its problems and write it, and records what came of it in the results: output, the rejected
/// text, diagnostics and counts. Tokens outside the documents go to its ``Framer``, which lays
/// the output out around them. It also owns the line count, so that everything it reports is
/// located.
struct DocumentHandler: ~Copyable {
  let options: ConversionOptions
  let writer: ModeWriter
  /// The writer's scratch memory.
  private var workspace = WriterWorkspace()
  /// Whether rejected text is kept (for `--rejects`, or the library's result), or only counted
  /// and its extent reported as skipped.
  let keepsRejects: Bool
  var framer: Framer
  var results: Results
  var lines = LineCounter()
  /// The problems of the document being handled (kept for their memory), and those found
  /// while it was written.
  private var problems: [Problem] = []
  private var writeProblems: [Problem] = []
  /// Whether writing a document can fail (attachment bodies are carried): its output is then
  /// taken back when it does.
  private let writesCanFail: Bool
  /// A failure of the blob store that ends the run, once one happened.
  private(set) var fatalFailure: ConversionIOError? = nil
  /// The blob store (`--blobs`): what a rejected document put in it is taken out again.
  private let store: BlobStore?
  /// Hands the results over in the middle of a parse, when one document's output is large (an
  /// attachment's bytes): so memory holds one output document, not all the output of what was
  /// read at once. Returns false when the delivery failed (the run stops).
  var drain: ((inout Results) -> Bool)? = nil

  init(options: ConversionOptions, keepsRejects: Bool, outputCapacity: Int, store: BlobStore?) {
    self.options = options
    self.store = store
    writer = ModeWriter(options: options, store: store)
    // What a writer finds only while writing (a body the store refuses; with --update-blobs, an
    // entry resolved by name) can reject the document, so its output must be taken back then.
    writesCanFail =
      (store != nil && (options.mode == .push || options.mode == .pull || options.mode == .upgrade))
      || (options.mode == .pull && options.updateBlobs)
    self.keepsRejects = keepsRejects
    framer = Framer(options: options)
    results = Results(outputCapacity: outputCapacity)
  }

  /// Whether a bad document is reported and skipped rather than ending the run.
  var continuesAfterBadDocument: Bool { options.continuesAfterBadDocument }

  /// Whether errors that reject input get the extent of what was skipped (without `--rejects`).
  var reportsSkippedInput: Bool { !keepsRejects && continuesAfterBadDocument }

  /// A token outside the documents: the framer copies it, or says a document starts with it.
  @inline(__always)
  mutating func envelopeToken(_ token: EnvelopeToken, view: InputView)
    -> EnvelopeVerdict
  {
    let verdict = framer.token(token, view: view, lines: &lines, results: &results)
    if framer.hasRejectedUnitEnded, let rejected = framer.takeRejectedUnit() {
      finishRejected(rejected, view: view)
    }
    if framer.rowsSayWhere, case .document = verdict {
      framer.appendDocumentPath(to: &workspace.documentPath)
      workspace.hasDocumentPath = true
    }
    return verdict
  }

  /// A run of envelope members has ended (``Role/members``): its compact `text` is copied.
  @inline(__always)
  mutating func memberRunEnded(
    text: UnsafeBufferPointer<UInt8>, start: StreamOffset, end: StreamOffset, textIsInput: Bool,
    view: InputView
  ) {
    lines.advance(to: start, in: view)
    if textIsInput { lines.skipNewlineFree(to: end) }
    framer.copiedMembersEnded(text, results: &results)
  }

  /// A document has ended; `text` is its compact text and `view` holds its input. Returns false
  /// when the run must stop after it (a rejected document, without `--keep-going`). Inlined into
  /// its one caller, the scanner's end of a document: a call less per document.
  @inline(__always)
  mutating func documentEnded(
    _ document: borrowing ScannedDocument, text: UnsafeBufferPointer<UInt8>, view: InputView
  ) -> Bool {
    if document.isEnvelopeValue {
      envelopeValueEnded(document, text: text, view: view)
      return true
    }
    results.statistics.documents += 1
    results.statistics.blobs += document.blobs.count
    lines.advance(to: document.start, in: view)
    let line = lines.line
    defer { if document.textIsInput { lines.skipNewlineFree(to: document.end) } }
    // In a unit already rejected: it leaves with the unit, reported with it.
    guard !framer.suppressed else {
      framer.valueEnded(at: document.end, results: &results)
      return true
    }
    if !problems.isEmpty { problems.removeAll(keepingCapacity: true) }
    if !document.problems.isEmpty { problems.append(contentsOf: document.problems) }
    if document.isObject {
      writer.findProblems(in: document, text: text, into: &problems, workspace: &workspace)
    }
    let error = problems.first { $0.severity == .error }
    if options.mode == .check {
      checkDocument(document, text: text, line: line, rejected: error != nil, view: view)
    } else if let error {
      return rejectDocument(document, error, text: text, view: view)
    } else if let goesOn = writeDocument(document, text: text, line: line, view: view) {
      return goesOn
    }
    workspace.hasDocumentPath = false
    framer.valueEnded(at: document.end, results: &results)
    if let drain, results.deliverableCount >= 1 << 20 { return drain(&results) }
    return true
  }

  /// A skimmed document has ended (``DocumentSkim``): an object with no blob, no
  /// `_attachments` and no whitespace, whose compact `text` is its input, `start..<end`. Push and
  /// pull find nothing wrong with it and write it as it is, so it takes the accepted path of
  /// ``documentEnded(_:text:view:)`` without asking the writer. Returns false when the run must
  /// stop after it.
  @inline(__always)
  mutating func skimmedDocumentEnded(
    start: StreamOffset, end: StreamOffset, text: UnsafeBufferPointer<UInt8>, view: InputView
  ) -> Bool {
    assert(options.mode == .push || options.mode == .pull, "only push and pull skim")
    // The skim runs without a blob store, so no write of such a document can fail: the tail of
    // the accepted path in documentEnded(_:text:view:), without its marks and take-backs.
    assert(!writesCanFail, "the skim runs only where no write can fail")
    results.statistics.documents += 1
    lines.advance(to: start, in: view)
    defer { lines.skipNewlineFree(to: end) }
    guard !framer.suppressed else {
      framer.valueEnded(at: end, results: &results)
      return true
    }
    framer.beginDocumentOutput(results: &results)
    results.output.append(text)
    framer.endDocumentOutput(results: &results)
    framer.valueEnded(at: end, results: &results)
    if let drain, results.deliverableCount >= 1 << 20 { return drain(&results) }
    return true
  }

  /// A value the scanner read through for the envelope (a container off the path, a run of
  /// members) has ended: it is copied, and a unit rejected around it may end with it.
  private mutating func envelopeValueEnded(
    _ document: borrowing ScannedDocument, text: UnsafeBufferPointer<UInt8>, view: InputView
  ) {
    lines.advance(to: document.start, in: view)
    if document.textIsInput { lines.skipNewlineFree(to: document.end) }
    framer.copiedValueEnded(text, at: document.end, results: &results)
    if framer.hasRejectedUnitEnded, let rejected = framer.takeRejectedUnit() {
      finishRejected(rejected, view: view)
    }
  }

  /// `--check`: a row for each problem found (and those the writer finds), the document's text
  /// to the rejects when one is an error.
  private mutating func checkDocument(
    _ document: borrowing ScannedDocument, text: UnsafeBufferPointer<UInt8>, line: Int,
    rejected: Bool, view: InputView
  ) {
    let rowsBefore = results.statistics.rows
    let path: UnsafeBufferPointer<UInt8>? =
      workspace.hasDocumentPath ? workspace.documentPath.bytes : nil
    for problem in problems {
      CheckWriter.appendFinding(
        id: document.identifier, text: text, line: line, problem: problem.kind.rawValue,
        pointer: problem.pointer, detail: problem.message, path: path, to: &results.output,
        statistics: &results.statistics)
    }
    if document.isObject {
      _ = writer.write(
        document, text: text, line: line, to: &results.output, statistics: &results.statistics,
        workspace: &workspace, problems: &writeProblems)
    }
    if results.statistics.rows > rowsBefore { results.statistics.errors += 1 }
    if rejected && keepsRejects {
      results.addReject(view.bytes(from: document.start, to: document.end), ends: true)
    }
  }

  /// Writes an accepted document with its warnings. When writing can fail
  /// (``writeDocumentThatMayFail(_:text:line:view:)``) and did, returns whether the run goes
  /// on; nil when it was written.
  @inline(__always)
  private mutating func writeDocument(
    _ document: borrowing ScannedDocument, text: UnsafeBufferPointer<UInt8>, line: Int,
    view: InputView
  ) -> Bool? {
    if writesCanFail {
      return writeDocumentThatMayFail(document, text: text, line: line, view: view)
    }
    // The common path: nothing written can be taken back, so no mark is made.
    _ = writeAccepted(document, text: text, line: line, view: view)
    endAccepted(document, text: text, view: view)
    return nil
  }

  /// Writes a document whose writing can fail (attachment bodies are carried; `--update-blobs`
  /// resolves entries by name): when a body could not be carried, what was written of it is
  /// taken back and it is rejected like any other. Returns whether the run goes on then, nil
  /// when it was written.
  @inline(never)
  private mutating func writeDocumentThatMayFail(
    _ document: borrowing ScannedDocument, text: UnsafeBufferPointer<UInt8>, line: Int,
    view: InputView
  ) -> Bool? {
    let mark = framer.documentMark(results)
    if !workspace.bodies.stored.isEmpty {
      workspace.bodies.stored.removeAll(keepingCapacity: true)
    }
    let failure = writeAccepted(document, text: text, line: line, view: view)
    if let error = writeProblems.first(where: { $0.severity == .error }) {
      framer.rollbackDocument(to: mark, results: &results)
      // Bodies it stored before the one that failed: a rejected document leaves nothing in
      // the store (they were not there before it; a file that was is never among them).
      if let store { store.remove(workspace.bodies.stored) }
      fatalFailure = failure
      let goesOn = rejectDocument(document, error, text: text, view: view)
      return goesOn && failure == nil
    }
    endAccepted(document, text: text, view: view)
    return nil
  }

  /// The warnings found before writing, then the document's output begun and written; what the
  /// writer finds goes to ``writeProblems``. Returns a failure of the blob store.
  @inline(__always)
  private mutating func writeAccepted(
    _ document: borrowing ScannedDocument, text: UnsafeBufferPointer<UInt8>, line: Int,
    view: InputView
  ) -> ConversionIOError? {
    for problem in problems { reportWarning(problem, of: document, text: text, view: view) }
    framer.beginDocumentOutput(results: &results)
    if !writeProblems.isEmpty { writeProblems.removeAll(keepingCapacity: true) }
    return writer.write(
      document, text: text, line: line, to: &results.output, statistics: &results.statistics,
      workspace: &workspace, problems: &writeProblems)
  }

  /// A document written and kept: its output ends, and the warnings writing found are reported.
  @inline(__always)
  private mutating func endAccepted(
    _ document: borrowing ScannedDocument, text: UnsafeBufferPointer<UInt8>, view: InputView
  ) {
    framer.endDocumentOutput(results: &results)
    for problem in writeProblems { reportWarning(problem, of: document, text: text, view: view) }
  }

  /// Reports a warning of an accepted document, and counts it.
  private mutating func reportWarning(
    _ problem: Problem, of document: borrowing ScannedDocument, text: UnsafeBufferPointer<UInt8>,
    view: InputView
  ) {
    results.report(makeDiagnostic(problem, documentID: identifier(of: document, text), view))
    results.statistics.warnings += 1
    if problem.kind == .unverified { results.statistics.unverified += 1 }
  }

  /// Rejects a document for `error`: alone, or with the array element that holds it, or, without
  /// `--keep-going`, ending the run. Returns whether the run goes on.
  private mutating func rejectDocument(
    _ document: borrowing ScannedDocument, _ error: Problem, text: UnsafeBufferPointer<UInt8>,
    view: InputView
  ) -> Bool {
    // A rejected document is reported once, with its first error; its warnings do not matter.
    var diagnostic = makeDiagnostic(error, documentID: identifier(of: document, text), view)
    workspace.hasDocumentPath = false
    if !framer.documentIsElement && continuesAfterBadDocument {
      // It leaves with the array element that holds it, reported when that ends.
      framer.rejectUnit(with: diagnostic, results: &results)
      framer.valueEnded(at: document.end, results: &results)
      return true
    }
    let stops = !continuesAfterBadDocument
    // The envelope's output is closed before anything of the stop is recorded.
    if stops { _ = framer.abandon(results: &results) }
    results.statistics.errors += 1
    if reportsSkippedInput {
      diagnostic.message += Messages.skipped(
        from: lines.position(of: document.start, in: view),
        to: lines.position(of: document.end - 1, in: view))
    }
    // The message first: if the rejects file fails, the document it could not save has been
    // reported. (A skipped stretch is reported after its text: its extent is known last.)
    results.report(diagnostic)
    reject(view.bytes(from: document.start, to: document.end), ends: true)
    if stops { return false }
    framer.valueEnded(at: document.end, written: false, results: &results)
    return true
  }

  /// A unit whose document was rejected has ended: its text goes to the rejects (or is counted
  /// as skipped), and the document's error is reported with the unit's extent.
  private mutating func finishRejected(_ rejected: RejectedUnit, view: InputView) {
    var diagnostic = rejected.diagnostic
    if reportsSkippedInput {
      diagnostic.message += Messages.skipped(
        from: rejected.unit.startPosition, to: lines.position(of: rejected.end - 1, in: view))
    }
    results.statistics.errors += 1
    results.report(diagnostic)
    reject(view.bytes(from: rejected.unit.inputStart, to: rejected.end), ends: true)
    framer.rejectedUnitSaved(results: &results)
  }

  /// Closes an open envelope's output validly (the input cannot be converted on from here).
  mutating func abandonEnvelope() -> AbandonPoint? { framer.abandon(results: &results) }

  /// Whether the end of an input reports a path that found no document there. Batches of an
  /// input converted on several threads do not: only the whole input can tell.
  var reportsNoDocument = true
  /// What the path found in the earlier pieces of this input (converted elsewhere), for that
  /// report.
  var foundBefore = PathFindings()

  /// The current input has been read to its end: a path that found no document there says so.
  mutating func inputEnded() {
    var findings = framer.findings
    findings.add(foundBefore)
    guard reportsNoDocument, framer.pathIsDeep, findings.documents == 0 else { return }
    let diagnostic = Self.noDocument(options, findings: findings)
    results.report(diagnostic)
    if diagnostic.severity == .error {
      results.statistics.errors += 1
    } else {
      results.statistics.warnings += 1
    }
  }

  /// The report of an input in which the path found no document (an error with `--strict`).
  /// When input values came and not even the path's first step matched one (documents one
  /// after another read as an envelope), it says so, and how such documents are read; not in
  /// list framing, whose elements are the values the path starts from.
  static func noDocument(_ options: ConversionOptions, findings: PathFindings)
    -> ConversionDiagnostic
  {
    let path = options.documents
    let unmatched =
      findings.firstStepUnmatched && options.framing != .list ? path.steps.first : nil
    return ConversionDiagnostic(
      severity: options.strict ? .error : .warning, kind: .noDocument, line: 1, column: 1,
      message: Messages.noDocumentAtPath(path.description, firstStepUnmatched: unmatched),
      advice: unmatched == nil ? nil : .linesFraming)
  }

  /// Saves (or, without `--rejects`, counts as skipped) a piece of rejected text; `ends` closes
  /// the document. A run that stops at its first bad document skips nothing: it ends there.
  mutating func reject(_ text: UnsafeBufferPointer<UInt8>, ends: Bool) {
    if keepsRejects {
      results.addReject(text, ends: ends)
    } else if continuesAfterBadDocument {
      results.statistics.bytesSkipped += text.count
    }
  }

  // MARK: Diagnostics

  /// A diagnostic for `problem`, located in `view`.
  func makeDiagnostic(_ problem: Problem, documentID: String?, _ view: InputView)
    -> ConversionDiagnostic
  {
    let place = lines.position(of: problem.offset, in: view)
    return ConversionDiagnostic(
      severity: problem.severity, kind: problem.kind, line: place.line, column: place.column,
      message: problem.message, documentID: documentID, advice: problem.advice)
  }

  private func identifier(
    of document: borrowing ScannedDocument, _ text: UnsafeBufferPointer<UInt8>
  )
    -> String?
  {
    document.identifier.isPresent ? document.string(document.identifier, in: text) : nil
  }

  /// Locates malformed JSON at `offset` in a document starting at `documentStart` whose `_id`
  /// token (as far as it was read) is `identifier` of `text`.
  mutating func malformedReport(
    at offset: StreamOffset, message: String, documentStart: StreamOffset,
    identifier: Span, text: UnsafeBufferPointer<UInt8>?, view: InputView
  ) -> MalformedReport {
    lines.advance(to: documentStart, in: view)
    var documentID: String? = nil
    var token: [UInt8]? = nil
    if identifier.isPresent, let text {
      let bytes = UnsafeBufferPointer(rebasing: text[identifier.start..<identifier.end])
      token = Array(bytes)
      documentID = String(decoding: JSONText.decodeString(bytes), as: UTF8.self)
    }
    let problem = Problem(
      kind: .malformedJSON, severity: .error, offset: offset, message: message, pointer: "")
    return MalformedReport(
      diagnostic: makeDiagnostic(problem, documentID: documentID, view), identifierToken: token,
      line: lines.line)
  }

  /// Reports malformed JSON once what it cost is known: `suffix` says what was skipped or is not
  /// converted. With `--check` it is a finding row.
  mutating func report(_ malformed: MalformedReport, suffix: String, countsDocument: Bool) {
    if countsDocument { results.statistics.documents += 1 }
    results.statistics.errors += 1
    var diagnostic = malformed.diagnostic
    diagnostic.message += suffix
    guard options.mode == .check else { return results.report(diagnostic) }
    let token = malformed.identifierToken ?? []
    token.withUnsafeBufferPointer { text in
      CheckWriter.appendFinding(
        id: malformed.identifierToken == nil ? .none : Span(start: 0, end: text.count), text: text,
        line: malformed.line, problem: diagnostic.kind.rawValue, pointer: "",
        detail: diagnostic.message, path: nil, to: &results.output,
        statistics: &results.statistics)
    }
  }

  /// Reports a problem that is not about one document (list framing): an error, located.
  mutating func reportInputError(
    at offset: StreamOffset, message: String, kind: ConversionDiagnostic.Kind, view: InputView
  ) -> MalformedReport {
    lines.advance(to: min(offset, view.end), in: view)
    let problem = Problem(
      kind: kind, severity: .error, offset: offset, message: message, pointer: "")
    return MalformedReport(
      diagnostic: makeDiagnostic(problem, documentID: nil, view), identifierToken: nil,
      line: lines.line)
  }

  /// The end of the run: closes the merged list.
  mutating func finishOutput() {
    framer.finish(results: &results)
  }
}
