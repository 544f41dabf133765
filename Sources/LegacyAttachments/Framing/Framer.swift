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

/// An element of an iterated array that holds a document without being one, or (for a path
/// without `[]`) a whole input value: if a document in it is rejected, the whole unit leaves.
struct Unit: BitwiseCopyable {
  var mark: FramerMark
  var inputStart: StreamOffset
  var startPosition: TextPosition
  /// How many envelope frames were open when the unit began (the unit is their child).
  var depth: Int
  /// Documents found in the input before the unit.
  var documentsBefore: Int
  /// Whether a document has rejected it; its error is then the framer's last rejection.
  var rejected = false
}

/// Inside a unit, an array the path iterates: the last place where the envelope could be closed
/// validly (after its `[` or its last complete element).
struct InnerBoundary: BitwiseCopyable {
  /// The index of the array's frame.
  var frameIndex: Int
  var mark: FramerMark
  var input: StreamOffset
}

/// One step of the path, as the framer follows it: `[]`, or a member name (a range of the
/// framer's names).
struct PathStep: BitwiseCopyable {
  var isElements: Bool
  var nameStart: Int
  var nameCount: Int
}

/// A rejected unit that has just ended: its text goes to the rejects, its error is reported.
struct RejectedUnit {
  var unit: Unit
  var diagnostic: ConversionDiagnostic
  /// Just past the unit's last byte.
  var end: StreamOffset
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
  /// The path's steps, and the member names they compare keys with (decoded UTF-8).
  private var steps = RawStack<PathStep>(capacity: 8)
  private var names = ByteBuffer(capacity: 64)
  /// Each step as a path writes it (`.name`, `."a b"`, or empty for `[]`).
  private let stepTexts: [String]
  let style: OutputStyle
  private let listFraming: Bool
  /// Whether some array is iterated: malformed input ends its input (no resuming at a line).
  let iterates: Bool
  /// Whether units are kept (the output is documents or envelopes, not rows).
  private let takesBack: Bool
  /// Whether each input value is itself a document (`lines` with the path `.`): no envelope,
  /// and every call takes its short way.
  let valuesAreDocuments: Bool
  /// Whether the output is one compact value per input value.
  private let writesValues: Bool

  private var frames = RawStack<EnvelopeFrame>(capacity: 16)
  private var units = RawStack<Unit>(capacity: 8)
  /// The errors of the documents that rejected open units, innermost last.
  private var rejections: [ConversionDiagnostic] = []
  /// With `[]` in the path, outside every unit: the last place where the envelope could be
  /// closed validly (after a complete value, or an opening bracket), how many frames were
  /// open there, and where the input goes on after it.
  private var boundary = Boundary()

  /// With `[]` in the path: where the input value being read (an envelope) started, for a batch
  /// that ends inside it (``takeBackOpenValue(results:)``).
  private var openEnvelope:
    (
      start: StreamOffset, position: TextPosition, mark: FramerMark,
      documentsBefore: Int, startsBatch: Bool
    )? = nil

  /// A place where the envelope could be closed validly; written in place, field by field, as
  /// it moves with every element (its mark is large).
  private struct Boundary {
    var isSet = false
    var mark = FramerMark(
      results: Results.Checkpoint(
        position: ResultMark(output: 0, rejects: 0, diagnostics: 0), marks: 0,
        statistics: ConversionStatistics()),
      listElements: 0)
    var depth = 0
    var input = StreamOffset.zero
  }
  /// Inside units, one for each array the path iterates that is open (innermost last): the
  /// last place where the envelope could be closed validly, after its `[` or its last complete
  /// element (``boundary`` is the same outside every unit). A document rejected without
  /// `--keep-going`, or malformed input, closes the envelope at the innermost one, so that the
  /// elements before it in that array stay converted.
  private var innerBoundaries = RawStack<InnerBoundary>(capacity: 4)
  /// The separator the next document's output starts with (`:`, `,`, a list's line break).
  private var pendingSeparator: StaticString? = nil
  /// Whether something was written for the current input value (a line to end).
  private var wroteValue = false
  /// Documents found in the current input.
  private(set) var documentsInInput = 0
  /// List framing: the input's array has closed.
  private var listClosed = false
  /// List framing: elements written, over all inputs (the merged list's commas).
  private(set) var listElements = 0
  /// ``listElements`` when the current batch began (a worker's batches each count their own).
  private var listElementsAtBatchStart = 0

