import Foundation
@_spi(Testing) import LegacyAttachments
import TestSupport

// The reference model: SPEC.md push and pull written the obvious way, on a whole tree
// (parse, walk, rebuild, serialise), with none of the engine's streaming machinery.

/// Why the model rejects a document (the SPEC's bad-document cases).
enum ModelRejection: Error, Equatable {
  case malformedJSON
  /// One value and then more text: not one document. Which problem a stream reader reports
  /// first (the first value's, or the text after it) is a matter of reading order, not of SPEC.
  case moreThanOneValue
  case notAnObject
  case duplicateAttachments
  case attachmentsNotObject
  /// Push with `strict`: a blob reference without a string digest.
  case blobWithoutDigest
  /// Pull: an entry to remove has a `data` member that is not a string.
  case invalidData
  /// Pull with `strict`: an entry that carries bytes no blob holds is kept (a warning).
  case dataKept
  /// Push with `strict`: an entry push replaces carries bytes no blob holds (a warning).
  case dataDropped
  /// Upgrade with `strict`: an entry that cannot become a blob stays (a warning).
  case upgradeKept
  /// Upgrade: a name already in the property, or a property that is not an object.
  case upgradeClash
  /// Upgrade: inline bytes that are not the digest's.
  case dataMismatch
  /// Pull `--update-blobs` with `strict`: an entry names a blob, but its digest is not `sha1-`.
  case blobNotUpdated
  /// Pull with `strict`: an entry with a synthesized name mirrors no blob (a warning).
  case entryKept
  /// Upgrade with `strict`: CouchDB's md5- of a body it may have compressed, which no form of
  /// the bytes gives (a warning).
  case unverified
  /// Upgrade: inline bytes whose size is not the entry's `length`.
  case lengthMismatch

  /// The engine's diagnostic kind for the same rejection.
  var kind: ConversionDiagnostic.Kind {
    switch self {
    case .malformedJSON, .moreThanOneValue: .malformedJSON
    case .notAnObject: .notAnObject
    case .duplicateAttachments: .duplicateAttachments
    case .attachmentsNotObject: .attachmentsNotObject
    case .blobWithoutDigest: .blobWithoutDigest
    case .invalidData: .invalidData
    case .dataKept: .dataKept
    case .dataDropped: .dataDropped
    case .upgradeKept: .upgradeKept
    case .upgradeClash: .upgradeClash
    case .dataMismatch: .dataMismatch
    case .blobNotUpdated: .blobNotUpdated
    case .lengthMismatch: .lengthMismatch
    case .entryKept: .entryKept
    case .unverified: .unverified
    }
  }
}

/// What the model makes of one document.
struct ModelOutput: Equatable {
  /// The compact converted document.
  var bytes: [UInt8]
  /// Warnings: blob references without a string digest and replaced entries whose `data` is
  /// dropped (push), entries kept for their `data` (pull).
  var warnings: Int
}

enum ReferenceModel {
  /// One step from the document root: an object key (decoded) or an array index.
  enum Step: Equatable {
    case key([UInt8])
    case index(Int)
  }

  /// A blob found outside the top-level `_attachments`.
  struct BlobReference {
    var path: [Step]
    var members: [RawMember]
    /// The decoded value of the last `digest` member, when that member is a string.
    var digest: [UInt8]?
    /// The decoded value of the last `data` member, when that member is a string.
    var data: [UInt8]?
  }

  static let attachmentsKey = Array("_attachments".utf8)
  static let typeKey = Array("@type".utf8)
  static let digestKey = Array("digest".utf8)
  static let stubKey = Array("stub".utf8)
  static let revposKey = Array("revpos".utf8)
  static let revKey = Array("_rev".utf8)
  static let dataKey = Array("data".utf8)
  static let blobValue = Array("blob".utf8)

  /// A document parsed once, for converting it several ways.
  struct Document {
    /// The top-level members, or why the document is rejected whatever the mode.
    var members: Result<[RawMember], ModelRejection>
    /// The blob references (empty when the document is rejected).
    var blobs: [BlobReference] = []

    init(_ bytes: [UInt8]) {
      do throws(ModelRejection) {
        let members = try topLevelMembers(bytes)
        self.members = .success(members)
        blobs = blobReferences(in: members)
      } catch {
        members = .failure(error)
      }
    }

