/// Couchbase Lite's pull of one incoming revision, as its own code does it (couchbase-lite-core:
/// `legacy_attachments::encodeStrippingOldMetaProperties`, Fleece's `Path::evalJSONPointer`,
/// `DBAccess::findBlobReferences` and the dangling-blob check of `IncomingRev::parseAndInsert`),
/// so that `--check` can say before a sync what that pull refuses. `make litecore` compares it
/// with `litecore-harness`, which runs that code.
///
/// What the tool's own pull does differs on purpose in places (docs/compatibility.md): this type
/// describes Couchbase Lite, it does not convert. A cold path: the document's compact text
/// (valid JSON without white space, as the scanner makes it) is walked again.
struct LiteCorePull {
  /// Where Fleece's `Path::evalJSONPointer` goes for the text after `blob_` in an entry name:
  /// tokens split at `/` and never decoded (`~0`, `~1` stay as they are); over an array, a token
  /// must be decimal digits below 2^31 or the call throws; an empty token over an object finds
  /// nothing (SharedKeys are on for incoming revisions); a trailing `/` is dropped.
  enum Resolution: Equatable {
    case value(Span)
    case nothing
    /// The call throws, and the replicator fails the revision; Fleece's message.
    case fails(String)
  }

  /// A blob reference the pull finds (a blob, or an entry left in `_attachments`) whose digest,
  /// as Couchbase Lite reads it, no entry of the incoming `_attachments` has as written.
  struct Dangling: Equatable {
    /// The blob's RFC 6901 pointer, or nil when it is an entry left in `_attachments`.
    var blob: String?
    /// The entry's index, when it is one.
    var entry: Int?
    var offset: StreamOffset
    /// The digest as Couchbase Lite reads it (canonical base64).
    var digest: String
  }

  /// The entry whose name makes the pull throw, and Fleece's message.
  private(set) var failure: (entry: Int, reason: String)?
  /// What the dangling-blob check finds, each digest once; empty when `_attachments` is not an
  /// object (the check runs only then).
  private(set) var dangling: [Dangling] = []
  /// For each entry named `blob_…` (not `blob_` and a digit), where Couchbase Lite's pull goes:
  /// the start of the blob there, or nil.
  private(set) var blobFor: [Int: Int?] = [:]

  init(_ document: borrowing ScannedDocument, text: UnsafeBufferPointer<UInt8>) {
    let attachments = document.attachments
    guard document.isObject, attachments.count >= 1, attachments.isObject else { return }
    let entries = document.entries.elements
    var written = Set<[UInt8]>()
    for entry in entries where entry.isObject && entry.members.digestIsString {
      written.insert(Self.decoded(entry.members.digest, text))
    }
    // Each entry: removed (a stand-in for a blob, or Couchbase Lite 2.0's blob_<n>), or kept;
    // a blob whose digest differs takes the entry's members.
    var removed = Set<Int>()
    var fixes: [Int: Int] = [:]
    for (index, entry) in entries.enumerated() where entry.isObject {
      let name = Self.decoded(entry.key, text)
      guard name.starts(with: "blob_".utf8) else { continue }
      let pointer = name.dropFirst(5)
      if let first = pointer.first, first >= 0x30 && first <= 0x39 {
        removed.insert(index)
        continue
      }
      let resolution = Self.resolve(pointer, in: text)
      if case .fails(let reason) = resolution {
        failure = (index, reason)
        return
      }
      guard case .value(let value) = resolution, Self.isBlob(value, in: text) else {
        blobFor[index] = .some(nil)
        continue
      }
      blobFor[index] = value.start
      guard entry.members.digest.isPresent else { continue }
      removed.insert(index)
      let blobDigest = CompactObject.member("digest", of: value, in: text)
      if let blobDigest,
        Self.stringValue(blobDigest, text) != Self.stringValue(entry.members.digest, text),
        fixes[value.start] == nil
      {
        fixes[value.start] = index
      }
    }
    findDangling(
      document, text: text, removed: removed, fixes: fixes, written: written)
  }