  /// List framing: the elements the current batch (or input) wrote.
  var listElementsWrittenInBatch: Int { listElements - listElementsAtBatchStart }

  /// List framing: the elements written before this batch, over all inputs, when a worker
  /// converts the first batch of an input (only whether there was one matters).
  mutating func setListElementsBefore(_ count: Int) {
    listElements = count
    listElementsAtBatchStart = count
  }

  /// List framing: elements written by other engines (the workers of a `-j` run).
  mutating func addListElements(_ count: Int) { listElements += count }
  /// Whether the document that just started is an element of an iterated array itself (so a
  /// rejection takes only it), rather than inside a unit.
  private(set) var documentIsElement = true
  /// A rejected unit that has just ended, for the handler to save and report.
  private var rejectedUnitEnded: RejectedUnit? = nil
  /// Whether ``rejectedUnitEnded`` holds one (checked per token without touching it).
  private(set) var hasRejectedUnitEnded = false
  /// Open units that a rejected document has rejected.
  private var rejectedUnits = 0

  init(options: ConversionOptions) {
    stepTexts = options.documents.steps.map {
      if case .member(let name) = $0 { "." + DocumentPath.written(name) } else { "" }
    }
    style = OutputStyle(options: options)
    listFraming = options.framing == .list
    iterates = options.documents.iterates || listFraming
    takesBack = style != .rows
    valuesAreDocuments = options.documents.steps.isEmpty && !listFraming
    pathIsDeep = !options.documents.steps.isEmpty
    elementsStep = Framer.firstStepBatchesStartAt(options: options)
    rowsSayWhere = pathIsDeep && style == .rows
    writesValues = style == .values
    for step in options.documents.steps {
      switch step {
      case .elements:
        steps.push(PathStep(isElements: true, nameStart: 0, nameCount: 0))
      case .member(let name):
        let start = names.count
        for byte in name.utf8 { names.append(byte) }
        steps.push(PathStep(isElements: false, nameStart: start, nameCount: names.count - start))
      }
    }
  }

  /// Whether the path is not `.` (rows then say where each document is).
  let pathIsDeep: Bool
  /// When a `-j` batch may start between the elements of an array (``BatchStart``): the index
  /// of its frame, which is the path's first `[]` (or 0, the list framing's own array).
  let elementsStep: Int?

  /// When `-j` batches of one value may start between the elements of an array: the index of
  /// the array's frame. That is the list framing's own array (frame 0), or the path's first
  /// `[]`. Rows name elements by an index counted from the batch's start, which the driver
  /// corrects (``primedRowsEnd``); the merged list's separators depend only on whether an
  /// element was written.
  static func firstStepBatchesStartAt(options: ConversionOptions) -> Int? {
    if options.framing == .list { return 0 }
    return options.documents.steps.firstIndex { $0 == .elements }
  }