    func push(naming: EntryNaming = .jsonpath, revpos: Int? = nil, strict: Bool = false)
      throws(ModelRejection) -> ModelOutput
    {
      try ReferenceModel.push(
        members.get(), blobs: blobs, naming: naming, revpos: revpos, strict: strict)
    }

    func pull(strict: Bool = false) throws(ModelRejection) -> ModelOutput {
      try ReferenceModel.pull(members.get(), blobs: blobs, strict: strict)
    }
  }

  // MARK: Push

  static func push(
    _ document: [UInt8], naming: EntryNaming = .jsonpath, revpos: Int? = nil, strict: Bool = false
  ) throws(ModelRejection) -> ModelOutput {
    try Document(document).push(naming: naming, revpos: revpos, strict: strict)
  }

  static func push(
    _ topLevel: [RawMember], blobs: [BlobReference], naming: EntryNaming,
    revpos explicitRevpos: Int?,
    strict: Bool
  ) throws(ModelRejection) -> ModelOutput {
    var members = topLevel
    let attachmentsIndex = members.firstIndex { $0.key.equals(attachmentsKey) }
    if let attachmentsIndex, !members[attachmentsIndex].value.isObject, !blobs.isEmpty {
      throw .attachmentsNotObject
    }
    var warnings = blobs.filter { $0.digest == nil }.count
    if strict && warnings > 0 { throw .blobWithoutDigest }
    // An entry push replaces (a synthesized name) that carries bytes: they are dropped unless
    // a blob with its digest has the same `data`.
    if let attachmentsIndex, let existing = members[attachmentsIndex].value.members {
      for entry in existing where isSynthesizedName(entry.key.value) {
        guard let data = entry.value.members?.last(where: { $0.key.equals(dataKey) })?.value
        else { continue }
        let digest = digest(of: entry.value)
        let bytes = data.string?.value
        if bytes == nil || digest == nil
          || !blobs.contains(where: { $0.digest == digest && $0.data == bytes })
        {
          if strict { throw .dataDropped }
          warnings += 1
        }
      }
    }

    let revpos = explicitRevpos ?? revisionGeneration(members)
    var made: [RawMember] = []
    for blob in blobs where blob.digest != nil {
      let name: [UInt8] = naming == .jsonpath ? jsonpathName(blob.path) : litecoreName(blob.path)
      var entry = blob.members.filter { !$0.key.equals(typeKey) }
      if naming == .litecore {
        entry = entry.filter { !$0.key.equals(stubKey) && !$0.key.equals(revposKey) }
        entry.append(RawMember(key: RawString(quoting: "stub"), value: .scalar(Array("true".utf8))))
        entry.append(
          RawMember(key: RawString(quoting: "revpos"), value: .scalar(Array(String(revpos).utf8))))
      }
      made.append(RawMember(key: RawString(quoting: name), value: .object(entry)))
    }

    if let attachmentsIndex {
      if let existing = members[attachmentsIndex].value.members {
        let kept = existing.filter { !isSynthesizedName($0.key.value) }
        members[attachmentsIndex].value = .object(kept + made)
      }
    } else if !made.isEmpty {
      members.append(RawMember(key: RawString(quoting: attachmentsKey), value: .object(made)))
    }
    return ModelOutput(bytes: RawJSON.object(members).serialized(), warnings: warnings)
  }

  /// SPEC.md push rule 3, as three regular expressions over the decoded name: `$` and one or
  /// more `jsonpath` steps, `blob_/` and a JSON Pointer, or `blob_` and digits.
  static func isSynthesizedName(_ name: [UInt8]) -> Bool {
    let text = String(decoding: name, as: UTF8.self)
    return synthesizedPatterns.contains { (try? $0.wholeMatch(in: text)) != nil }
  }

  nonisolated(unsafe) static let synthesizedPatterns: [Regex<AnyRegexOutput>] = [
    #"\$(?:\.(?:[^\\.\[]|\\[\\.\[])*|\[[0-9]+\])+"#,
    #"blob_/(?:[^~]|~[01])*"#,
    #"blob_[0-9]+"#,
  ].map { try! Regex($0).matchingSemantics(.unicodeScalar) }

