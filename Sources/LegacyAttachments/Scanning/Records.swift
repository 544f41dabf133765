/// A half-open byte range `[start, end)`; `start < 0` means absent.
struct Span: BitwiseCopyable, Equatable {
  var start: Int
  var end: Int

  static let none = Span(start: -1, end: -1)

  var isPresent: Bool { start >= 0 }
  var count: Int { end - start }
}

/// What an open container is, for the rules of SPEC.md.
enum Role: UInt8, BitwiseCopyable {
  /// Inside a blob, an attachment entry or a rejected document: only positions are tracked.
  case inert
  /// The document's root object.
  case document
  /// An object that becomes a blob reference if it has `"@type":"blob"`.
  case candidate
  /// An array whose elements may hold blob references.
  case array
  /// The document's top-level `_attachments` object: each member is a legacy attachment.
  case attachments
  /// An object-valued member of `_attachments`.
  case entry
  /// The outer array of `--format list` input.
  case list
}

/// The members whose values the rules look at. Any other key is `.other`.
enum MemberKey: UInt8, BitwiseCopyable {
  case other
  case type  // "@type"
  case digest
  case length
  case contentType  // "content_type"
  case stub
  case revpos
  case id  // "_id"
  case rev  // "_rev"
  case attachments  // "_attachments"
  case entry  // any member of `_attachments`
}

/// One open container of the document being scanned. Offsets are in output coordinates (the
/// compact document text) unless named otherwise.
struct Frame: BitwiseCopyable {
  var role: Role
  var isArray: Bool
  var isBlob: Bool = false
  var pendingKey: MemberKey = .other
  /// Elements so far (arrays) or members so far (objects).
  var count: Int = 0
  var start: Int
  /// Where the container starts in the input, relative to the document's first byte.
  var inputStart: Int
  /// The current member's key token.
  var key: Span = .none
  /// The last `digest` member's value when it is a string, else absent.
  var digest: Span = .none
  /// The last `digest` member's value whatever its type (for `--list`).
  var digestRaw: Span = .none
  var length: Span = .none
  var contentType: Span = .none
  /// Where this container's excluded members start in `ScanState.exclusions`.
  var exclusionsStart: Int
  /// How many blob references the document had when this container opened.
  var blobsStart: Int
}

/// A blob found outside `_attachments`.
struct BlobReference: BitwiseCopyable {
  var span: Span
  var inputStart: Int
  /// Members left out of the synthesized entry: a range of `ScanState.blobExclusions`.
  var exclusions: Span
  var digest: Span
  var digestRaw: Span
  var length: Span
  var contentType: Span
  /// The attachment name (decoded, WTF-8) in `ScanState.names`.
  var name: Span
  /// The RFC 6901 pointer in `ScanState.names` (`--list` and `--check` only).
  var pointer: Span
  /// Whether `name` needs no escape as a JSON string.
  var nameIsPlain: Bool
}

/// A member of the top-level `_attachments` object.
struct LegacyEntry: BitwiseCopyable {
  /// Key through value.
  var member: Span
  var key: Span
  var value: Span
  var isObject: Bool
  /// Whether the key is a name an earlier push made in the current naming.
  var isSynthesized: Bool
  var digest: Span
  var digestRaw: Span
  var length: Span
  var contentType: Span
}
