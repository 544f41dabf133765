/// Answers "does some blob reference have this digest?", comparing decoded strings; and, for
/// the rare entry no digest matches, "which blob is at the place this name gives?".
///
/// Digest tokens almost never hold escapes, so two tokens are compared byte for byte and decoded
/// only when one has a backslash. Documents with many blobs get a hash set instead of a scan.
/// The blobs' places are found once per document, when first asked for.
struct DigestMatcher {
  private let text: UnsafePointer<UInt8>
  private let textCount: Int
  private let blobs: UnsafeBufferPointer<BlobReference>
  private var decoded: Set<[UInt8]>? = nil
  private var places: BlobPlaces? = nil

  init(text: UnsafeBufferPointer<UInt8>, blobs: UnsafeBufferPointer<BlobReference>) {
    self.text = text.baseAddress!
    self.textCount = text.count
    self.blobs = blobs
    if blobs.count > 32 {
      var set = Set<[UInt8]>()
      for blob in blobs where blob.members.digestIsString {
        set.insert(JSONText.decodeString(token(blob.members.digest)))
      }
      decoded = set
    }
  }

  func matches(_ digest: Span) -> Bool {
    if let decoded { return decoded.contains(JSONText.decodeString(token(digest))) }
    for blob in blobs where blob.members.digestIsString {
      if JSONText.decodedEqual(token(digest), token(blob.members.digest)) { return true }
    }
    return false
  }

  /// The index of the first blob at `place`.
  mutating func blobIndex(at place: NamedPlace) -> Int? {
    if places == nil {
      places = BlobPlaces(
        blobs: blobs, text: UnsafeBufferPointer(start: text, count: textCount))
    }
    return places!.blobIndex(at: place)
  }

  private func token(_ span: Span) -> UnsafeBufferPointer<UInt8> {
    UnsafeBufferPointer(start: text + span.start, count: span.count)
  }
}
