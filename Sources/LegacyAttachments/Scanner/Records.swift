/// A half-open byte range `[start, end)` of a document's compact text; `start < 0` means absent.
struct Span: BitwiseCopyable, Equatable {
  var start: Int
  var end: Int

  static let none = Span(start: -1, end: -1)

  var isPresent: Bool { start >= 0 }
  var count: Int { end - start }
}

/// The type of a JSON value, as far as the rules care.
enum ValueKind: UInt8, BitwiseCopyable {
  case null, boolean, number, string, object, array

  /// The kind of the compact JSON value whose first byte is `byte`.
  init(firstByte byte: UInt8) {
    switch byte {
    case UInt8(ascii: "\""): self = .string
    case UInt8(ascii: "{"): self = .object
    case UInt8(ascii: "["): self = .array
    case UInt8(ascii: "t"), UInt8(ascii: "f"): self = .boolean
    case UInt8(ascii: "n"): self = .null
    default: self = .number
    }
  }

  /// "a string", "an object", "null", for messages.
  var article: String {
    switch self {
    case .null: "null"
    case .boolean: "a boolean"
    case .number: "a number"
    case .string: "a string"
    case .object: "an object"
    case .array: "an array"
    }
  }
}

/// What an open container is, for the rules of docs/formats.md.
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
  /// An object of the envelope on the path, inside a unit, whose members off the path are being
  /// read through as one run (``EnvelopeVerdict/members(stopAt:)``); the run ends before the
  /// member the path names, or before the object's `}`.
  case members
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
  case data
  case encoding
  case follows
  /// `--upgrade`: the top-level property the new blobs go in (`--into`).
  case into
  // The keys the key callback itself acts on come last: `_attachments` and an entry (it notes
  // where their keys are), then the two whose whole text it compares, which its quick path
  // leaves to the general one with one comparison (``needsTheWholeKey``).
  case attachments  // "_attachments"
  case entry  // any member of `_attachments`
  /// A member of a run of envelope members (``Role/members``): its key is compared with the
  /// path's.
  case runMember
  /// `--upgrade`: a top-level key no other rule cares about, which may be `--into`'s: the key
  /// callback compares it (so that other modes pay nothing per key for `--into`).
  case intoCandidate

  /// Whether the key's meaning needs its whole text compared (a run's stop, `--into`).
  @inline(__always)
  var needsTheWholeKey: Bool { rawValue >= MemberKey.runMember.rawValue }
}

/// The members of a blob or an attachment entry that modes read: where their values are in the
/// compact text.
struct AttachmentMembers: BitwiseCopyable {
  /// The last `digest` member's value, whatever its type.
  var digest: Span = .none
  var digestIsString = false
  var length: Span = .none
  var contentType: Span = .none
  /// The last `data` member's value (the attachment's bytes), whatever its type.
  var data: Span = .none
  var dataKind: ValueKind = .null
  /// Entries, with `--check` or `--blobs`: the last `stub` member is `true`, and the last
  /// `revpos` value.
  var isStub = false
  /// Entries: whether it has a `stub` member at all (`true` or not).
  var hasStub = false
  var revpos: Span = .none
  /// Entries, with `--check`, `--blobs` or `--upgrade`: the last `encoding` member's value
  /// (`"gzip"`: the server stores the bytes compressed), and whether `follows` says they come in
  /// a MIME part.
  var encoding: Span = .none
  var follows = false

  /// Whether the entry has an `encoding` member.
  var isEncoded: Bool { encoding.isPresent }

}

/// One open container of the document being scanned. Offsets are in the compact text unless
/// named otherwise.
struct Frame: BitwiseCopyable {
  var role: Role
  var isArray: Bool
  var isBlob: Bool = false
  var pendingKey: MemberKey = .other
  /// Elements so far (arrays) or members so far (objects).
  var count: Int = 0
  var start: Int
  /// Where the container starts in the input.
  var inputStart: StreamOffset
  /// The current member's key token.
  var key: Span = .none
  var members = AttachmentMembers()
  /// Where this container's excluded members start in the scanner's open exclusions.
  var exclusionsStart: Int
  /// How many blob references the document had when this container opened.
  var blobsStart: Int
}

/// A blob found outside `_attachments`.
struct BlobReference: BitwiseCopyable {
  var span: Span
  var inputStart: StreamOffset
  /// Members left out of the synthesized entry (`@type`, and for `litecore` `stub` and `revpos`):
  /// a range of ``ScannedDocument/blobExclusions``.
  var exclusions: Span
  var members: AttachmentMembers
  /// The attachment name (decoded, WTF-8) in ``ScannedDocument/names``; empty when not asked for.
  var name: Span
  /// The RFC 6901 pointer in ``ScannedDocument/names`` (when asked for).
  var pointer: Span
  /// Whether `name` needs no escape as a JSON string.
  var nameIsPlain: Bool
}

/// A member of the top-level `_attachments` object.
struct LegacyEntry: BitwiseCopyable {
  /// Key through value.
  var member: Span
  var key: Span
  /// Where the key starts in the input.
  var keyOffset: StreamOffset
  var value: Span
  var kind: ValueKind
  var members: AttachmentMembers

  var isObject: Bool { kind == .object }
}

/// The document's top-level `_attachments` member, as first found.
struct AttachmentsMember: BitwiseCopyable {
  /// How many top-level `_attachments` members the document has.
  var count = 0
  /// Key through value of the first.
  var member: Span = .none
  var value: Span = .none
  var kind: ValueKind = .null
  /// Where its key starts in the input.
  var keyOffset = StreamOffset.zero

  var isObject: Bool { kind == .object }
  /// Exactly one, and an object: the `_attachments` modes can rewrite.
  var isSingleObject: Bool { count == 1 && kind == .object }
}

/// `--upgrade`: the document's top-level member named by `--into`, as first found.
struct IntoMember: BitwiseCopyable {
  var count = 0
  var member: Span = .none
  var value: Span = .none
  var kind: ValueKind = .null
}

/// A problem found in a document, kept until the document ends.
struct Problem {
  var kind: ConversionDiagnostic.Kind
  var severity: ConversionDiagnostic.Severity
  /// Where it is in the input.
  var offset: StreamOffset
  var message: String
  /// The JSON Pointer of the problem's place (for `--check`).
  var pointer: String
  /// What to do about it, for a front end to say in its terms.
  var advice: ConversionDiagnostic.Advice? = nil
}
