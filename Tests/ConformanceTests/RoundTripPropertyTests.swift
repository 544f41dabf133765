@_spi(Testing) import LegacyAttachments
import TestSupport
import Testing

/// SPEC properties of the engine on generated documents: pull undoes push for documents made by
/// Couchbase Lite 2 (no `_attachments`), and push is idempotent.
@Suite struct RoundTripPropertyTests {
  static let documentsPerBatch = 1_000
  static let batches = 4

  static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

  /// Generated objects without a top-level `_attachments` member, as Couchbase Lite 2 writes them
  /// (a blob's inline `data` is a base64 string).
  static func liteCoreDocuments(batch: Int) -> [[UInt8]] {
    var options = DocumentGenerator.Options()
    options.attachments = false
    options.nonStringData = false
    options.nonObjects = false
    options.duplicateAttachments = false
    var generator = DocumentGenerator(seed: 0x5EED_0000 &+ UInt64(batch), options: options)
    return (0..<documentsPerBatch).map { _ in generator.document() }
  }

  /// Every kind of generated document, `_attachments` of all sorts included.
  static func anyDocuments(batch: Int) -> [[UInt8]] {
    var generator = DocumentGenerator(seed: 0xA11_0000 &+ UInt64(batch))
    return (0..<documentsPerBatch).map { _ in generator.document() }
  }

  @Test("pull(push(d)) == d for documents without _attachments", arguments: 0..<batches)
  func pullUndoesPush(batch: Int) throws {
    var failures: [String] = []
    var changed = 0
    for document in Self.liteCoreDocuments(batch: batch) {
      // The generator must not have produced what this property excludes.
      let members = try #require(try RawJSON.parse(document).members)
      #expect(!members.contains { $0.key.equals("_attachments") })
      for (naming, revpos) in [(EntryNaming.jsonpath, nil), (.litecore, nil), (.litecore, 7)]
        as [(EntryNaming, Int?)]
      {
        do {
          let pushed = try CBLAttachments.push(document, naming: naming, revpos: revpos)
          if pushed != document { changed += 1 }
          let pulled = try CBLAttachments.pull(pushed)
          if pulled != document {
            failures.append(
              "\(naming): \(Self.text(document))\n  pushed: \(Self.text(pushed))\n  pulled: \(Self.text(pulled))"
            )
          }
        } catch {
          failures.append("\(naming): \(Self.text(document))\n  rejected: \(error)")
        }
      }
    }
    #expect(failures.isEmpty, "\(failures.count) failures; first: \(failures.first ?? "")")
    // The property is only worth something if push did add entries to many documents.
    #expect(changed > Self.documentsPerBatch / 2)
  }

  @Test("push(push(d)) == push(d)", arguments: 0..<batches)
  func pushIsIdempotent(batch: Int) {
    var failures: [String] = []
    var pushedCount = 0
    var rejectedCount = 0
    for document in Self.anyDocuments(batch: batch) {
      for naming in EntryNaming.allCases {
        let once: [UInt8]
        do {
          once = try CBLAttachments.push(document, naming: naming)
        } catch {
          rejectedCount += 1
          continue
        }
        pushedCount += 1
        do {
          let twice = try CBLAttachments.push(once, naming: naming)
          if twice != once {
            failures.append(
              "\(naming): \(Self.text(document))\n  once:  \(Self.text(once))\n  twice: \(Self.text(twice))"
            )
          }
        } catch {
          failures.append(
            "\(naming): \(Self.text(document))\n  once: \(Self.text(once))\n  twice rejected: \(error)"
          )
        }
      }
    }
    #expect(failures.isEmpty, "\(failures.count) failures; first: \(failures.first ?? "")")
    #expect(pushedCount > 0 && rejectedCount > 0, "both accepted and rejected documents were seen")
  }

  @Test("pull(pull(d)) == pull(d)", arguments: 0..<2)
  func pullIsIdempotent(batch: Int) {
    var failures: [String] = []
    for document in Self.anyDocuments(batch: 50 + batch) {
      guard let once = try? CBLAttachments.pull(document) else { continue }
      if let twice = try? CBLAttachments.pull(once), twice == once { continue }
      failures.append("\(Self.text(document))\n  once: \(Self.text(once))")
    }
    #expect(failures.isEmpty, "\(failures.count) failures; first: \(failures.first ?? "")")
  }
}
