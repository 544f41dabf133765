/// Couchbase Lite's pull of one incoming revision, as its own code does it (couchbase-lite-core:
/// `legacy_attachments::encodeStrippingOldMetaProperties`, Fleece's `Path::evalJSONPointer`,
/// `DBAccess::findBlobReferences` and the dangling-blob check of `IncomingRev::parseAndInsert`),
/// so that `--check` can say before a sync what that pull refuses. `make litecore` compares it
/// with `litecore-harness`, which runs that code.
///
/// What the tool's own pull does differs on purpose in places (docs/compatibility.md): this type
/// describes Couchbase Lite, it does not convert. A cold path: the document's compact text is
/// indexed once (``CompactIndex``), so the model costs time in proportion to the document.
struct LiteCorePull {
  /// Where Fleece's `Path::evalJSONPointer` goes for the text after `blob_` in an entry name:
  /// tokens split at `/` and never decoded (`~0`, `~1` stay as they are); over an array, a token
  /// must be decimal digits below 2^31 or the call throws; an empty token over an object finds
  /// nothing (SharedKeys are on for incoming revisions); a last `/` is dropped; `/` alone is the
  /// document itself.
  enum Resolution: Equatable {
    case value(Span)
    case nothing
    /// The call throws, and the replicator fails the revision; Fleece's message.
    case fails(String)
  }

  /// What an entry named `blob_/…` stands for in Couchbase Lite's pull.
  enum Target: Equatable {
    /// The blob that starts at this offset of the compact text (0: the document itself).
    case blob(Int)
    /// No blob is where its name leads.
    case noBlob
  }

  /// A blob reference the pull finds (a blob, or an entry left in `_attachments`) whose digest,
  /// as Couchbase Lite reads it, no entry of the incoming `_attachments` has as written.
  struct Dangling: Equatable {
    /// The blob's start in the compact text, or nil when it is an entry left in `_attachments`.
    var blob: Int?
    /// The entry's index, when it is one.
    var entry: Int?
    /// The digest as Couchbase Lite reads it (canonical base64).
    var digest: String
  }

  /// The entry whose name makes the pull throw, and Fleece's message.
  private(set) var failure: (entry: Int, reason: String)?
  /// What the dangling-blob check finds, each digest once, in document order; empty when
  /// `_attachments` is not an object (the check runs only then).
  private(set) var dangling: [Dangling] = []
  /// For each entry named `blob_/…` that is an object, what Couchbase Lite's pull takes it for.
  private(set) var targets: [Int: Target] = [:]
  /// The document, indexed.
  let index: CompactIndex

  init(_ document: borrowing ScannedDocument, text: UnsafeBufferPointer<UInt8>) {
    index = CompactIndex(text)
    let attachments = document.attachments
    guard document.isObject, attachments.count >= 1, attachments.isObject else { return }
    let entries = document.entries.elements
    var removed = Set<Int>()
    var fixes: [Int: Int] = [:]
    // Fleece keeps a dictionary's keys sorted, and `blob_/…` names (never shared keys) in
    // byte order: the first entry in that order that fixes a blob is the one it takes.
    let names = entries.indices.map { Self.decoded(entries[$0].key, text) }
    for entryIndex in entries.indices.sorted(by: { names[$0].lexicographicallyPrecedes(names[$1]) })
    where entries[entryIndex].isObject {
      let entry = entries[entryIndex]
      guard names[entryIndex].starts(with: "blob_".utf8) else { continue }
      let pointer = names[entryIndex].dropFirst(5)
      // Couchbase Lite 2.0's blob_<n>: removed whatever it holds.
      if let first = pointer.first, first >= 0x30 && first <= 0x39 {
        removed.insert(entryIndex)
        continue
      }
      let resolution = Self.resolve(pointer, in: index)
      if case .fails(let reason) = resolution {
        failure = (entryIndex, reason)
        return
      }
      guard case .value(let value) = resolution, isBlob(value) else {
        targets[entryIndex] = .noBlob
        continue
      }
      targets[entryIndex] = .blob(value.start)
      guard entry.members.digest.isPresent else { continue }
      removed.insert(entryIndex)
      // The document itself is never rewritten, so never fixed; a blob whose digest differs
      // takes the entry's members (the first such entry's).
      if value.start != 0, let blobDigest = index.member(Array("digest".utf8), of: value),
        index.string(blobDigest) != index.string(entry.members.digest), fixes[value.start] == nil
      {
        fixes[value.start] = entryIndex
      }
    }
    findDangling(document, removed: removed, fixes: fixes)
  }

