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
  /// Whether a document has rejected it; its error is then the last of the rejections.
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

/// A rejected unit that has just ended: its text goes to the rejects, its error is reported.
struct RejectedUnit {
  var unit: Unit
  var diagnostic: ConversionDiagnostic
  /// Just past the unit's last byte.
  var end: StreamOffset
}

/// With `[]` in the path: where the input value being read (an envelope) started, for a batch
/// that ends inside it (``Framer/takeBackOpenValue(results:)``).
struct OpenEnvelope {
  var start: StreamOffset
  var position: TextPosition
  var mark: FramerMark
  var documentsBefore: Int
  /// Whether it began in an earlier batch (this one started between its elements).
  var startsBatch: Bool
}

/// What the framer may still take back, and where it may go back to: the open units (and the
/// errors of the documents that rejected them), the places the envelope could be closed at,
/// and the rejected unit that has just ended. Output after the outermost of these is held back
/// from delivery (``Results/undeliverableFrom``).
struct TakeBack: ~Copyable {
  /// Whether units are kept (the output is documents or envelopes, not rows).
  let isOn: Bool
  var units = RawStack<Unit>(capacity: 8)
  /// The errors of the documents that rejected open units, innermost last.
  var rejections: [ConversionDiagnostic] = []
  /// With `[]` in the path, outside every unit: the last place where the envelope could be
  /// closed validly (after a complete value, or an opening bracket), how many frames were
  /// open there, and where the input goes on after it.
  var boundary = Boundary()
  /// Inside units, one for each array the path iterates that is open (innermost last): the
  /// last place where the envelope could be closed validly, after its `[` or its last complete
  /// element (``boundary`` is the same outside every unit). A document rejected without
  /// `--keep-going`, or malformed input, closes the envelope at the innermost one, so that the
  /// elements before it in that array stay converted.
  var innerBoundaries = RawStack<InnerBoundary>(capacity: 4)
  var openEnvelope: OpenEnvelope? = nil
  /// A rejected unit that has just ended, for the handler to save and report.
  private var rejectedUnitEnded: RejectedUnit? = nil
  /// Whether ``rejectedUnitEnded`` holds one (checked per token without touching it).
  private(set) var hasRejectedUnitEnded = false
  /// Open units that a rejected document has rejected.
  var rejectedUnits = 0
  /// Where the place after a rejected unit that has just ended is, until its error and text
  /// are saved.
  var boundaryAfterRejectedUnit: StreamOffset? = nil

  /// A place where the envelope could be closed validly; written in place, field by field, as
  /// it moves with every element (its mark is large).
  struct Boundary {
    var isSet = false
    var mark = FramerMark(
      results: Results.Checkpoint(
        position: ResultMark(output: 0, rejects: 0, diagnostics: 0), marks: 0,
        statistics: ConversionStatistics()),
      listElements: 0)
    var depth = 0
    var input = StreamOffset.zero
  }

  init(isOn: Bool) {
    self.isOn = isOn
  }

  /// Forgets the current input's units and places.
  mutating func restart() {
    units.removeAll()
    rejections.removeAll(keepingCapacity: true)
    boundary.isSet = false
    openEnvelope = nil
    rejectedUnitEnded = nil
    hasRejectedUnitEnded = false
    boundaryAfterRejectedUnit = nil
    innerBoundaries.removeAll()
    rejectedUnits = 0
  }

  /// Whether a document in a rejected unit is to be skipped (written nowhere, reported with it).
  var suppressed: Bool { rejectedUnits > 0 }

  /// The first input byte that may still be needed (a unit's text to reject, the place after
  /// the last complete element).
  var retainedFrom: StreamOffset? {
    units.isEmpty ? (boundary.isSet ? boundary.input : nil) : units.base.pointee.inputStart
  }

  /// The innermost open unit, if it began with `depth` frames open.
  @inline(__always)
  func innermostUnit(at depth: Int) -> UnsafeMutablePointer<Unit>? {
    guard !units.isEmpty else { return nil }
    let unit = units.base + (units.count &- 1)
    return unit.pointee.depth == depth ? unit : nil
  }

  /// The innermost unit has ended at `end`: if it was rejected, it is the rejected unit that
  /// has just ended. Returns whether it was.
  mutating func unitEnded(at end: StreamOffset) -> Bool {
    let unit = units.base + (units.count &- 1)
    let rejected = unit.pointee.rejected
    if rejected {
      rejectedUnitEnded = RejectedUnit(
        unit: unit.pointee, diagnostic: rejections.removeLast(), end: end)
      hasRejectedUnitEnded = true
      rejectedUnits -= 1
    }
    units.truncate(to: units.count &- 1)
    return rejected
  }

  /// Takes the rejected unit that has just ended, if one has.
  mutating func takeRejectedUnit() -> RejectedUnit? {
    defer {
      rejectedUnitEnded = nil
      hasRejectedUnitEnded = false
    }
    return rejectedUnitEnded
  }

  /// The inner boundary of the array whose frame is `frameIndex`, when it is the innermost.
  @inline(__always)
  func innerBoundary(ofFrame frameIndex: Int) -> UnsafeMutablePointer<InnerBoundary>? {
    guard !innerBoundaries.isEmpty else { return nil }
    let inner = innerBoundaries.base + (innerBoundaries.count &- 1)
    return inner.pointee.frameIndex == frameIndex ? inner : nil
  }

  /// Forgets the inner boundaries of frames from `frameIndex` in (their arrays have closed, or
  /// what was written of them was taken back).
  @inline(__always)
  mutating func dropInnerBoundaries(from frameIndex: Int) {
    while !innerBoundaries.isEmpty
      && (innerBoundaries.base + (innerBoundaries.count &- 1)).pointee.frameIndex >= frameIndex
    {
      innerBoundaries.truncate(to: innerBoundaries.count &- 1)
    }
  }

  /// Holds back what may still be taken back: from the outermost open unit, or (with `[]` in
  /// the path) from the last place the envelope could be closed.
  @inline(__always)
  func holdBack(_ results: inout Results) {
    guard isOn else { return }
    results.undeliverableFrom =
      !units.isEmpty
      ? units.base.pointee.mark.results.position
      : boundary.isSet ? boundary.mark.results.position : nil
  }
}
