import Glibc

/// One open container of the envelope: the input's structure around the documents.
struct EnvelopeFrame: BitwiseCopyable {
  var isArray: Bool
  /// The path step that this container's on-path children are at; -1 when the container is off
  /// the path (everything under it is copied through).
  var childStep: Int
  /// Objects on the path: whether the member being read (its key seen) matches the path.
  var memberOnPath = false
  /// Arrays on the path: the path iterates them (`[]`).
  var iterated = false
  /// The `list` framing's own array: its brackets and commas become the merged list's.
  var isList = false
  /// Elements read so far (arrays), for the path of a document.
  var count = 0
  /// Elements written so far (iterated arrays), for their commas.
  var written = 0
}

/// The framer's own state at a place it may come back to, with the results' there.
struct FramerMark: BitwiseCopyable {
  var results: Results.Checkpoint
  var listElements: Int
}

/// Where to go on after the envelope was abandoned (malformed input, or a stop): the output is
/// closed validly, and the input from `start` on is not converted.
struct AbandonPoint {
  /// The first byte not converted (before separators and whitespace are skipped).
  var start: StreamOffset
  /// Its position, when known (a unit's start, which the line counter may have passed).
  var startPosition: TextPosition?
  /// Whether a value was open there (a unit or a document), so the error counts as a document.
  var valueWasOpen: Bool
  /// Whether `start` is just after an element inside a unit, or its array's `[`: what is not
  /// converted starts after the separators and whitespace that follow.
  var afterElement = false
  /// With ``afterElement``: a place before `start` whose position is known (the outermost
  /// unit's start), to locate it from.
  var knownPlace: (offset: StreamOffset, position: TextPosition)? = nil
}

/// The framing stage: follows the document path (`--docs`) through each input value, copies the
/// envelope through compactly, says where documents start, and lays the output out
/// (``OutputStyle``): lines, or one merged list. (`_bulk_docs` bodies are documents as lines
/// here; ``BodyAssembler`` groups them once they are in input order.)
///
/// A document rejected inside an envelope leaves with its *unit*, the innermost array element
/// that holds it: the framer takes back what was written of the unit (``Results/rollback(to:)``),
/// writes nothing more of it, and at its end hands it over as a ``RejectedUnit``. Output that may
/// still be taken back is held back from delivery (``Results/undeliverableFrom``).
struct Framer: ~Copyable {
  /// The document path, and how it is matched.
  private let path: PathMatcher
  /// What is written around the documents.
  private var writer: OutsideWriter
  /// What may still be taken back, and where to.
  private var takeBack: TakeBack
  /// The open containers of the envelope, outermost first.
  private var frames = RawStack<EnvelopeFrame>(capacity: 16)
  /// Whether some array is iterated: malformed input ends its input (no resuming at a line).
  let iterates: Bool
  /// Whether each input value is itself a document (`lines` with the path `.`): no envelope,
  /// and every call takes its short way.
  let valuesAreDocuments: Bool
  /// Whether the output is rows that say where each document is (a path that is not `.`).
  let rowsSayWhere: Bool
  /// Documents found in the current input.
  private(set) var documentsInInput = 0
  /// What the path found in the current input besides its documents (``PathFindings``).
  private var sawInputValue = false
  private var pathEntered = false
  /// What the path found in the current input.
  var findings: PathFindings {
    PathFindings(
      documents: documentsInInput, sawInputValue: sawInputValue, pathEntered: pathEntered)
  }
  /// Whether the document that just started is an element of an iterated array itself (so a
  /// rejection takes only it), rather than inside a unit.
  private(set) var documentIsElement = true
  /// With a batch started between elements (``startBetweenElements``): whether that envelope is
  /// still open, and the output position where it ended (rows before it name its elements by
  /// an index counted from the batch's start).
  private(set) var primedEnvelopeOpen = false
  private(set) var primedRowsEnd: Int? = nil

