@_spi(Testing) import LegacyAttachments
import TestSupport
import Testing

/// SPEC.md "Couchbase Lite compatibility" on generated Couchbase Lite 1.x, CouchDB and PouchDB
/// documents (Model/LegacyDocumentGenerator.swift): the engine against the reference model for
/// `--upgrade` and `--pull --update-blobs`, and the properties the issue names: upgrade is
/// idempotent, pull after it changes nothing, `--list` shows the same digests (as blobs instead of
/// legacy entries), and `pull(push(upgrade(d))) == upgrade(d)`.
@Suite struct CompatibilityPropertyTests {
  static let documentsPerBatch = 1_500
  static let batches = 4

  static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

  static func documents(batch: Int, into: String = "attachments") -> [[UInt8]] {
    // Blobs in the documents' other properties carry base64 strings, as Couchbase Lite writes
    // them (non-string data is in the legacy entries, on purpose).
    var options = DocumentGenerator.Options()
    options.nonStringData = false
    var generator = DocumentGenerator(seed: 0x1E6A_C700 &+ UInt64(batch), options: options)
    return (0..<documentsPerBatch).map { _ in generator.legacyDocument(into: into).serialized() }
  }

  typealias Outcome = DifferentialTests.Outcome

  static func engine(_ document: [UInt8], _ options: ConversionOptions) -> Outcome {
    do {
      let converted = try CBLAttachments.convert(document, options: options)
      return .converted(converted.bytes, warnings: converted.warnings.count)
    } catch {
      return .rejected(error.diagnostic.kind)
    }
  }

  static func model(_ body: () throws(ModelRejection) -> ModelOutput) -> Outcome {
    do {
      let output = try body()
      return .converted(output.bytes, warnings: output.warnings)
    } catch {
      return .rejected(error.kind)
    }
  }

  static func upgraded(_ document: [UInt8], into: String = "attachments") -> [UInt8]? {
    try? CBLAttachments.convert(
      document, options: ConversionOptions(mode: .upgrade, upgradeInto: into)
    ).bytes
  }

  // MARK: Against the model

  @Test("upgrade and pull --update-blobs equal the model", arguments: 0..<batches)
  func againstTheModel(batch: Int) {
    let into = batch % 2 == 0 ? "attachments" : "files"
    var mismatches: [String] = []
    var changed = 0
    var rejected = 0
    var warned = 0
    var updatedBlobs = 0
    for document in Self.documents(batch: batch, into: into) {
      let model = ReferenceModel.Document(document)
      let cases: [(String, ConversionOptions, Outcome)] = [
        (
          "upgrade --into \(into)", ConversionOptions(mode: .upgrade, upgradeInto: into),
          Self.model { () throws(ModelRejection) in try model.upgrade(into: into) }
        ),
        (
          "upgrade --strict", ConversionOptions(mode: .upgrade, upgradeInto: into, strict: true),
          Self.model { () throws(ModelRejection) in try model.upgrade(into: into, strict: true) }
        ),
        (
          "pull --update-blobs", ConversionOptions(mode: .pull, updateBlobs: true),
          Self.model { () throws(ModelRejection) in try model.pullUpdatingBlobs() }
        ),
        (
          "pull --update-blobs --strict",
          ConversionOptions(mode: .pull, updateBlobs: true, strict: true),
          Self.model { () throws(ModelRejection) in try model.pullUpdatingBlobs(strict: true) }
        ),
      ]
      for (index, (name, options, expected)) in cases.enumerated() {
        let actual = Self.engine(document, options)
        if actual != expected {
          mismatches.append(
            "\(name) of \(Self.text(document))\n  model:  \(expected)\n  engine: \(actual)")
        }
        switch expected {
        case .converted(let bytes, let warnings):
          if bytes != document { changed += 1 }
          // --update-blobs did something plain pull does not.
          if index == 2, let pulled = try? model.pull().bytes, pulled != bytes { updatedBlobs += 1 }
          if warnings > 0 { warned += 1 }
        case .rejected:
          rejected += 1
        }
      }
    }
    let shortest = mismatches.sorted { $0.count < $1.count }.prefix(3).joined(separator: "\n")
    #expect(mismatches.isEmpty, "\(mismatches.count) mismatches; shortest:\n\(shortest)")
    // The comparison is only worth something if the documents exercise every outcome.
    #expect(changed > Self.documentsPerBatch, "changed: \(changed)")
    #expect(rejected > 20 && warned > 20, "rejected: \(rejected), warned: \(warned)")
    #expect(updatedBlobs > 20, "pull --update-blobs changed \(updatedBlobs) documents")
  }

