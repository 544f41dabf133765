/// A token outside the documents, as the scanner located it, for the framer.
struct EnvelopeToken {
  enum Kind: Equatable {
    case open(isArray: Bool)
    case close
    case scalar(ValueKind)
    case key
  }

  var kind: Kind
  /// The separator before it in the input: `,`, `:`, or 0.
  var separator: UInt8
  /// The token itself in the input.
  var start: StreamOffset
  var end: StreamOffset
  /// A key's decoded text (yajl's), valid during the callback.
  var key: UnsafeBufferPointer<UInt8>
  /// A key that ended a run of members: the scanner found it is the path's.
  var endsRun = false

  /// Whether the token starts a value (not a key, not a closing bracket).
  var startsValue: Bool {
    switch kind {
    case .open, .scalar: true
    case .close, .key: false
    }
  }
}

/// What the framer makes of a token outside the documents.
enum EnvelopeVerdict: BitwiseCopyable {
  /// Part of the envelope: handled (copied, or left out).
  case envelope
  /// A document starts with this token: the scanner takes it from here.
  case document
  /// A container off the path starts with this token: the scanner reads it through as a value
  /// holding no document (cheaply, like the inside of a blob) and hands its compact text back.
  case copy
  /// This key, off the path, starts a run of members of the innermost object: the scanner reads
  /// them through (like a container off the path) up to the member named `stopAt` or the
  /// object's end, and hands their compact text back.
  case members(stopAt: UnsafeBufferPointer<UInt8>)
  /// With list framing the input is not one array: the framing is broken.
  case framingBroken(FramingProblem)
}

/// How the input breaks the list framing (no strings: verdicts pass per token).
enum FramingProblem: BitwiseCopyable {
  /// The input is a value of this kind, not an array.
  case notAnArray(ValueKind)
  /// More follows the array.
  case moreFollows

  var message: String {
    switch self {
    case .notAnArray(let kind): Messages.listNotArray(kind)
    case .moreFollows: Messages.listMoreFollows
    }
  }
}

/// How the output is laid out.
enum OutputStyle: Equatable {
  /// `--list`, `--check`: the writers' rows; nothing of the input's structure.
  case rows
  /// One compact value per input value, one per line: the documents (`lines`) or the envelopes.
  case values
  /// One array merged from every input's array (`list` framing), one element per line.
  case mergedList
  /// `_bulk_docs` request bodies: the documents only, one per line, which ``BodyAssembler``
  /// groups into bodies once they are in input order.
  case bulkDocs

  init(options: ConversionOptions) {
    if options.mode == .list || options.mode == .check {
      self = .rows
    } else if options.bulkDocs != nil {
      self = .bulkDocs
    } else {
      self = options.framing == .list ? .mergedList : .values
    }
  }

  /// Whether the envelope (everything outside the documents) is written.
  var writesEnvelope: Bool { self == .values || self == .mergedList }
}