  var style: OutputStyle { writer.style }
  /// Whether the path is not `.` (rows then say where each document is).
  var pathIsDeep: Bool { path.isDeep }
  /// When a `-j` batch may start between the elements of an array (``BatchStart``): the index
  /// of its frame, which is the path's first `[]` (or 0, the list framing's own array).
  var elementsStep: Int? { path.elementsStep }
  /// List framing: elements written, over all inputs (the merged list's commas).
  var listElements: Int { writer.listElements }
  /// List framing: the elements the current batch (or input) wrote.
  var listElementsWrittenInBatch: Int { writer.listElements - writer.listElementsAtBatchStart }
  /// Whether a rejected unit has just ended (``takeRejectedUnit()``).
  var hasRejectedUnitEnded: Bool { takeBack.hasRejectedUnitEnded }

  /// List framing: the elements written before this batch, over all inputs, when a worker
  /// converts the first batch of an input (only whether there was one matters).
  mutating func setListElementsBefore(_ count: Int) {
    writer.listElements = count
    writer.listElementsAtBatchStart = count
  }

  /// List framing: elements written by other engines (the workers of a `-j` run).
  mutating func addListElements(_ count: Int) { writer.listElements += count }

  init(options: ConversionOptions) {
    path = PathMatcher(options: options)
    writer = OutsideWriter(options: options)
    takeBack = TakeBack(isOn: writer.style != .rows)
    iterates = options.documents.iterates || writer.listFraming
    valuesAreDocuments = options.documents.steps.isEmpty && !writer.listFraming
    rowsSayWhere = path.isDeep && writer.style == .rows
  }

  /// Elements read so far of the path's first iterated array, in the envelope open now.
  var elementsRead: Int {
    guard let arrayStep = path.elementsStep, frames.count > arrayStep else { return 0 }
    return frames[arrayStep].count
  }

  private mutating func primedEnvelopeEnded(results: borrowing Results) {
    guard primedEnvelopeOpen else { return }
    primedEnvelopeOpen = false
    primedRowsEnd = results.outputPosition
  }

  /// Whether a document in a rejected unit is to be skipped (written nowhere, reported with it).
  var suppressed: Bool { takeBack.suppressed }

  /// Where the input value being read started, when the path iterates nothing (where a
  /// malformed one is skipped from).
  var openValueStart: StreamOffset? {
    iterates || takeBack.units.isEmpty ? nil : takeBack.units[0].inputStart
  }

  /// The first input byte the framer may still need (a unit's text to reject, the place after
  /// the last complete element).
  var retainedFrom: StreamOffset? { takeBack.retainedFrom }

  /// Whether an envelope is open in the current input.
  var envelopeOpen: Bool { !frames.isEmpty }

  /// Whether the innermost open container of the envelope is an array (the list framing's own
  /// included); nil when none is open.
  var innermostIsArray: Bool? { frames.isEmpty ? nil : frames[frames.count - 1].isArray }

  /// Whether the innermost open container is the list framing's own array.
  private var inList: Bool { !frames.isEmpty && frames[frames.count - 1].isList }

  /// Forgets the current input's structure (a new input, or the rest of this one skipped).
  mutating func restart() {
    frames.removeAll()
    takeBack.restart()
    writer.restart()
  }

  /// A new input starts.
  mutating func startInput() {
    restart()
    documentsInInput = 0
    sawInputValue = false
    pathEntered = false
    primedEnvelopeOpen = false
    primedRowsEnd = nil
    writer.listElementsAtBatchStart = writer.listElements
  }

  // MARK: Tokens