  /// What a row's `path` member starts with, up to the index of the path's first `[]`
  /// (`"path":".results[`), when batches may start between that array's elements.
  static func rowPathBeforeFirstIndex(options: ConversionOptions) -> [UInt8]? {
    guard let arrayStep = firstStepBatchesStartAt(options: options) else { return nil }
    if options.framing == .list { return Array(#""path":".["#.utf8) }
    var text = arrayStep == 0 ? ".[" : ""
    for case .member(let name) in options.documents.steps[0..<arrayStep] {
      text += "." + DocumentPath.written(name)
    }
    if arrayStep > 0 { text += "[" }
    var quoted = ByteBuffer(capacity: 64)
    text.withUTF8 { JSONText.appendQuoted($0, to: &quoted) }
    // Without the closing quote: the index follows.
    return Array("\"path\":".utf8) + Array(quoted.bytes.dropLast())
  }

  /// With a batch started between elements (``startBetweenElements``): whether that envelope is
  /// still open, and the output position where it ended (rows before it name its elements by
  /// an index counted from the batch's start).
  private(set) var primedEnvelopeOpen = false
  private(set) var primedRowsEnd: Int? = nil

  /// Elements read so far of the path's first iterated array, in the envelope open now.
  var elementsRead: Int {
    guard let arrayStep = elementsStep, frames.count > arrayStep else { return 0 }
    return frames[arrayStep].count
  }

  private mutating func primedEnvelopeEnded(results: borrowing Results) {
    guard primedEnvelopeOpen else { return }
    primedEnvelopeOpen = false
    primedRowsEnd = results.outputPosition
  }
  /// Whether the output is rows that say where each document is (a path that is not `.`).
  let rowsSayWhere: Bool

  /// Whether a document in a rejected unit is to be skipped (written nowhere, reported with it).
  var suppressed: Bool { rejectedUnits > 0 }

  /// Where the input value being read started, when the path iterates nothing (where a
  /// malformed one is skipped from).
  var openValueStart: StreamOffset? { iterates || units.isEmpty ? nil : units[0].inputStart }

  /// The first input byte the framer may still need (a unit's text to reject, the place after
  /// the last complete element).
  var retainedFrom: StreamOffset? {
    units.isEmpty ? (boundary.isSet ? boundary.input : nil) : units.base.pointee.inputStart
  }

  /// Whether an envelope is open in the current input.
  var envelopeOpen: Bool { !frames.isEmpty }

  /// Whether the innermost open container of the envelope is an array (the list framing's own
  /// included); nil when none is open.
  var innermostIsArray: Bool? { frames.isEmpty ? nil : frames[frames.count - 1].isArray }

  /// Forgets the current input's structure (a new input, or the rest of this one skipped).
  mutating func restart() {
    frames.removeAll()
    units.removeAll()
    rejections.removeAll(keepingCapacity: true)
    boundary.isSet = false
    openEnvelope = nil
    pendingSeparator = nil
    wroteValue = false
    listClosed = false
    rejectedUnitEnded = nil
    hasRejectedUnitEnded = false
    boundaryAfterRejectedUnit = nil
    innerBoundaries.removeAll()
    rejectedUnits = 0
  }

  /// A new input starts.
  mutating func startInput() {
    restart()
    documentsInInput = 0
    primedEnvelopeOpen = false
    primedRowsEnd = nil
    listElementsAtBatchStart = listElements
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
      pendingSeparator = nil
      wroteValue = false
      return .document
    }
    switch token.kind {
    case .key:
      preconditionFailure("keys are all decided by quickVerdict")
    case .close:
      let frame = frames.pop()
      if !innerBoundaries.isEmpty
        && (innerBoundaries.base + (innerBoundaries.count &- 1)).pointee.frameIndex == frames.count
      {
        innerBoundaries.truncate(to: innerBoundaries.count &- 1)
      }
      if frame.isList {
        listClosed = true
      } else {
        write(token, separator: 0, view: view, results: &results)
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
        let path = steps.base + (step &- 1)
        // A run that ended at this key has compared it already.
        frame.pointee.memberOnPath =
          token.endsRun
          || (path.pointee.nameCount == token.key.count
            && (token.key.count == 0
              || memcmp(
                names.base + path.pointee.nameStart, token.key.baseAddress!, token.key.count)
                == 0))
        if !frame.pointee.memberOnPath && !units.isEmpty {
          // Off the path inside a unit: the scanner reads the members up to the path's (or
          // the object's end) through, as one run, and hands their text back.
          pendingSeparator = separatorText(token.separator)
          return .members(
            stopAt: UnsafeBufferPointer(
              start: names.base + path.pointee.nameStart, count: path.pointee.nameCount))
        }
      }
      write(token, separator: token.separator, view: view, results: &results)
      return .envelope
    case .scalar:
      guard !frames.isEmpty, !(iterates && units.isEmpty) else { return nil }
      let parent = frames.base + (frames.count &- 1)
      guard !parent.pointee.isArray, !parent.pointee.memberOnPath else { return nil }
      // An off-path member: copied, and it ends at once (a scalar is never a unit, and the
      // place after it is no boundary inside a unit).
      guard style.writesEnvelope, !suppressed else { return .envelope }
      write(token, separator: token.separator, view: view, results: &results)
      wroteValue = true
      return .envelope
    case .open, .close:
      return nil
    }
  }

  /// A value starts: a document, a container of the envelope, or a scalar to copy.
  private mutating func valueStarts(
    _ token: EnvelopeToken, isArray: Bool, scalar: ValueKind?, view: InputView,
    lines: inout LineCounter, results: inout Results
  ) -> EnvelopeVerdict {
    // The path step the value is at, or -1 off the path.
    var step = -1
    var separator = token.separator
    var parentIterated = false
    if frames.isEmpty {
      wroteValue = false
      separator = 0
      if listFraming {
        guard isArray && !listClosed else {
          return .framingBroken(listClosed ? .moreFollows : .notAnArray(scalar ?? .object))
        }
        noteEnvelopeStart(at: token.start, view: view, lines: &lines, results: results)
        frames.push(EnvelopeFrame(isArray: true, childStep: 0, iterated: true, isList: true))
        setBoundary(at: token.end, results: &results)
        return .envelope
      }
      step = 0
    } else {
      let parent = frames.base + (frames.count - 1)
      if parent.pointee.isArray {
        parent.pointee.count += 1
        step = parent.pointee.childStep
        parentIterated = parent.pointee.iterated
        if parent.pointee.isList {
          separator = 0
        } else if parentIterated {
          separator = parent.pointee.written > 0 ? UInt8(ascii: ",") : 0
        }
      } else if parent.pointee.memberOnPath {
        step = parent.pointee.childStep
      }
    }
    let isDocument = step == steps.count
    if isDocument {
      if scalar == .null && pathIsDeep {
        // No document here (a deleted document's `"doc":null`).
        writeValueStart(token, separator: separator, view: view, results: &results)
        valueEnded(at: token.end, results: &results)
        return .envelope
      }
      documentsInInput += 1
      documentIsElement = units.isEmpty || parentIterated
      pendingSeparator = separatorText(separator)
      return .document
    }
    // An element of an iterated array that holds a document without being one is a unit; so
    // is a whole input value when the path iterates nothing.
    if step >= 0 && scalar == nil && steps[step].isElements == isArray
      && (frames.isEmpty ? !iterates : parentIterated)
    {
      lines.advance(to: token.start, in: view)
      units.push(
        Unit(
          mark: mark(results), inputStart: token.start,
          startPosition: lines.place(token.start, in: view), depth: frames.count,
          documentsBefore: documentsInInput))
      holdBack(&results)
    }
    guard scalar == nil else {
      writeValueStart(token, separator: separator, view: view, results: &results)
      valueEnded(at: token.end, results: &results)
      return .envelope
    }
    guard step >= 0 && steps[step].isElements == isArray else {
      // Off the path: read through by the scanner, copied whole when it ends.
      pendingSeparator = separatorText(separator)
      return .copy
    }
    if frames.isEmpty && iterates {
      noteEnvelopeStart(at: token.start, view: view, lines: &lines, results: results)
    }
    writeValueStart(token, separator: separator, view: view, results: &results)
    frames.push(EnvelopeFrame(isArray: isArray, childStep: step + 1, iterated: isArray))
    if iterates && units.isEmpty {
      setBoundary(at: token.end, results: &results)
    } else if isArray && !suppressed {
      innerBoundaries.push(
        InnerBoundary(frameIndex: frames.count - 1, mark: mark(results), input: token.end))
    }
    return .envelope
  }

  /// An input value that is an envelope starts at `start` (with `[]` in the path): where a batch
  /// that ends inside it takes it back to.
  @inline(never)
  private mutating func noteEnvelopeStart(
    at start: StreamOffset, view: InputView, lines: inout LineCounter, results: borrowing Results
  ) {
    lines.advance(to: start, in: view)
    openEnvelope = (
      start, lines.place(start, in: view), mark(results), documentsInInput, startsBatch: false
    )
  }

  /// A value of the envelope, or a document, has ended at `end`; `written` says whether it was
  /// written (a rejected document was not), so that the next element knows its comma.
  mutating func valueEnded(at end: StreamOffset, written: Bool = true, results: inout Results) {
    if valuesAreDocuments {
      if wroteValue { results.output.append(UInt8(ascii: "\n")) }
      wroteValue = false
      return
    }
    // (A rejected document's separator was never written; the next value sets its own.)
    pendingSeparator = nil
    var unitEnded = false
    if !units.isEmpty && (units.base + (units.count &- 1)).pointee.depth == frames.count {
      unitEnded = true
      let unit = units.base + (units.count &- 1)
      if unit.pointee.rejected {
        rejectedUnitEnded = RejectedUnit(
          unit: unit.pointee, diagnostic: rejections.removeLast(), end: end)
        hasRejectedUnitEnded = true
        rejectedUnits -= 1
      } else {
        countWritten()
      }
      units.truncate(to: units.count &- 1)
    } else if written && !suppressed {
      countWritten()
    }
    if frames.isEmpty {
      if writesValues && wroteValue { results.output.append(UInt8(ascii: "\n")) }
      wroteValue = false
      boundary.isSet = false
      if primedEnvelopeOpen { primedEnvelopeEnded(results: results) }
      holdBack(&results)
    } else if iterates && units.isEmpty {
      if hasRejectedUnitEnded {
        // After the unit's error and text are saved (``rejectedUnitSaved(results:)``), or
        // going back to this place would take them back too.
        boundaryAfterRejectedUnit = end
      } else {
        // (Holds back from the new boundary: what the ended unit held is free.)
        setBoundary(at: end, results: &results)
      }
    } else {
      if !innerBoundaries.isEmpty && !suppressed {
        let inner = innerBoundaries.base + (innerBoundaries.count &- 1)
        if inner.pointee.frameIndex == frames.count &- 1 {
          if hasRejectedUnitEnded {
            // As for ``boundary``: once the unit's error and text are saved.
            boundaryAfterRejectedUnit = end
          } else {
            inner.pointee.mark = mark(results)
            inner.pointee.input = end
          }
        }
      }
      if unitEnded { holdBack(&results) }
    }
  }

  /// A container off the path, read through by the scanner, has ended: its compact `text` is
  /// copied, and it ends like any value.
  mutating func copiedValueEnded(
    _ text: UnsafeBufferPointer<UInt8>, at end: StreamOffset, results: inout Results
  ) {
    if style.writesEnvelope && !suppressed {
      if let separator = pendingSeparator { results.output.append(separator) }
      results.output.append(text)
      wroteValue = true
    }
    pendingSeparator = nil
    valueEnded(at: end, results: &results)
  }

  /// A run of members off the path (``EnvelopeVerdict/members(stopAt:)``) has ended: its
  /// compact `text` is copied. It ends no value.
  mutating func copiedMembersEnded(_ text: UnsafeBufferPointer<UInt8>, results: inout Results) {
    if style.writesEnvelope && !suppressed {
      if let separator = pendingSeparator { results.output.append(separator) }
      results.output.append(text)
    }
    pendingSeparator = nil
  }

  /// Where the place after a rejected unit that has just ended is, until its error and text
  /// are saved.
  private var boundaryAfterRejectedUnit: StreamOffset? = nil

  /// The rejected unit that ended has been reported and its text saved: the place after it is
  /// one the envelope may be closed at.
  mutating func rejectedUnitSaved(results: inout Results) {
    guard let end = boundaryAfterRejectedUnit else { return }
    boundaryAfterRejectedUnit = nil
    if units.isEmpty {
      setBoundary(at: end, results: &results)
    } else if !innerBoundaries.isEmpty {
      let inner = innerBoundaries.base + (innerBoundaries.count &- 1)
      inner.pointee.mark = mark(results)
      inner.pointee.input = end
    }
  }

  /// Takes the rejected unit that has just ended, if one has.
  mutating func takeRejectedUnit() -> RejectedUnit? {
    defer {
      rejectedUnitEnded = nil
      hasRejectedUnitEnded = false
    }
    return rejectedUnitEnded
  }

  /// An element was written whole: the next one needs a comma.
  private mutating func countWritten() {
    guard !frames.isEmpty else { return }
    let parent = frames.base + (frames.count - 1)
    guard parent.pointee.isArray else { return }
    parent.pointee.written += 1
    if parent.pointee.isList { listElements += 1 }
  }

  private func mark(_ results: borrowing Results) -> FramerMark {
    FramerMark(
      results: results.checkpoint(), listElements: listElements)
  }

  private mutating func setBoundary(at input: StreamOffset, results: inout Results) {
    guard takesBack else { return }
    boundary.isSet = true
    boundary.mark = mark(results)
    boundary.depth = frames.count
    boundary.input = input
    holdBack(&results)
  }

  /// Goes back to `mark`: the results written since, and the framer's own counts with them
  /// (`keepingReadCounts` as ``Results/rollback(to:keepingReadCounts:)`` takes it).
  private mutating func rollback(
    to mark: FramerMark, keepingReadCounts: Bool = true, results: inout Results
  ) {
    results.rollback(to: mark.results, keepingReadCounts: keepingReadCounts)
    listElements = mark.listElements
  }

  // MARK: Batches that start between elements

  /// List framing: whether the input's array has closed.
  var listHasClosed: Bool { listClosed }

  /// List framing: a batch starts after the input's array has closed.
  mutating func startAfterList() { listClosed = true }

  /// What puts yajl where ``startBetweenElements(anyWritten:position:results:)`` puts the
  /// framer: the objects down to the path's first `[]` opened at the path's members, the array
  /// opened, and at `place` among its elements (after an element, `null`, when there is one).
  func primingText(at place: ElementsPlace) -> ByteBuffer {
    var text = ByteBuffer(capacity: 64)
    for index in 0..<(listFraming ? 0 : elementsStep!) {
      let step = steps[index]
      text.append(UInt8(ascii: "{"))
      JSONText.appendQuoted(
        UnsafeBufferPointer(start: names.base + step.nameStart, count: step.nameCount), to: &text)
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
    if listFraming {
      frames.push(
        EnvelopeFrame(
          isArray: true, childStep: 0, iterated: true, isList: true, count: elementsBefore,
          written: anyWritten ? 1 : 0))
      // The merged list's separator: whether an element has been written, in this input or
      // before it.
      listElements = anyWritten ? max(listElements, 1) : 0
    } else {
      let arrayStep = elementsStep!
      for step in 0...arrayStep {
        let isArray = step == arrayStep
        frames.push(
          EnvelopeFrame(
            isArray: isArray, childStep: step + 1, memberOnPath: !isArray, iterated: isArray,
            count: isArray ? elementsBefore : 0, written: isArray && anyWritten ? 1 : 0))
      }
    }
    listElementsAtBatchStart = listElements
    wroteValue = writesValues
    primedEnvelopeOpen = true
    primedRowsEnd = nil
    openEnvelope = (.zero, position, mark(results), documentsInInput, startsBatch: true)
    setBoundary(at: .zero, results: &results)
  }

  /// Whether the framer is where ``startBetweenElements(anyWritten:position:results:)`` puts
  /// it, with any counts (a batch started there goes on exactly as this one would), and if so,
  /// whether an element has been written.
  var betweenElementsWritten: Bool? {
    guard let arrayStep = elementsStep, frames.count == arrayStep + 1, units.isEmpty,
      rejectedUnits == 0, !hasRejectedUnitEnded, pendingSeparator == nil,
      !writesValues || wroteValue, !listClosed,
      !takesBack || (boundary.isSet && boundary.depth == frames.count)
    else { return nil }
    if listFraming {
      let frame = frames[0]
      guard frame.isArray, frame.childStep == 0, frame.iterated, frame.isList else { return nil }
      // The merged list's separator counts every input's elements.
      return listElements > 0
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
  mutating func beginDocumentOutput(results: inout Results) {
    switch style {
    case .rows:
      return
    case .values, .mergedList:
      if let separator = pendingSeparator { results.output.append(separator) }
      if frames.isEmpty && writesValues { wroteValue = true }
    case .bulkDocs:
      break
    }
    pendingSeparator = nil
  }

  /// After an accepted document's converted text: a `_bulk_docs` run's document ends its line
  /// (``BodyAssembler`` makes bodies of the lines).
  mutating func endDocumentOutput(results: inout Results) {
    if style == .bulkDocs { results.output.append(UInt8(ascii: "\n")) }
  }

  /// Where a document's output starts, to take it back if writing it fails.
  struct DocumentMark {
    var mark: FramerMark
    var pendingSeparator: StaticString?
    var wroteValue: Bool
  }

  func documentMark(_ results: borrowing Results) -> DocumentMark {
    DocumentMark(mark: mark(results), pendingSeparator: pendingSeparator, wroteValue: wroteValue)
  }

  /// Takes back what was written of a document since `mark` (its separator, a `_bulk_docs`
  /// body begun for it, its text).
  mutating func rollbackDocument(to mark: DocumentMark, results: inout Results) {
    rollback(to: mark.mark, results: &results)
    pendingSeparator = mark.pendingSeparator
    wroteValue = mark.wroteValue
    holdBack(&results)
  }

  /// A document inside a unit was rejected with `diagnostic` (and the run goes on): everything
  /// of the unit is taken back, and nothing more of it is written. The error is reported when
  /// the unit ends, with its extent.
  mutating func rejectUnit(with diagnostic: ConversionDiagnostic, results: inout Results) {
    guard !units.isEmpty, !(units.base + (units.count &- 1)).pointee.rejected else { return }
    let unit = units.base + (units.count - 1)
    // Rows (`--list`, `--check`) are never held back: those of the unit's earlier documents
    // may be out already, and stay.
    if takesBack { rollback(to: unit.pointee.mark, results: &results) }
    unit.pointee.rejected = true
    // Places inside the unit are gone with what was written of it.
    while !innerBoundaries.isEmpty
      && (innerBoundaries.base + (innerBoundaries.count &- 1)).pointee.frameIndex
        >= unit.pointee.depth
    {
      innerBoundaries.truncate(to: innerBoundaries.count &- 1)
    }
    rejections.append(diagnostic)
    rejectedUnits += 1
    if unit.pointee.depth == 0 { wroteValue = false }
    holdBack(&results)
  }

  /// A batch ends inside an input value that holds documents without being one: everything it
  /// produced is taken back, counts of what was read too, for the value is converted again,
  /// whole, after this batch. Returns where it starts, and whether it is an envelope whose
  /// documents are array elements (which is converted on one thread from there on).
  mutating func takeBackOpenValue(results: inout Results) -> (
    start: StreamOffset, position: TextPosition, isArrayEnvelope: Bool, startsBatch: Bool
  )? {
    if iterates {
      guard !frames.isEmpty, let envelope = openEnvelope else { return nil }
      rollback(to: envelope.mark, keepingReadCounts: false, results: &results)
      documentsInInput = envelope.documentsBefore
      restart()
      results.undeliverableFrom = nil
      return (envelope.start, envelope.position, true, envelope.startsBatch)
    }
    guard !units.isEmpty else { return nil }
    let unit = units.base.pointee
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
    if !innerBoundaries.isEmpty {
      let inner = innerBoundaries[innerBoundaries.count - 1]
      depth = inner.frameIndex + 1
      point = AbandonPoint(
        start: inner.input, startPosition: nil, valueWasOpen: false, afterElement: true,
        knownPlace: (units[0].inputStart, units[0].startPosition))
      // (Rows, never held back, stay: those of the documents before it are out already.)
      if takesBack {
        rollback(to: inner.mark, results: &results)
        // The list element the array is in is closed and written: the merged list goes on
        // after it.
        if listFraming && depth >= 2 { listElements = inner.mark.listElements + 1 }
      }
    } else if !units.isEmpty {
      let unit = units[0]
      depth = unit.depth
      point = AbandonPoint(
        start: unit.inputStart, startPosition: unit.startPosition, valueWasOpen: true)
      if takesBack { rollback(to: unit.mark, results: &results) }
    } else if boundary.isSet {
      let mark = boundary.mark
      depth = boundary.depth
      point = AbandonPoint(start: boundary.input, startPosition: nil, valueWasOpen: false)
      rollback(to: mark, results: &results)
    } else {
      return nil
    }
    if style.writesEnvelope {
      var index = depth - 1
      while index >= 0 {
        let frame = frames[index]
        if !frame.isList { results.output.append(UInt8(ascii: frame.isArray ? "]" : "}")) }
        index -= 1
      }
      if style == .values && depth > 0 { results.output.append(UInt8(ascii: "\n")) }
    }
    point.valueWasOpen = point.valueWasOpen || depth < frames.count
    primedEnvelopeEnded(results: results)
    restart()
    holdBack(&results)
    return point
  }

  // MARK: Writing

  @inline(__always)
  private mutating func write(
    _ token: EnvelopeToken, separator: UInt8, view: InputView, results: inout Results
  ) {
    guard style.writesEnvelope, !suppressed else { return }
    if separator != 0 { results.output.append(separator) }
    results.output.append(view.bytes(from: token.start, to: token.end))
  }

  @inline(__always)
  private mutating func writeValueStart(
    _ token: EnvelopeToken, separator: UInt8, view: InputView, results: inout Results
  ) {
    guard style.writesEnvelope, !suppressed else { return }
    if !frames.isEmpty && frames[frames.count - 1].isList {
      results.output.append(listElements == 0 ? "[\n" : ",\n")
    } else if separator != 0 {
      results.output.append(separator)
    }
    results.output.append(view.bytes(from: token.start, to: token.end))
    wroteValue = true
  }

  private func separatorText(_ separator: UInt8) -> StaticString? {
    if !frames.isEmpty && frames[frames.count - 1].isList {
      return listElements == 0 ? "[\n" : ",\n"
    }
    switch separator {
    case UInt8(ascii: ","): return ","
    case UInt8(ascii: ":"): return ":"
    default: return nil
    }
  }

  /// Holds back what may still be taken back: from the outermost open unit, or (with `[]` in
  /// the path) from the last place the envelope could be closed.
  @inline(__always)
  private func holdBack(_ results: inout Results) {
    guard takesBack else { return }
    results.undeliverableFrom =
      !units.isEmpty
      ? units.base.pointee.mark.results.position
      : boundary.isSet ? boundary.mark.results.position : nil
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
        var step = stepTexts[frame.childStep - 1]
        step.withUTF8 { text.append($0) }
      }
    }
  }

  // MARK: The end

  /// At the end of the run: closes the merged list.
  mutating func finish(results: inout Results) {
    switch style {
    case .mergedList:
      results.output.append(listElements == 0 ? "[\n]\n" : "\n]\n")
    case .rows, .values, .bulkDocs:
      break
    }
    results.undeliverableFrom = nil
  }
}
