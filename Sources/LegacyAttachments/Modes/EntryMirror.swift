/// Which blob an `_attachments` entry stands for, as pull decides it (docs/formats.md and
/// docs/couchdb.md), or why an entry with a name push makes stands for none.
///
/// In order: a blob with the entry's digest; with `--blobs`, a blob whose digest is the SHA-1 of
/// the entry's `data`; or, for an entry whose digest CouchDB re-labelled `md5-`, the blob at the
/// place its synthesized name gives, when the SHA-1 of the entry's bytes is the blob's digest
/// (or, without bytes, when the two have one length).
enum EntryMirror {
  /// A blob has the entry's digest.
  case digest
  /// A blob's digest is the SHA-1 of the entry's bytes (`--blobs`).
  case bytes
  /// The blob (index in the document's blobs) at the place the entry's name gives: its
  /// digest is CouchDB's `md5-`, and the SHA-1 of its bytes (when it carries them), or else its
  /// length, is the blob's.
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
    /// The blob there and the entry have different lengths, or one has none (nil: no whole
    /// number from 0).
    case otherLength(place: String, entry: String?, blob: String?)
    /// The entry's digest is CouchDB's `md5-`, and the SHA-1 of the bytes it carries is not the
    /// blob's digest there: the attachment was replaced.
    case otherBytes(place: String)
    /// The entry has no string digest.
    case noDigest
    /// The blob there has no string digest (Couchbase Lite leaves such a blob as it is).
    case blobWithoutDigest(place: String)

    /// Whether the attachment was replaced (pulling with blob updates takes the new one).
    var isOtherDigest: Bool {
      if case .otherDigest = self { true } else { false }
    }
  }

  /// Whether the entry goes with a blob.
  var mirrors: Bool {
    if case .none = self { false } else { true }
  }

  /// Finds what `entry` mirrors. `bytesMatch` says whether a blob's digest is the SHA-1 of the
  /// entry's bytes (asked only when nothing cheaper matched; nil when the run carries no bytes).
  static func find(
    _ entry: LegacyEntry, in document: borrowing ScannedDocument, matcher: inout DigestMatcher,
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
    let pointer = place.pointer
    let blobs = document.blobs.elements
    guard let index = matcher.blobIndex(at: place)
    else { return .none(.noBlob(place: pointer)) }
    guard blobs[index].members.digestIsString else {
      return .none(.blobWithoutDigest(place: pointer))
    }
    let digest = UnsafeBufferPointer(
      rebasing: text[entry.members.digest.start..<entry.members.digest.end])
    guard JSONText.decodeString(digest).starts(with: "md5-".utf8) else {
      return .none(.otherDigest(place: pointer))
    }
    // The entry's bytes, when it carries them, decide: their SHA-1 is the blob's digest or not.
    if entry.members.data.isPresent, entry.members.dataKind == .string {
      let data = UnsafeBufferPointer(
        rebasing: text[entry.members.data.start..<entry.members.data.end])
      let blobDigest = blobs[index].members.digest
      let mirrors =
        BodyCarrier.sha1Digest(ofData: data)
        == JSONText.decodeString(
          UnsafeBufferPointer(rebasing: text[blobDigest.start..<blobDigest.end]))
      return mirrors ? .place(index) : .none(.otherBytes(place: pointer))
    }
    // Without them, the lengths (whole numbers both, a size a file can have).
    let entryLength = Self.length(ofEntry: entry, text: text)
    let blobLength = CompactObject.member("length", of: blobs[index].span, in: text).map {
      UnsafeBufferPointer(rebasing: text[$0.start..<$0.end])
    }
    let blobSize = blobLength.flatMap(Self.size(of:))
    if let entrySize = entryLength?.size, entrySize == blobSize {
      return .place(index)
    }
    return .none(
      .otherLength(
        place: pointer, entry: entryLength?.size == nil ? nil : entryLength?.description,
        blob: blobSize == nil ? nil : blobLength.map { String(decoding: $0, as: UTF8.self) }))
  }

  /// The size a `length` token says, when it is a whole number from 0 that a file can have
  /// (not one too large to tell from another).
  private static func size(of token: UnsafeBufferPointer<UInt8>) -> Int? {
    guard let value = JSONNumber(token)?.wholeValue, value < Int.max else { return nil }
    return value
  }

  /// An entry's length (when it is a size) and how it is written.
  private static func length(ofEntry entry: LegacyEntry, text: UnsafeBufferPointer<UInt8>)
    -> (size: Int?, description: String)?
  {
    guard let length = CompactObject.member("length", of: entry.value, in: text) else {
      return nil
    }
    let token = UnsafeBufferPointer(rebasing: text[length.start..<length.end])
    return (size(of: token), String(decoding: token, as: UTF8.self))
  }

}