  /// A token outside the documents (`view` holds its text; `lines` has counted up to the
  /// token).
  @inline(__always)
  mutating func token(
    _ token: EnvelopeToken, view: InputView, lines: inout LineCounter, results: inout Results
  ) -> EnvelopeVerdict {
    if valuesAreDocuments {
      // Every value is a document: nothing to follow (and no key or `}` outside one).
      documentsInInput += 1
      documentIsElement = true
      writer.pendingSeparator = nil
      writer.wroteValue = false
      return .document
    }
    switch token.kind {
    case .key:
      preconditionFailure("keys are all decided by quickVerdict")
    case .close:
      let frame = frames.pop()
      if takeBack.innerBoundary(ofFrame: frames.count) != nil {
        takeBack.innerBoundaries.truncate(to: takeBack.innerBoundaries.count &- 1)
      }
      if frame.isList {
        writer.listClosed = true
      } else {
        writer.write(
          token, separator: 0, view: view, suppressed: takeBack.suppressed, results: &results)
      }
      valueEnded(at: token.end, results: &results)
      return .envelope
    case .open(let isArray):
      return valueStarts(
        token, isArray: isArray, scalar: nil, view: view, lines: &lines, results: &results)
    case .scalar(let kind):
      return valueStarts(
        token, isArray: false, scalar: kind, view: view, lines: &lines, results: &results)
    }
  }

  /// The envelope tokens that need no decision but the path's, decided here, on the way of
  /// every token, without the general ``token(_:view:lines:results:)``: a key of an object on
  /// the path (copied, or starting a run of members off the path inside a unit), and a scalar
  /// member off the path inside a unit (or with no `[]` in the path), copied. Returns nil for
  /// every other token, which that takes.
  @inline(__always)
  mutating func quickVerdict(
    _ token: EnvelopeToken, view: InputView, results: inout Results
  ) -> EnvelopeVerdict? {
    switch token.kind {
    case .key:
      let frame = frames.base + (frames.count &- 1)
      let step = frame.pointee.childStep
      if step >= 1 {
        // A run that ended at this key has compared it already.
        frame.pointee.memberOnPath = token.endsRun || path.key(token.key, matches: step &- 1)
        if !frame.pointee.memberOnPath && !takeBack.units.isEmpty {
          // Off the path inside a unit: the scanner reads the members up to the path's (or
          // the object's end) through, as one run, and hands their text back.
          writer.pendingSeparator = writer.separatorText(token.separator, inList: inList)
          return .members(stopAt: path.name(step &- 1))
        }
      }
      writer.write(
        token, separator: token.separator, view: view, suppressed: takeBack.suppressed,
        results: &results)
      return .envelope
    case .scalar:
      guard !frames.isEmpty, !(iterates && takeBack.units.isEmpty) else { return nil }
      let parent = frames.base + (frames.count &- 1)
      guard !parent.pointee.isArray, !parent.pointee.memberOnPath else { return nil }
      // An off-path member: copied, and it ends at once (a scalar is never a unit, and the
      // place after it is no boundary inside a unit).
      guard writer.style.writesEnvelope, !takeBack.suppressed else { return .envelope }
      writer.write(
        token, separator: token.separator, view: view, suppressed: false, results: &results)
      writer.wroteValue = true
      return .envelope
    case .open, .close:
      return nil
    }
  }

  /// Where a value that starts is, in the path: the step it is at (-1 off the path), the
  /// separator before it, and whether its parent is an array the path iterates.
  private struct ValuePlace {
    var step: Int
    var separator: UInt8
    var parentIterated: Bool
  }

  /// The place of a value that starts inside the envelope (``frames`` not empty).
  private mutating func placeInEnvelope(separator: UInt8) -> ValuePlace {
    let parent = frames.base + (frames.count - 1)
    var place = ValuePlace(step: -1, separator: separator, parentIterated: false)
    if parent.pointee.isArray {
      parent.pointee.count += 1
      place.step = parent.pointee.childStep
      place.parentIterated = parent.pointee.iterated
      if parent.pointee.isList {
        place.separator = 0
      } else if place.parentIterated {
        place.separator = parent.pointee.written > 0 ? UInt8(ascii: ",") : 0
      }
    } else if parent.pointee.memberOnPath {
      place.step = parent.pointee.childStep
    }
    return place
  }