  /// `DBAccess::findBlobReferences` over the document the pull keeps, then the check.
  private mutating func findDangling(
    _ document: borrowing ScannedDocument, text: UnsafeBufferPointer<UInt8>, removed: Set<Int>,
    fixes: [Int: Int], written: Set<[UInt8]>
  ) {
    let entries = document.entries.elements
    let attachmentsStart = document.attachments.value.start
    let keepsAttachments = entries.indices.contains {
      entries[$0].isObject && !removed.contains($0)
    }
    var entryAt: [Int: Int] = [:]
    for (index, entry) in entries.enumerated() { entryAt[entry.value.start] = index }
    var found = Set<[UInt8]>()
    var walker = CompactWalker(text: text)
    walker.walk { start, path in
      let end = { CompactObject.valueEnd(from: start, in: text) }
      if path.count == 1, case .key(let key) = path[0],
        Self.decoded(key, text).first == UInt8(ascii: "_")
      {
        // Old meta properties go; _attachments stays when an entry is kept.
        return start == attachmentsStart && keepsAttachments ? nil : end()
      }
      guard text[start] == UInt8(ascii: "{") else { return nil }
      var isEntry = false
      if path.count == 2, let entry = entryAt[start], start > attachmentsStart,
        start < document.attachments.value.end
      {
        if removed.contains(entry) { return end() }
        isEntry = true
      }
      let value = Span(start: start, end: end())
      let fix = fixes[start].map { entries[$0] }
      let type =
        fix.flatMap { CompactObject.member("@type", of: $0.value, in: text) }
        ?? CompactObject.member("@type", of: value, in: text)
      let digestValue =
        fix.map { $0.members.digest } ?? CompactObject.member("digest", of: value, in: text)
      guard isEntry || Self.stringValue(type, text) == Array("blob".utf8),
        let digestText = Self.stringValue(digestValue, text),
        let digest = digestText.withUnsafeBufferPointer({ AttachmentDigest($0) }),
        digest.algorithm == .sha1
      else { return nil }
      let canonical = Array(digest.description.utf8)
      if found.insert(canonical).inserted && !written.contains(canonical) {
        dangling.append(
          Dangling(
            blob: isEntry ? nil : Self.pointer(path, text),
            entry: isEntry ? entryAt[start] : nil,
            offset: isEntry
              ? entries[entryAt[start]!].keyOffset
              : document.blobs.elements.first { $0.span.start == start }?.inputStart
                ?? document.start,
            digest: digest.description))
      }
      return value.end
    }
  }

  /// Fleece's `Path::evalJSONPointer(pointer, root)` over the document `text`.
  static func resolve(_ pointer: some Collection<UInt8>, in text: UnsafeBufferPointer<UInt8>)
    -> Resolution
  {
    let pointer = Array(pointer)
    guard pointer.first == UInt8(ascii: "/") else {
      return .fails("JSONPointer does not start with '/'")
    }
    var current: Span? = Span(start: 0, end: text.count)
    var rest = pointer[1...]
    while !rest.isEmpty {
      guard let container = current else { return .nothing }
      let slash = rest.firstIndex(of: UInt8(ascii: "/")) ?? rest.endIndex
      let token = rest[rest.startIndex..<slash]
      switch text[container.start] {
      case UInt8(ascii: "["):
        let digits = token.prefix { $0 >= 0x30 && $0 <= 0x39 }
        var number = 0
        for digit in digits where number <= Int(Int32.max) {
          number = number * 10 + Int(digit - 0x30)
        }
        guard digits.count == token.count, number <= Int(Int32.max) else {
          return .fails("Invalid array index in JSONPointer")
        }
        current = CompactObject.element(number, of: container, in: text)
      case UInt8(ascii: "{"):
        current =
          token.isEmpty
          ? nil
          : CompactObject.members(container, in: text).last {
            CompactObject.key($0.key, in: text, is: Array(token))
          }?.value
      default:
        current = nil
      }
      if slash == rest.endIndex { break }
      rest = rest[(slash + 1)...]
    }
    return current.map { .value($0) } ?? .nothing
  }

  /// `C4Blob::isBlob`: an object whose `@type` is the string `blob`, whatever its digest.
  private static func isBlob(_ value: Span, in text: UnsafeBufferPointer<UInt8>) -> Bool {
    text[value.start] == UInt8(ascii: "{")
      && stringValue(CompactObject.member("@type", of: value, in: text), text)
        == Array("blob".utf8)
  }

  /// The decoded string a value is, or nil when it is absent or not a string (Fleece's
  /// `asString()`).
  private static func stringValue(_ value: Span?, _ text: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
    guard let value, value.isPresent, text[value.start] == UInt8(ascii: "\"") else { return nil }
    return decoded(value, text)
  }

  private static func decoded(_ token: Span, _ text: UnsafeBufferPointer<UInt8>) -> [UInt8] {
    JSONText.decodeString(UnsafeBufferPointer(rebasing: text[token.start..<token.end]))
  }

  private static func pointer(_ path: [CompactWalker.Step], _ text: UnsafeBufferPointer<UInt8>)
    -> String
  {
    NamedPlace(
      steps: path.map {
        switch $0 {
        case .key(let key): .key(decoded(key, text))
        case .index(let index): .index(index)
        }
      }
    ).pointer
  }
}
