/// The facts of one document, as the scanner found them: everything a mode writer reads.
///
/// The scanner fills it while the document is parsed and hands it over when the document ends;
/// it is valid until the scanner starts the next document. Offsets of values are in the
/// document's compact text (``Span``), offsets in the input are ``StreamOffset``s.
struct ScannedDocument: ~Copyable {
  /// Where the document starts in the input, and where it ends (just past its last byte).
  var start = StreamOffset.zero
  var end = StreamOffset.zero
  /// The root value's type.
  var rootKind: ValueKind = .null
  /// Whether the input held no whitespace inside the document, so its compact text is the input
  /// itself (and holds no newline).
  var textIsInput = true
  /// Whether this is not a document but a container of the envelope off the path, read through
  /// to be copied (``EnvelopeVerdict/copy``).
  var isEnvelopeValue = false
  /// Whether, of the envelope, it is not a value but a run of members of an object
  /// (``Role/members``): its text has no braces.
  var isMemberRun = false
  /// Blob references, in document order (outside `_attachments`, never the root).
  var blobs = RawStack<BlobReference>(capacity: 16)
  /// Members each blob's entry leaves out (ranges of it are ``BlobReference/exclusions``).
  var blobExclusions = RawStack<Span>(capacity: 16)
  /// The members of the top-level `_attachments` object, in order.
  var entries = RawStack<LegacyEntry>(capacity: 16)
  /// Blob names and pointers (decoded, WTF-8).
  var names = ByteBuffer(capacity: 1024)
  /// The `_id` and `_rev` string tokens, when the root has them.
  var identifier: Span = .none
  var revision: Span = .none
  var attachments = AttachmentsMember()
  /// `--upgrade`: the top-level member the new blobs go in.
  var into = IntoMember()
  /// What the scanner itself found wrong (not an object, duplicate `_attachments`).
  var problems: [Problem] = []

  var isObject: Bool { rootKind == .object }

  /// The bytes of `span` of ``names``.
  func name(_ span: Span) -> UnsafeBufferPointer<UInt8> {
    guard span.isPresent else { return UnsafeBufferPointer(start: names.base, count: 0) }
    return UnsafeBufferPointer(start: names.base + span.start, count: span.count)
  }

  /// Forgets the document, keeping the buffers' memory.
  mutating func reset() {
    rootKind = .null
    textIsInput = true
    isEnvelopeValue = false
    isMemberRun = false
    blobs.removeAll()
    blobExclusions.removeAll()
    entries.removeAll()
    names.count = 0
    identifier = .none
    revision = .none
    attachments = AttachmentsMember()
    into = IntoMember()
    if !problems.isEmpty { problems.removeAll(keepingCapacity: true) }
  }
}