  /// A value starts: a document, a container of the envelope, or a scalar to copy.
  private mutating func valueStarts(
    _ token: EnvelopeToken, isArray: Bool, scalar: ValueKind?, view: InputView,
    lines: inout LineCounter, results: inout Results
  ) -> EnvelopeVerdict {
    let place: ValuePlace
    if frames.isEmpty {
      writer.wroteValue = false
      if writer.listFraming {
        return listStarts(
          token, isArray: isArray, scalar: scalar, view: view, lines: &lines, results: &results)
      }
      place = ValuePlace(step: 0, separator: 0, parentIterated: false)
    } else {
      place = placeInEnvelope(separator: token.separator)
    }
    let step = place.step
    if step == 0 { sawInputValue = true } else if step > 0 { pathEntered = true }
    if step == path.count {
      return documentStarts(token, at: place, scalar: scalar, view: view, results: &results)
    }
    let onPath = step >= 0 && path.isElements(step) == isArray
    // An element of an iterated array that holds a document without being one is a unit; so
    // is a whole input value when the path iterates nothing.
    if onPath && scalar == nil && (frames.isEmpty ? !iterates : place.parentIterated) {
      lines.advance(to: token.start, in: view)
      takeBack.units.push(
        Unit(
          mark: mark(results), inputStart: token.start,
          startPosition: lines.place(token.start, in: view), depth: frames.count,
          documentsBefore: documentsInInput))
      takeBack.holdBack(&results)
    }
    guard scalar == nil else {
      writeValueStart(token, separator: place.separator, view: view, results: &results)
      valueEnded(at: token.end, results: &results)
      return .envelope
    }
    guard onPath else {
      // Off the path: read through by the scanner, copied whole when it ends.
      writer.pendingSeparator = writer.separatorText(place.separator, inList: inList)
      return .copy
    }
    if frames.isEmpty && iterates {
      noteEnvelopeStart(at: token.start, view: view, lines: &lines, results: results)
    }
    writeValueStart(token, separator: place.separator, view: view, results: &results)
    frames.push(EnvelopeFrame(isArray: isArray, childStep: step + 1, iterated: isArray))
    if iterates && takeBack.units.isEmpty {
      setBoundary(at: token.end, results: &results)
    } else if isArray && !takeBack.suppressed {
      takeBack.innerBoundaries.push(
        InnerBoundary(frameIndex: frames.count - 1, mark: mark(results), input: token.end))
    }
    return .envelope
  }

  /// A value starts where the path names documents: a document, or none (`null` in a deep
  /// path: a deleted document's `"doc":null`).
  private mutating func documentStarts(
    _ token: EnvelopeToken, at place: ValuePlace, scalar: ValueKind?, view: InputView,
    results: inout Results
  ) -> EnvelopeVerdict {
    if scalar == .null && path.isDeep {
      writeValueStart(token, separator: place.separator, view: view, results: &results)
      valueEnded(at: token.end, results: &results)
      return .envelope
    }
    documentsInInput += 1
    documentIsElement = takeBack.units.isEmpty || place.parentIterated
    writer.pendingSeparator = writer.separatorText(place.separator, inList: inList)
    return .document
  }

  /// List framing: the input's array starts (anything else breaks the framing).
  private mutating func listStarts(
    _ token: EnvelopeToken, isArray: Bool, scalar: ValueKind?, view: InputView,
    lines: inout LineCounter, results: inout Results
  ) -> EnvelopeVerdict {
    guard isArray && !writer.listClosed else {
      return .framingBroken(writer.listClosed ? .moreFollows : .notAnArray(scalar ?? .object))
    }
    noteEnvelopeStart(at: token.start, view: view, lines: &lines, results: results)
    frames.push(EnvelopeFrame(isArray: true, childStep: 0, iterated: true, isList: true))
    setBoundary(at: token.end, results: &results)
    return .envelope
  }

  /// An input value that is an envelope starts at `start` (with `[]` in the path): where a batch
  /// that ends inside it takes it back to.
  @inline(never)
  private mutating func noteEnvelopeStart(
    at start: StreamOffset, view: InputView, lines: inout LineCounter, results: borrowing Results
  ) {
    lines.advance(to: start, in: view)
    takeBack.openEnvelope = OpenEnvelope(
      start: start, position: lines.place(start, in: view), mark: mark(results),
      documentsBefore: documentsInInput, startsBatch: false)
  }