  /// `DBAccess::findBlobReferences` over the document the pull keeps (in document order, a
  /// reference's inside skipped), then the check against the digests of the incoming entries.
  private mutating func findDangling(
    _ document: borrowing ScannedDocument, removed: Set<Int>, fixes: [Int: Int]
  ) {
    let text = index.text
    // The puller looks for blobs only when the body has the bytes "digest" (`mayContainBlobs`).
    guard Self.contains(Array("\"digest\"".utf8), in: text) else { return }
    let entries = document.entries.elements
    var written = Set<[UInt8]>()
    for entry in entries where entry.isObject && entry.members.digestIsString {
      written.insert(Self.decoded(entry.members.digest, text))
    }
    let attachments = document.attachments.value
    let keepsAttachments = entries.indices.contains {
      entries[$0].isObject && !removed.contains($0)
    }
    var entryAt: [Int: Int] = [:]
    for (position, entry) in entries.enumerated() { entryAt[entry.value.start] = position }
    var found = Set<[UInt8]>()
    // (value, depth, inside a fixed blob): in document order, children pushed last first.
    var pending: [(value: Span, depth: Int, inFixed: Bool)] = [
      (index.value(at: 0), 0, false)
    ]
    while let (value, depth, inFixed) = pending.popLast() {
      if index.isArray(value) {
        for element in index.elements(of: value).reversed() {
          pending.append((element, depth + 1, inFixed))
        }
        continue
      }
      guard index.isObject(value) else { continue }
      let entryIndex = depth == 2 ? entryAt[value.start] : nil
      let fix = inFixed ? nil : fixes[value.start].map { entries[$0] }
      if let digest = referenceDigest(value, isEntry: entryIndex != nil, fix: fix) {
        let canonical = Array(digest.description.utf8)
        if found.insert(canonical).inserted && !written.contains(canonical) {
          dangling.append(
            Dangling(
              blob: entryIndex == nil ? value.start : nil, entry: entryIndex,
              digest: digest.description))
        }
        continue
      }
      for member in index.members(of: value).reversed() {
        if depth == 0 && member.key.first == UInt8(ascii: "_") {
          // Old meta properties go; _attachments stays when an entry is kept.
          guard member.value.start == attachments.start && keepsAttachments else { continue }
        }
        if depth == 1 && value.start == attachments.start,
          let entry = entryAt[member.value.start], removed.contains(entry)
        {
          continue
        }
        pending.append((member.value, depth + 1, inFixed || fix != nil))
      }
    }
  }

  /// The digest Couchbase Lite reads for a reference: a blob (`@type` `blob`, the entry's
  /// members first when it fixes the blob) or an entry left in `_attachments`, whose digest is
  /// a `sha1-` digest `C4BlobKey` takes. Nil for anything else.
  private func referenceDigest(_ value: Span, isEntry: Bool, fix: LegacyEntry?)
    -> AttachmentDigest?
  {
    let type =
      fix.flatMap { index.member(Array("@type".utf8), of: $0.value) }
      ?? index.member(Array("@type".utf8), of: value)
    let digestValue = fix.map(\.members.digest) ?? index.member(Array("digest".utf8), of: value)
    guard isEntry || index.string(type) == Array("blob".utf8),
      let digestText = index.string(digestValue),
      let digest = digestText.withUnsafeBufferPointer({ AttachmentDigest($0) }),
      digest.algorithm == .sha1
    else { return nil }
    return digest
  }

