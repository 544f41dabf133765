/// Which blob an `_attachments` entry stands for, as pull decides it (SPEC.md, "Pull" rule 1 and
/// "Running peers"), or why an entry with a name push makes stands for none.
///
/// In order: a blob with the entry's digest; with `--blobs`, a blob whose digest is the SHA-1 of
/// the entry's `data`; or, for an entry whose digest CouchDB re-labelled `md5-`, the blob at the
/// place its synthesized name gives, when the two have one length.
enum EntryMirror {
  /// A blob has the entry's digest.
  case digest
  /// A blob's digest is the SHA-1 of the entry's bytes (`--blobs`).
  case bytes
  /// The blob (index in the document's blobs) at the place the entry's name gives: its
  /// digest is CouchDB's `md5-`, and its length is the blob's.
  case place(Int)
  /// No blob: for a name push makes, why (a warning); nil for a real attachment's name.
  case none(Unmatched?)

  /// Why an entry whose name push makes mirrors no blob.
  enum Unmatched: Equatable {
    /// `blob_` and digits (Couchbase Lite 2.0): the name gives no place, and no blob has the
    /// entry's digest.
    case namesNoPlace
    /// No blob is at the place the name gives (its pointer).
    case noBlob(place: String)
    /// The blob there has another digest, and the entry's is not CouchDB's `md5-`: the
    /// attachment was replaced (``PullWriter``'s `--update-blobs` takes the new one).
    case otherDigest(place: String)
    /// The blob there and the entry have different lengths, or one has none.
    case otherLength(place: String, entry: String?, blob: String?)
    /// The entry has no string digest.
    case noDigest
    /// The blob there has no string digest (Couchbase Lite leaves such a blob as it is).
    case blobWithoutDigest(place: String)
  }

  /// Whether the entry goes with a blob.
  var mirrors: Bool {
    if case .none = self { false } else { true }
  }

  /// Finds what `entry` mirrors. `bytesMatch` says whether a blob's digest is the SHA-1 of the
  /// entry's bytes (asked only when nothing cheaper matched; nil when the run carries no bytes).
  static func find(
    _ entry: LegacyEntry, in document: borrowing ScannedDocument, matcher: DigestMatcher,
    text: UnsafeBufferPointer<UInt8>, bytesMatch: (() -> Bool)?
  ) -> EntryMirror {
    guard entry.isObject else { return .none(nil) }
    if entry.members.digestIsString {
      if matcher.matches(entry.members.digest) { return .digest }
      if let bytesMatch, bytesMatch() { return .bytes }
    }
    let name = JSONText.decodeString(
      UnsafeBufferPointer(rebasing: text[entry.key.start..<entry.key.end]))
    guard name.withUnsafeBufferPointer({ AttachmentNaming.isSynthesized($0) }) else {
      return .none(nil)
    }
    guard entry.members.digestIsString else { return .none(.noDigest) }
    guard let place = NamedPlace(name: name) else { return .none(.namesNoPlace) }
    let pointer = Self.pointer(of: name)
    let blobs = document.blobs.elements
    guard let index = blobs.firstIndex(where: { place.holds(valueAt: $0.span.start, in: text) })
    else { return .none(.noBlob(place: pointer)) }
    guard blobs[index].members.digestIsString else {
      return .none(.blobWithoutDigest(place: pointer))
    }
    let digest = UnsafeBufferPointer(
      rebasing: text[entry.members.digest.start..<entry.members.digest.end])
    guard JSONText.decodeString(digest).starts(with: "md5-".utf8) else {
      return .none(.otherDigest(place: pointer))
    }
    let entryLength = Self.length(ofEntry: entry, text: text)
    let blobLength = CompactObject.member("length", of: blobs[index].span, in: text).map {
      UnsafeBufferPointer(rebasing: text[$0.start..<$0.end])
    }
    if let entrySize = entryLength?.size, let blobLength,
      JSONNumber(blobLength)?.wholeValue == entrySize
    {
      return .place(index)
    }
    return .none(
      .otherLength(
        place: pointer, entry: entryLength?.description,
        blob: blobLength.map { String(decoding: $0, as: UTF8.self) }))
  }

  /// An entry's length (when it is a whole number) and how it is written: its `length` token,
  /// or, without one (CouchDB's `attachments=true` leaves it out), the size of the bytes its
  /// `data` holds.
  private static func length(ofEntry entry: LegacyEntry, text: UnsafeBufferPointer<UInt8>)
    -> (size: Int?, description: String)?
  {
    if let length = CompactObject.member("length", of: entry.value, in: text) {
      let token = UnsafeBufferPointer(rebasing: text[length.start..<length.end])
      return (JSONNumber(token)?.wholeValue, String(decoding: token, as: UTF8.self))
    }
    guard entry.members.data.isPresent, entry.members.dataKind == .string,
      let size = Base64.decodedCount(
        stringToken: UnsafeBufferPointer(
          rebasing: text[entry.members.data.start..<entry.members.data.end]))
    else { return nil }
    return (size, "\(size) (its data's)")
  }

  /// The JSON Pointer a synthesized name gives, for messages: `blob_`'s own, or a `$` name's
  /// converted.
  private static func pointer(of name: [UInt8]) -> String {
    if name.starts(with: "blob_/".utf8) {
      return String(decoding: name.dropFirst(5), as: UTF8.self)
    }
    return String(decoding: AttachmentNaming.pointer(ofJSONPath: name) ?? name, as: UTF8.self)
  }
}