  /// A value of the envelope, or a document, has ended at `end`; `written` says whether it was
  /// written (a rejected document was not), so that the next element knows its comma.
  @inline(__always)
  mutating func valueEnded(at end: StreamOffset, written: Bool = true, results: inout Results) {
    if valuesAreDocuments {
      writer.endDocumentValue(results: &results)
      return
    }
    envelopeValueEnded(at: end, written: written, results: &results)
  }

  /// ``valueEnded(at:written:results:)`` inside an envelope, or where values are not all
  /// documents.
  private mutating func envelopeValueEnded(
    at end: StreamOffset, written: Bool, results: inout Results
  ) {
    // (A rejected document's separator was never written; the next value sets its own.)
    writer.pendingSeparator = nil
    var unitEnded = false
    if takeBack.innermostUnit(at: frames.count) != nil {
      unitEnded = true
      if !takeBack.unitEnded(at: end) { countWritten() }
    } else if written && !takeBack.suppressed {
      countWritten()
    }
    if frames.isEmpty {
      writer.endValue(results: &results)
      takeBack.boundary.isSet = false
      if primedEnvelopeOpen { primedEnvelopeEnded(results: results) }
      takeBack.holdBack(&results)
    } else if iterates && takeBack.units.isEmpty {
      if takeBack.hasRejectedUnitEnded {
        // After the unit's error and text are saved (``rejectedUnitSaved(results:)``), or
        // going back to this place would take them back too.
        takeBack.boundaryAfterRejectedUnit = end
      } else {
        // (Holds back from the new boundary: what the ended unit held is free.)
        setBoundary(at: end, results: &results)
      }
    } else {
      if !takeBack.suppressed, let inner = takeBack.innerBoundary(ofFrame: frames.count &- 1) {
        if takeBack.hasRejectedUnitEnded {
          // As for the boundary: once the unit's error and text are saved.
          takeBack.boundaryAfterRejectedUnit = end
        } else {
          inner.pointee.mark = mark(results)
          inner.pointee.input = end
        }
      }
      if unitEnded { takeBack.holdBack(&results) }
    }
  }

  /// A container off the path, read through by the scanner, has ended: its compact `text` is
  /// copied, and it ends like any value.
  mutating func copiedValueEnded(
    _ text: UnsafeBufferPointer<UInt8>, at end: StreamOffset, results: inout Results
  ) {
    writer.copy(text, endsValue: true, suppressed: takeBack.suppressed, results: &results)
    valueEnded(at: end, results: &results)
  }

  /// A run of members off the path (``EnvelopeVerdict/members(stopAt:)``) has ended: its
  /// compact `text` is copied. It ends no value.
  mutating func copiedMembersEnded(_ text: UnsafeBufferPointer<UInt8>, results: inout Results) {
    writer.copy(text, endsValue: false, suppressed: takeBack.suppressed, results: &results)
  }

  /// The rejected unit that ended has been reported and its text saved: the place after it is
  /// one the envelope may be closed at.
  mutating func rejectedUnitSaved(results: inout Results) {
    guard let end = takeBack.boundaryAfterRejectedUnit else { return }
    takeBack.boundaryAfterRejectedUnit = nil
    if takeBack.units.isEmpty {
      setBoundary(at: end, results: &results)
    } else if !takeBack.innerBoundaries.isEmpty {
      let inner = takeBack.innerBoundaries.base + (takeBack.innerBoundaries.count &- 1)
      inner.pointee.mark = mark(results)
      inner.pointee.input = end
    }
  }

  /// Takes the rejected unit that has just ended, if one has.
  mutating func takeRejectedUnit() -> RejectedUnit? { takeBack.takeRejectedUnit() }

  /// An element was written whole: the next one needs a comma.
  private mutating func countWritten() {
    guard !frames.isEmpty else { return }
    let parent = frames.base + (frames.count - 1)
    guard parent.pointee.isArray else { return }
    parent.pointee.written += 1
    if parent.pointee.isList { writer.listElements += 1 }
  }