  // MARK: Properties

  @Test(
    "upgrade(upgrade(d)) == upgrade(d), and pull after upgrade changes nothing", arguments: 0..<2)
  func idempotent(batch: Int) {
    var failures: [String] = []
    var upgradedCount = 0
    for document in Self.documents(batch: 10 + batch) {
      guard let once = Self.upgraded(document) else { continue }
      if once != document { upgradedCount += 1 }
      let twice = Self.upgraded(once)
      if twice != once {
        failures.append(
          "\(Self.text(document))\n  once:  \(Self.text(once))\n  twice: \(twice.map(Self.text) ?? "rejected")"
        )
      }
      let pulled = try? CBLAttachments.pull(once)
      if pulled != once {
        failures.append(
          "\(Self.text(document))\n  upgraded: \(Self.text(once))\n  pulled:   \(pulled.map(Self.text) ?? "rejected")"
        )
      }
    }
    #expect(failures.isEmpty, "\(failures.count) failures; first: \(failures.first ?? "")")
    #expect(upgradedCount > Self.documentsPerBatch / 3, "upgraded: \(upgradedCount)")
  }

  /// One `--list` row, as far as this property reads it.
  struct Row: Hashable {
    var kind: String
    var name: [UInt8]
    var pointer: [UInt8]
    var digest: [UInt8]
  }

  static func rows(_ document: [UInt8]) -> [Row] {
    let result = CBLAttachments.convertStream(document, options: ConversionOptions(mode: .list))
    return result.output.split(separator: 0x0A).compactMap { line in
      guard let members = try? RawJSON.parse(Array(line)).members,
        let kind = members.first(where: { $0.key.equals("kind") })?.value.string?.value,
        let name = members.first(where: { $0.key.equals("name") })?.value.string?.value,
        let pointer = members.first(where: { $0.key.equals("pointer") })?.value.string?.value,
        let digest = members.first(where: { $0.key.equals("digest") })?.value.string?.value
      else { return nil }
      return Row(
        kind: String(decoding: kind, as: UTF8.self), name: name, pointer: pointer, digest: digest)
    }
  }

  /// An md5 digest of a known body (its own, or CouchDB's of it compressed) is the same
  /// attachment as the SHA-1 that replaces it.
  static func normalized(_ digest: [UInt8]) -> [UInt8] {
    KnownBodies.table.values.first { $0.md5 == digest || $0.couchDBGzipMD5 == digest }?.sha1
      ?? digest
  }

  @Test(
    "--list before and after upgrade shows the same digests, as blobs instead of legacy entries",
    arguments: 0..<2)
  func listShowsTheSameDigests(batch: Int) {
    var failures: [String] = []
    var moved = 0
    for document in Self.documents(batch: 20 + batch) {
      guard let upgraded = Self.upgraded(document) else { continue }
      let before = Self.rows(document)
      let after = Self.rows(upgraded)
      func fail(_ why: String) {
        failures.append("\(why): \(Self.text(document))\n  upgraded: \(Self.text(upgraded))")
      }
      if Set(before.map { Self.normalized($0.digest) })
        != Set(after.map { Self.normalized($0.digest) })
      {
        fail("the digests differ")
        continue
      }
      let legacyBefore = Set(before.filter { $0.kind == "legacy" })
      if !after.filter({ $0.kind == "legacy" }).allSatisfy(legacyBefore.contains) {
        fail("a legacy entry appeared")
        continue
      }
      let blobPointersBefore = Set(before.filter { $0.kind == "blob" }.map(\.pointer))
      for row in after where row.kind == "blob" && !blobPointersBefore.contains(row.pointer) {
        moved += 1
        let prefix = Array("/attachments/".utf8)
        let token =
          row.pointer.starts(with: prefix) ? Array(row.pointer.dropFirst(prefix.count)) : nil
        let name = token.flatMap { ReferenceModel.decodePointer([UInt8(ascii: "/")] + $0) }?.first
        guard let name,
          legacyBefore.contains(where: {
            $0.name == name && Self.normalized($0.digest) == Self.normalized(row.digest)
          })
        else {
          fail("the new blob at \(Self.text(row.pointer)) is no legacy entry's")
          break
        }
      }
    }
    #expect(failures.isEmpty, "\(failures.count) failures; first: \(failures.first ?? "")")
    #expect(moved > Self.documentsPerBatch / 2, "entries moved into blobs: \(moved)")
  }