  /// Fleece's `Path::evalJSONPointer(pointer, root)` over the document `index` holds.
  static func resolve(_ pointer: some Collection<UInt8>, in index: CompactIndex) -> Resolution {
    let pointer = Array(pointer)
    guard pointer.first == UInt8(ascii: "/") else {
      return .fails("JSONPointer does not start with '/'")
    }
    var current: Span? = index.value(at: 0)
    var rest = pointer[1...]
    while !rest.isEmpty {
      guard let container = current else { return .nothing }
      let slash = rest.firstIndex(of: UInt8(ascii: "/")) ?? rest.endIndex
      let token = rest[rest.startIndex..<slash]
      if index.isArray(container) {
        let digits = token.prefix { $0 >= 0x30 && $0 <= 0x39 }
        var number = 0
        for digit in digits where number <= Int(Int32.max) {
          number = number * 10 + Int(digit - 0x30)
        }
        guard digits.count == token.count, number <= Int(Int32.max) else {
          return .fails("Invalid array index in JSONPointer")
        }
        let elements = index.elements(of: container)
        current = number < elements.count ? elements[number] : nil
      } else if index.isObject(container) {
        current = token.isEmpty ? nil : index.member(Array(token), of: container)
      } else {
        current = nil
      }
      if slash == rest.endIndex { break }
      rest = rest[(slash + 1)...]
    }
    return current.map { .value($0) } ?? .nothing
  }

  /// `C4Blob::isBlob`: an object whose `@type` is the string `blob`, whatever its digest.
  private func isBlob(_ value: Span) -> Bool {
    index.isObject(value)
      && index.string(index.member(Array("@type".utf8), of: value)) == Array("blob".utf8)
  }

  /// The RFC 6901 pointer of the value that starts at `start` (for messages): from the root
  /// down, the member or element holding `start` found by bisection at each level.
  func pointer(to start: Int) -> String {
    var steps: [NamedPlace.Step] = []
    var container = index.value(at: 0)
    while container.start != start {
      if index.isObject(container) {
        let members = index.members(of: container)
        guard let position = Self.holding(start, in: members.lazy.map(\.value)) else { break }
        steps.append(.key(members[position].key))
        container = members[position].value
      } else if index.isArray(container) {
        let elements = index.elements(of: container)
        guard let position = Self.holding(start, in: elements) else { break }
        steps.append(.index(position))
        container = elements[position]
      } else {
        break
      }
    }
    return NamedPlace(steps: steps).pointer
  }

  /// The position of the span among `spans` (in text order, apart) that holds `offset`.
  private static func holding<Spans: RandomAccessCollection>(_ offset: Int, in spans: Spans)
    -> Int? where Spans.Element == Span, Spans.Index == Int
  {
    var low = spans.startIndex
    var high = spans.endIndex
    while low < high {
      let middle = (low + high) / 2
      if spans[middle].end <= offset {
        low = middle + 1
      } else if spans[middle].start > offset {
        high = middle
      } else {
        return middle
      }
    }
    return nil
  }

  private static func decoded(_ token: Span, _ text: UnsafeBufferPointer<UInt8>) -> [UInt8] {
    JSONText.decodeString(UnsafeBufferPointer(rebasing: text[token.start..<token.end]))
  }

  private static func contains(_ needle: [UInt8], in text: UnsafeBufferPointer<UInt8>) -> Bool {
    guard let first = needle.first, text.count >= needle.count else { return false }
    var index = 0
    while index <= text.count - needle.count {
      if text[index] == first && text[index..<index + needle.count].elementsEqual(needle) {
        return true
      }
      index += 1
    }
    return false
  }
}