  private func mark(_ results: borrowing Results) -> FramerMark {
    FramerMark(results: results.checkpoint(), listElements: writer.listElements)
  }

  private mutating func setBoundary(at input: StreamOffset, results: inout Results) {
    guard takeBack.isOn else { return }
    takeBack.boundary.isSet = true
    takeBack.boundary.mark = mark(results)
    takeBack.boundary.depth = frames.count
    takeBack.boundary.input = input
    takeBack.holdBack(&results)
  }

  /// Goes back to `mark`: the results written since, and the framer's own counts with them
  /// (`keepingReadCounts` as ``Results/rollback(to:keepingReadCounts:)`` takes it).
  private mutating func rollback(
    to mark: FramerMark, keepingReadCounts: Bool = true, results: inout Results
  ) {
    results.rollback(to: mark.results, keepingReadCounts: keepingReadCounts)
    writer.listElements = mark.listElements
  }

  @inline(__always)
  private mutating func writeValueStart(
    _ token: EnvelopeToken, separator: UInt8, view: InputView, results: inout Results
  ) {
    writer.writeValueStart(
      token, separator: separator, inList: inList, view: view, suppressed: takeBack.suppressed,
      results: &results)
  }

  // MARK: Batches that start between elements

  /// List framing: whether the input's array has closed.
  var listHasClosed: Bool { writer.listClosed }

  /// List framing: a batch starts after the input's array has closed.
  mutating func startAfterList() { writer.listClosed = true }

  /// What puts yajl where ``startBetweenElements(anyWritten:position:results:)`` puts the
  /// framer: the objects down to the path's first `[]` opened at the path's members, the array
  /// opened, and at `place` among its elements (after an element, `null`, when there is one).
  func primingText(at place: ElementsPlace) -> ByteBuffer {
    var text = ByteBuffer(capacity: 64)
    for index in 0..<(writer.listFraming ? 0 : path.elementsStep!) {
      text.append(UInt8(ascii: "{"))
      JSONText.appendQuoted(path.name(index), to: &text)
      text.append(UInt8(ascii: ":"))
    }
    switch place {
    case .afterOpen: text.append("[\n")
    case .afterElement: text.append("[null\n")
    case .afterComma: text.append("[null,\n")
    }
    return text
  }

  /// A batch starts among the elements of the path's first iterated array of an envelope that
  /// began in an earlier batch (`anyWritten`: an element of it written): the framer is put
  /// there as reading the envelope up to here would have put it, but for what is counted from
  /// the envelope's start (elements, documents), which counts from the batch's start.
  ///
  /// `elementsBefore` is how many elements of the array came before, when it is known (on one
  /// thread); a worker counts from 0, and the driver corrects the rows (``primedRowsEnd``).
  mutating func startBetweenElements(
    anyWritten: Bool, elementsBefore: Int, position: TextPosition, results: inout Results
  ) {
    restart()
    if writer.listFraming {
      frames.push(
        EnvelopeFrame(
          isArray: true, childStep: 0, iterated: true, isList: true, count: elementsBefore,
          written: anyWritten ? 1 : 0))
      // The merged list's separator: whether an element has been written, in this input or
      // before it.
      writer.listElements = anyWritten ? max(writer.listElements, 1) : 0
    } else {
      let arrayStep = path.elementsStep!
      for step in 0...arrayStep {
        let isArray = step == arrayStep
        frames.push(
          EnvelopeFrame(
            isArray: isArray, childStep: step + 1, memberOnPath: !isArray, iterated: isArray,
            count: isArray ? elementsBefore : 0, written: isArray && anyWritten ? 1 : 0))
      }
    }
    writer.listElementsAtBatchStart = writer.listElements
    writer.wroteValue = writer.writesValues
    primedEnvelopeOpen = true
    primedRowsEnd = nil
    takeBack.openEnvelope = OpenEnvelope(
      start: .zero, position: position, mark: mark(results), documentsBefore: documentsInInput,
      startsBatch: true)
    setBoundary(at: .zero, results: &results)
  }

