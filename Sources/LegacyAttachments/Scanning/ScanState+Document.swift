extension ScanState {
  /// The current document has ended `inputEnd` bytes after its first byte: apply the rules,
  /// write its output (or reject it), and get ready for the next one. Returns false when the
  /// parse must stop.
  mutating func endDocument(inputEnd: Int) -> Bool {
    statistics.documents += 1
    statistics.blobs += blobs.count
    let length = tokenEnd
    if documentIsObject { findRuleProblems() }
    let rejected = problems.contains { $0.severity == .error }

    switch options.mode {
    case .check:
      appendFindings()
    case .list:
      reportProblems()
      if !rejected { appendListRows() }
    case .push, .pull:
      reportProblems()
      if !rejected {
        if documentDepth == 1 {
          output.append(listElementsWritten == 0 ? "\n" : ",\n")
          listElementsWritten += 1
        }
        if options.mode == .push {
          appendPushed(length: length)
        } else {
          appendPulled(length: length)
        }
        if documentDepth == 0 { output.append(UInt8(ascii: "\n")) }
      }
    }
    if rejected {
      if options.mode != .check { statistics.errors += 1 }
      reject(inputLength: inputEnd)
      if !options.continuesAfterBadDocument { stopRequested = true }
    }
    if !copying && lineCursor == documentStart {
      // The text was the input itself, so it holds no whitespace and no newline: the line count
      // moves past it without a scan.
      lineCursor = documentStart + inputEnd
    }
    resetDocument()
    return !stopRequested
  }

  /// Adds the problems only visible once the whole document is known.
  private mutating func findRuleProblems() {
    if attachmentsCount >= 1 && !attachmentsIsObject {
      let message = "\"_attachments\" is \(attachmentsKind.article), not an object"
      if options.mode == .check {
        problems.append(
          PendingProblem(
            kind: .attachmentsNotObject, severity: .error, inputOffset: attachmentsInputStart,
            message: message + "; Sync Gateway expects an object of attachments",
            pointer: "/_attachments"))
      } else if options.mode == .push && !blobs.isEmpty {
        problems.append(
          PendingProblem(
            kind: .attachmentsNotObject, severity: .error, inputOffset: attachmentsInputStart,
            message: message + ", and the document has blobs: push cannot add their entries"
              + " without losing data", pointer: "/_attachments"))
      }
    }
    guard options.mode == .push || options.mode == .check else { return }
    for index in 0..<blobs.count where !blobs[index].digest.isPresent {
      let blob = blobs[index]
      let name = String(decoding: names.bytes[blob.name.start..<blob.name.end], as: UTF8.self)
      let severity: Diagnostic.Severity =
        options.strict || options.mode == .check ? .error : .warning
      let pointer =
        blob.pointer.isPresent
        ? String(decoding: names.bytes[blob.pointer.start..<blob.pointer.end], as: UTF8.self) : ""
      problems.append(
        PendingProblem(
          kind: .blobWithoutDigest, severity: severity, inputOffset: blob.inputStart,
          message: "blob at \(name) has no string \"digest\"; it gets no _attachments entry",
          pointer: pointer))
    }
  }

  /// Sends this document's problems to the diagnostics list (not in `--check`): for a rejected
  /// document its first error only (the document is not written, so its warnings do not
  /// matter); otherwise its warnings.
  private mutating func reportProblems() {
    guard !problems.isEmpty else { return }
    if let error = problems.first(where: { $0.severity == .error }) {
      diagnostics.append(makeDiagnostic(error))
      return
    }
    for problem in problems {
      diagnostics.append(makeDiagnostic(problem))
      statistics.warnings += 1
    }
  }

  /// A diagnostic for a problem of the current document.
  mutating func makeDiagnostic(_ problem: PendingProblem) -> Diagnostic {
    let place = location(ofInput: documentStart + problem.inputOffset)
    return Diagnostic(
      severity: problem.severity, kind: problem.kind, line: place.line, column: place.column,
      message: problem.message, documentID: decodedIdentifier())
  }

  /// The document's `_id`, decoded, when it has a string one.
  mutating func decodedIdentifier() -> String? {
    guard identifier.isPresent else { return nil }
    scratch.count = 0
    JSONText.decodeString(
      UnsafeBufferPointer(start: documentText + identifier.start, count: identifier.count),
      into: &scratch)
    return String(decoding: scratch.bytes, as: UTF8.self)
  }

  /// Saves the document's original text (and a newline) for `--rejects`.
  private mutating func reject(inputLength: Int) {
    addReject(UnsafeBufferPointer(start: input + documentStart, count: inputLength))
  }
}