  @Test("pull(push(upgrade(d))) == upgrade(d), with either naming", arguments: 0..<2)
  func pushThenPullGivesTheUpgradeBack(batch: Int) {
    var failures: [String] = []
    var checked = 0
    for document in Self.documents(batch: 30 + batch) {
      guard let upgraded = Self.upgraded(document),
        let members = try? RawJSON.parse(upgraded).members
      else { continue }
      // SPEC.md's pull(push(d)) == d holds for documents whose _attachments has no entry with a
      // synthesized name (push replaces those) and is not an empty object (pull removes it).
      if let attachments = members.first(where: { $0.key.equals("_attachments") })?.value.members,
        attachments.isEmpty
          || attachments.contains(where: { ReferenceModel.isSynthesizedName($0.key.value) })
      {
        continue
      }
      checked += 1
      for naming in EntryNaming.allCases {
        let pushed = try? CBLAttachments.push(upgraded, naming: naming)
        let pulled = pushed.flatMap { try? CBLAttachments.pull($0) }
        if pulled != upgraded {
          failures.append(
            "\(naming): \(Self.text(upgraded))\n  pushed: \(pushed.map(Self.text) ?? "rejected")\n  pulled: \(pulled.map(Self.text) ?? "rejected")"
          )
        }
      }
    }
    #expect(failures.isEmpty, "\(failures.count) failures; first: \(failures.first ?? "")")
    #expect(checked > Self.documentsPerBatch / 2, "documents checked: \(checked)")
  }

  @Test(
    "upgrade says why an entry stays or clashes: bytes a mirrored blob lacks, a malformed digest, two entries of one name"
  )
  func upgradeReasons() throws {
    let digest = "sha1-qvTGHdzF6KLavt4PO0gs2a6pQ00="  // "hello"
    func messages(_ document: String) -> [String] {
      CBLAttachments.convertStream(
        Array((document + "\n").utf8), options: ConversionOptions(mode: .upgrade, keepGoing: true)
      ).diagnostics.map(\.message)
    }
    #expect(
      messages(
        #"{"photo":{"@type":"blob","digest":"\#(digest)"},"_attachments":{"$.photo":{"digest":"\#(digest)","data":"aGVsbG8="}}}"#
      ) == [
        #"_attachments entry "$.photo" mirrors a blob but holds bytes ("data") the blob does not; it stays"#
      ])
    #expect(
      messages(#"{"_attachments":{"s":{"digest":"sha1-x","data":"aGVsbG8="}}}"#) == [
        #"_attachments entry "s" has "data" but its digest is not a well-formed sha1- or md5- digest, so the bytes cannot be checked; it stays"#
      ])
    #expect(
      messages(
        #"{"_attachments":{"r":{"digest":"\#(digest)","data":"aGVsbG8="},"r":{"digest":"\#(digest)","data":"aGVsbG8="}}}"#
      ) == [
        #"_attachments has more than one entry "r": they cannot all become blobs in "attachments""#
      ])
  }

  @Test("--update-blobs: an entry naming a blob without a digest says the blob is not updated")
  func updateBlobsDigestless() {
    let document =
      #"{"p":{"@type":"blob","length":44},"_attachments":{"blob_/p":{"digest":"sha1-qvTGHdzF6KLavt4PO0gs2a6pQ00="}}}"#
    let result = CBLAttachments.convertStream(
      Array((document + "\n").utf8), options: ConversionOptions(mode: .pull, updateBlobs: true))
    #expect(Self.text(result.output) == document + "\n")
    #expect(result.diagnostics.map(\.kind) == [.blobNotUpdated])
    #expect(result.diagnostics.map(\.severity) == [.warning])
    // An entry that goes anyway (its digest is another blob's) says nothing, even with --strict.
    let removed =
      #"{"b":{"@type":"blob"},"c":{"@type":"blob","digest":"sha1-A"},"_attachments":{"$.b":{"digest":"sha1-A"}}}"#
    let strict = CBLAttachments.convertStream(
      Array((removed + "\n").utf8),
      options: ConversionOptions(mode: .pull, updateBlobs: true, strict: true))
    #expect(
      Self.text(strict.output) == #"{"b":{"@type":"blob"},"c":{"@type":"blob","digest":"sha1-A"}}"#
        + "\n")
    #expect(strict.diagnostics.isEmpty)
  }
}