  /// `$` then `.key` (with `\`, `.`, `[` backslash-escaped) or `[index]` per step.
  static func jsonpathName(_ path: [Step]) -> [UInt8] {
    var name = Array("$".utf8)
    for step in path {
      switch step {
      case .key(let key):
        name.append(UInt8(ascii: "."))
        for byte in key {
          if byte == UInt8(ascii: "\\") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "[") {
            name.append(UInt8(ascii: "\\"))
          }
          name.append(byte)
        }
      case .index(let index):
        name += Array("[\(index)]".utf8)
      }
    }
    return name
  }

  /// `blob_` then the RFC 6901 JSON Pointer (`~` → `~0`, `/` → `~1`).
  static func litecoreName(_ path: [Step]) -> [UInt8] {
    var name = Array("blob_".utf8)
    for step in path {
      name.append(UInt8(ascii: "/"))
      switch step {
      case .key(let key):
        for byte in key {
          switch byte {
          case UInt8(ascii: "~"): name += Array("~0".utf8)
          case UInt8(ascii: "/"): name += Array("~1".utf8)
          default: name.append(byte)
          }
        }
      case .index(let index):
        name += Array(String(index).utf8)
      }
    }
    return name
  }

  /// The generation of the (last) top-level `_rev` string: its leading decimal digits when a `-`
  /// follows them and the number is positive, else 1.
  static func revisionGeneration(_ members: [RawMember]) -> Int {
    guard let rev = members.last(where: { $0.key.equals(revKey) })?.value.string?.value,
      let dash = rev.firstIndex(of: UInt8(ascii: "-")), dash > 0
    else { return 1 }
    let digits = rev[..<dash]
    guard digits.count <= 18,
      digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
      let generation = Int(String(decoding: digits, as: UTF8.self)), generation > 0
    else { return 1 }
    return generation
  }

  // MARK: Pull

  static func pull(_ document: [UInt8]) throws(ModelRejection) -> ModelOutput {
    try Document(document).pull()
  }

  static func pull(_ topLevel: [RawMember], blobs: [BlobReference], strict: Bool = false)
    throws(ModelRejection) -> ModelOutput
  {
    var members = topLevel
    var warnings = 0
    func warn(_ kind: ModelRejection) throws(ModelRejection) {
      if strict { throw kind }
      warnings += 1
    }
    if let attachmentsIndex = members.firstIndex(where: { $0.key.equals(attachmentsKey) }),
      let entries = members[attachmentsIndex].value.members
    {
      var kept: [RawMember] = []
      for entry in entries {
        let mirror = mirror(entry, blobs: blobs)
        if case .none(let synthesized) = mirror {
          if synthesized { try warn(.entryKept) }
          kept.append(entry)
          continue
        }
        if let data = entry.value.members?.last(where: { $0.key.equals(dataKey) })?.value {
          // The entry carries the bytes: it goes only when the blob it mirrors has them too.
          guard let bytes = data.string?.value else { throw .invalidData }
          if !mirror.blobHolds(bytes, entry: entry, blobs: blobs) {
            try warn(.dataKept)
            kept.append(entry)
          }
        }
      }
      if kept.count < entries.count && kept.isEmpty {
        members.remove(at: attachmentsIndex)
      } else {
        members[attachmentsIndex].value = .object(kept)
      }
    }
    return ModelOutput(bytes: RawJSON.object(members).serialized(), warnings: warnings)
  }

  /// Which blob an entry stands for (SPEC.md pull rule 1, and "Running peers": CouchDB
  /// re-labels digests md5-, so an entry with a synthesized name, an md5- digest and the bytes
  /// (SHA-1) or else the length
  /// of the blob at the place its name gives stands for that blob).
  enum Mirror: Equatable {
    case digest([UInt8])
    case place(Int)
    /// None; whether the entry's name is a synthesized one (a warning).
    case none(synthesized: Bool)

    /// Whether the blob mirrored holds `bytes` as its `data`.
    func blobHolds(_ bytes: [UInt8], entry: RawMember, blobs: [BlobReference]) -> Bool {
      switch self {
      case .digest(let digest): blobs.contains { $0.digest == digest && $0.data == bytes }
      case .place(let index): blobs[index].data == bytes
      case .none: false
      }
    }
  }

  static func mirror(_ entry: RawMember, blobs: [BlobReference]) -> Mirror {
    guard let entryMembers = entry.value.members else { return .none(synthesized: false) }
    let digest = digest(of: entry.value)
    if let digest, blobs.contains(where: { $0.digest == digest }) { return .digest(digest) }
    let synthesized = isSynthesizedName(entry.key.value)
    guard synthesized, let digest, digest.starts(with: "md5-".utf8),
      let index = blob(named: entry.key.value, in: blobs), let blobDigest = blobs[index].digest
    else { return .none(synthesized: synthesized) }
    // The bytes the entry carries decide when it carries a string: their SHA-1 is the blob's
    // digest or not (the generators' bodies are in KnownBodies; any other string is not base64).
    if let data = entryMembers.last(where: { $0.key.equals(dataKey) })?.value,
      let text = data.string?.value
    {
      return KnownBodies.table[text]?.sha1 == blobDigest
        ? .place(index) : .none(synthesized: synthesized)
    }
    guard
      let blobLength = wholeNumber(blobs[index].members.last { $0.key.equals(lengthKey) }?.value),
      let entryLength = entryMembers.last(where: { $0.key.equals(lengthKey) }).map({
        wholeNumber($0.value)
      }) ?? nil,
      blobLength == entryLength
    else { return .none(synthesized: synthesized) }
    return .place(index)
  }

  /// A scalar's value when it is a whole number ≥ 0 (`4`, `4.0`, `4e0`).
  static func wholeNumber(_ value: RawJSON?) -> Int? {
    guard case .scalar(let literal)? = value,
      var number = Decimal(string: String(decoding: literal, as: UTF8.self)), number >= 0
    else { return nil }
    var whole = Decimal()
    NSDecimalRound(&whole, &number, 0, .plain)
    guard whole == number else { return nil }
    return NSDecimalNumber(decimal: number).intValue
  }

  // MARK: Shared

  /// The members of a document that may be converted, or the reason it may not.
  static func topLevelMembers(_ document: [UInt8]) throws(ModelRejection) -> [RawMember] {
    let tree: RawJSON
    do {
      tree = try RawJSON.parse(document)
    } catch {
      throw error.isTrailingText ? .moreThanOneValue : .malformedJSON
    }
    guard let members = tree.members else { throw .notAnObject }
    if members.filter({ $0.key.equals(attachmentsKey) }).count > 1 {
      throw .duplicateAttachments
    }
    return members
  }

  /// Whether `value` is a blob: an object with an `@type` member whose value is the string `blob`.
  static func isBlob(_ value: RawJSON) -> Bool {
    guard let members = value.members else { return false }
    return members.contains { $0.key.equals(typeKey) && $0.value.string?.equals(blobValue) == true }
  }

  /// The decoded value of an object's last `digest` member, if that member is a string.
  static func digest(of value: RawJSON) -> [UInt8]? {
    value.members?.last { $0.key.equals(digestKey) }?.value.string?.value
  }

  /// Every blob reference, in document order: the top-level `_attachments` is skipped, the root
  /// itself is never a reference, and the walk does not descend into a blob.
  static func blobReferences(in members: [RawMember]) -> [BlobReference] {
    var found: [BlobReference] = []
    var path: [Step] = []
    func walk(_ value: RawJSON) {
      switch value {
      case .object(let members):
        if isBlob(value) {
          let data = members.last { $0.key.equals(dataKey) }?.value.string?.value
          found.append(
            BlobReference(path: path, members: members, digest: digest(of: value), data: data))
          return
        }
        for member in members {
          path.append(.key(member.key.value))
          walk(member.value)
          path.removeLast()
        }
      case .array(let elements):
        for (index, element) in elements.enumerated() {
          path.append(.index(index))
          walk(element)
          path.removeLast()
        }
      case .string, .scalar:
        break
      }
    }
    for member in members where !member.key.equals(attachmentsKey) {
      path = [.key(member.key.value)]
      walk(member.value)
    }
    return found
  }
}
