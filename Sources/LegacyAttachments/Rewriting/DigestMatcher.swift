import Glibc

/// Answers "does some blob reference have this digest?", comparing decoded strings.
///
/// Digest tokens almost never hold escapes, so two tokens are compared byte for byte and decoded
/// only when one has a backslash. Documents with many blobs get a hash set instead of a scan.
struct DigestMatcher {
  private let text: UnsafePointer<UInt8>
  private let blobs: RawStack<BlobReference>
  private var decoded: Set<[UInt8]>? = nil

  init(text: UnsafePointer<UInt8>, blobs: RawStack<BlobReference>) {
    self.text = text
    self.blobs = blobs
    if blobs.count > 32 {
      var set = Set<[UInt8]>()
      for index in 0..<blobs.count where blobs[index].digest.isPresent {
        set.insert(decode(blobs[index].digest))
      }
      decoded = set
    }
  }

  func matches(_ digest: Span) -> Bool {
    if let decoded { return decoded.contains(decode(digest)) }
    for index in 0..<blobs.count {
      let other = blobs[index].digest
      if other.isPresent && equal(digest, other) { return true }
    }
    return false
  }

  private func equal(_ a: Span, _ b: Span) -> Bool {
    if a.count == b.count && memcmp(text + a.start, text + b.start, a.count) == 0 { return true }
    if !hasEscape(a) && !hasEscape(b) { return false }
    return decode(a) == decode(b)
  }

  private func hasEscape(_ span: Span) -> Bool {
    memchr(text + span.start, Int32(UInt8(ascii: "\\")), span.count) != nil
  }

  private func decode(_ span: Span) -> [UInt8] {
    JSONText.decodeString(UnsafeBufferPointer(start: text + span.start, count: span.count))
  }
}