  /// Whether the framer is where ``startBetweenElements(anyWritten:position:results:)`` puts
  /// it, with any counts (a batch started there goes on exactly as this one would), and if so,
  /// whether an element has been written.
  var betweenElementsWritten: Bool? {
    guard let arrayStep = path.elementsStep, frames.count == arrayStep + 1,
      takeBack.units.isEmpty, takeBack.rejectedUnits == 0, !takeBack.hasRejectedUnitEnded,
      writer.pendingSeparator == nil, !writer.writesValues || writer.wroteValue,
      !writer.listClosed,
      !takeBack.isOn || (takeBack.boundary.isSet && takeBack.boundary.depth == frames.count)
    else { return nil }
    if writer.listFraming {
      let frame = frames[0]
      guard frame.isArray, frame.childStep == 0, frame.iterated, frame.isList else { return nil }
      // The merged list's separator counts every input's elements.
      return writer.listElements > 0
    }
    for step in 0...arrayStep {
      let frame = frames[step]
      let isArray = step == arrayStep
      guard
        frame.isArray == isArray, frame.childStep == step + 1, frame.memberOnPath == !isArray,
        frame.iterated == isArray, !frame.isList
      else { return nil }
    }
    return frames[arrayStep].written > 0
  }

  // MARK: Documents

  /// Before an accepted document's converted text: its separator.
  @inline(__always)
  mutating func beginDocumentOutput(results: inout Results) {
    writer.beginDocument(atTop: frames.isEmpty, results: &results)
  }

  /// After an accepted document's converted text: a `_bulk_docs` run's document ends its line
  /// (``BodyAssembler`` makes bodies of the lines).
  @inline(__always)
  mutating func endDocumentOutput(results: inout Results) {
    writer.endDocument(results: &results)
  }

  /// Where a document's output starts, to take it back if writing it fails.
  struct DocumentMark {
    var mark: FramerMark
    var pendingSeparator: StaticString?
    var wroteValue: Bool
  }

  func documentMark(_ results: borrowing Results) -> DocumentMark {
    DocumentMark(
      mark: mark(results), pendingSeparator: writer.pendingSeparator,
      wroteValue: writer.wroteValue)
  }

  /// Takes back what was written of a document since `mark` (its separator, a `_bulk_docs`
  /// body begun for it, its text).
  mutating func rollbackDocument(to mark: DocumentMark, results: inout Results) {
    rollback(to: mark.mark, results: &results)
    writer.pendingSeparator = mark.pendingSeparator
    writer.wroteValue = mark.wroteValue
    takeBack.holdBack(&results)
  }

  /// A document inside a unit was rejected with `diagnostic` (and the run goes on): everything
  /// of the unit is taken back, and nothing more of it is written. The error is reported when
  /// the unit ends, with its extent.
  mutating func rejectUnit(with diagnostic: ConversionDiagnostic, results: inout Results) {
    guard !takeBack.units.isEmpty,
      !(takeBack.units.base + (takeBack.units.count &- 1)).pointee.rejected
    else { return }
    let unit = takeBack.units.base + (takeBack.units.count - 1)
    // Rows (`--list`, `--check`) are never held back: those of the unit's earlier documents
    // may be out already, and stay.
    if takeBack.isOn { rollback(to: unit.pointee.mark, results: &results) }
    unit.pointee.rejected = true
    // Places inside the unit are gone with what was written of it.
    takeBack.dropInnerBoundaries(from: unit.pointee.depth)
    takeBack.rejections.append(diagnostic)
    takeBack.rejectedUnits += 1
    if unit.pointee.depth == 0 { writer.wroteValue = false }
    takeBack.holdBack(&results)
  }

