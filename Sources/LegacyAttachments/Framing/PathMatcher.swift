import Glibc

/// One step of the path, as the framer follows it: `[]`, or a member name (a range of the
/// matcher's names).
struct PathStep: BitwiseCopyable {
  var isElements: Bool
  var nameStart: Int
  var nameCount: Int
}

/// The document path (`--docs`, or the one a `--format` names) as the framer follows it: its
/// steps, the member names keys are compared with (decoded UTF-8), and how a document's path is
/// written.
struct PathMatcher: ~Copyable {
  private var steps = RawStack<PathStep>(capacity: 8)
  private var names = ByteBuffer(capacity: 64)
  /// Each step as a path writes it (`.name`, `."a b"`, or empty for `[]`).
  private let stepTexts: [String]
  /// Whether the path is not `.` (rows then say where each document is).
  let isDeep: Bool
  /// When a `-j` batch may start between the elements of an array (``BatchStart``): the index
  /// of its frame, which is the path's first `[]` (or 0, the list framing's own array).
  let elementsStep: Int?

  init(options: ConversionOptions) {
    stepTexts = options.documents.steps.map {
      if case .member(let name) = $0 { "." + DocumentPath.written(name) } else { "" }
    }
    isDeep = !options.documents.steps.isEmpty
    elementsStep = Self.firstStepBatchesStartAt(options: options)
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

  /// How many steps the path has: a value at step `count` is a document.
  var count: Int { steps.count }

  /// Whether step `step` is `[]` (else a member name).
  func isElements(_ step: Int) -> Bool { steps[step].isElements }

  /// The member name step `step` compares keys with.
  @inline(__always)
  func name(_ step: Int) -> UnsafeBufferPointer<UInt8> {
    let path = steps.base + step
    return UnsafeBufferPointer(
      start: names.base + path.pointee.nameStart, count: path.pointee.nameCount)
  }

  /// Whether `key` (decoded) is the member name of step `step`.
  @inline(__always)
  func key(_ key: UnsafeBufferPointer<UInt8>, matches step: Int) -> Bool {
    let path = steps.base + step
    return path.pointee.nameCount == key.count
      && (key.count == 0
        || memcmp(names.base + path.pointee.nameStart, key.baseAddress!, key.count) == 0)
  }

  /// Step `step` as a document's path writes it (`.results`, `."a b"`; empty for `[]`).
  func text(_ step: Int) -> String { stepTexts[step] }

  /// When `-j` batches of one value may start between the elements of an array: the index of
  /// the array's frame. That is the list framing's own array (frame 0), or the path's first
  /// `[]`. Rows name elements by an index counted from the batch's start, which the driver
  /// corrects (``Framer/primedRowsEnd``); the merged list's separators depend only on whether
  /// an element was written.
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
}