  /// A batch ends inside an input value that holds documents without being one: everything it
  /// produced is taken back, counts of what was read too, for the value is converted again,
  /// whole, after this batch. Returns where it starts, and whether it is an envelope whose
  /// documents are array elements (which is converted on one thread from there on).
  mutating func takeBackOpenValue(results: inout Results) -> (
    start: StreamOffset, position: TextPosition, isArrayEnvelope: Bool, startsBatch: Bool
  )? {
    if iterates {
      guard !frames.isEmpty, let envelope = takeBack.openEnvelope else { return nil }
      rollback(to: envelope.mark, keepingReadCounts: false, results: &results)
      documentsInInput = envelope.documentsBefore
      restart()
      results.undeliverableFrom = nil
      return (envelope.start, envelope.position, true, envelope.startsBatch)
    }
    guard !takeBack.units.isEmpty else { return nil }
    let unit = takeBack.units.base.pointee
    rollback(to: unit.mark, keepingReadCounts: false, results: &results)
    documentsInInput = unit.documentsBefore
    restart()
    results.undeliverableFrom = nil
    return (unit.inputStart, unit.startPosition, false, false)
  }

  /// The envelope cannot go on (malformed input, or a rejected document stops the run): its
  /// output is closed validly at the last complete element, or before the open unit (brackets
  /// and braces closed, the line ended). Returns where the input stops being converted, or nil
  /// when no envelope is open.
  mutating func abandon(results: inout Results) -> AbandonPoint? {
    let depth: Int
    var point: AbandonPoint
    if !takeBack.innerBoundaries.isEmpty {
      let inner = takeBack.innerBoundaries[takeBack.innerBoundaries.count - 1]
      depth = inner.frameIndex + 1
      point = AbandonPoint(
        start: inner.input, startPosition: nil, valueWasOpen: false, afterElement: true,
        knownPlace: (takeBack.units[0].inputStart, takeBack.units[0].startPosition))
      // (Rows, never held back, stay: those of the documents before it are out already.)
      if takeBack.isOn {
        rollback(to: inner.mark, results: &results)
        // The list element the array is in is closed and written: the merged list goes on
        // after it.
        if writer.listFraming && depth >= 2 {
          writer.listElements = inner.mark.listElements + 1
        }
      }
    } else if !takeBack.units.isEmpty {
      let unit = takeBack.units[0]
      depth = unit.depth
      point = AbandonPoint(
        start: unit.inputStart, startPosition: unit.startPosition, valueWasOpen: true)
      if takeBack.isOn { rollback(to: unit.mark, results: &results) }
    } else if takeBack.boundary.isSet {
      let boundary = takeBack.boundary
      depth = boundary.depth
      point = AbandonPoint(start: boundary.input, startPosition: nil, valueWasOpen: false)
      rollback(to: boundary.mark, results: &results)
    } else {
      return nil
    }
    if writer.style.writesEnvelope {
      var index = depth - 1
      while index >= 0 {
        let frame = frames[index]
        if !frame.isList { results.output.append(UInt8(ascii: frame.isArray ? "]" : "}")) }
        index -= 1
      }
      if writer.style == .values && depth > 0 { results.output.append(UInt8(ascii: "\n")) }
    }
    point.valueWasOpen = point.valueWasOpen || depth < frames.count
    primedEnvelopeEnded(results: results)
    restart()
    takeBack.holdBack(&results)
    return point
  }

  // MARK: Paths

  /// Appends where the document that just started is, as a path from its input value
  /// (`.results[3].doc`; `.[2]` for an element of a list).
  func appendDocumentPath(to text: inout ByteBuffer) {
    text.count = 0
    for index in 0..<frames.count {
      let frame = frames[index]
      if frame.isArray {
        text.append(index == 0 ? ".[" : "[")
        text.appendDecimal(frame.count - 1)
        text.append(UInt8(ascii: "]"))
      } else if frame.childStep >= 1 {
        var step = path.text(frame.childStep - 1)
        step.withUTF8 { text.append($0) }
      }
    }
  }

  // MARK: The end

  /// At the end of the run: closes the merged list.
  mutating func finish(results: inout Results) {
    writer.finish(results: &results)
    results.undeliverableFrom = nil
  }
}
