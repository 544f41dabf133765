import Foundation
@_spi(Testing) import LegacyAttachments
import TestSupport
import Testing

// SPEC.md, "Attachment bodies": push and pull with a blob store (`--blobs`), through the public
// API. The store is made by the test from fixed bytes; every SHA-1, MD5 and base64 the
// expectations use comes from coreutils (`sha1sum`, `md5sum`) or Foundation, never from the
// library under test.

/// A temporary folder, removed when the last reference goes.
final class TemporaryFolder {
  let url: URL
  var path: String { url.path }

  init(_ name: String = "store") throws {
    url = FileManager.default.temporaryDirectory
      .appendingPathComponent("cbl-blobs-\(UUID().uuidString)").appendingPathComponent(name)
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
  }

  deinit { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }

  /// Every file in it (name → bytes).
  func files() throws -> [String: [UInt8]] {
    var files: [String: [UInt8]] = [:]
    for name in try FileManager.default.contentsOfDirectory(atPath: path) {
      files[name] = Array(try Data(contentsOf: url.appendingPathComponent(name)))
    }
    return files
  }
}

/// The hex hash coreutils' `sha1sum` or `md5sum` prints for `bytes`.
func coreutilsHash(_ tool: String, _ bytes: [UInt8]) throws -> [UInt8] {
  let process = Process()
  process.executableURL = URL(fileURLWithPath: "/usr/bin/" + tool)
  let input = Pipe()
  let output = Pipe()
  process.standardInput = input
  process.standardOutput = output
  try process.run()
  // The write may block on a large body until the tool reads: write from another thread.
  let writer = Thread {
    input.fileHandleForWriting.write(Data(bytes))
    try? input.fileHandleForWriting.close()
  }
  writer.start()
  let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
  process.waitUntilExit()
  let hex = Array(text.prefix { $0 != " " }.utf8)
  return stride(from: 0, to: hex.count, by: 2).map {
    UInt8(String(decoding: hex[$0..<$0 + 2], as: UTF8.self), radix: 16)!
  }
}

/// A body of the test store: its bytes, digests and file name, all worked out independently.
struct TestBody {
  var bytes: [UInt8]
  var sha1: String
  var md5: String
  var fileName: String

  init(_ bytes: [UInt8]) throws {
    self.bytes = bytes
    let sha1Base64 = Data(try coreutilsHash("sha1sum", bytes)).base64EncodedString()
    sha1 = "sha1-" + sha1Base64
    md5 = "md5-" + Data(try coreutilsHash("md5sum", bytes)).base64EncodedString()
    fileName = sha1Base64.replacingOccurrences(of: "/", with: "_") + ".blob"
  }

  var base64: String { Data(bytes).base64EncodedString() }
}

/// Fixed bodies: empty, 1 to 3 bytes (every padding), one across a 64 KiB decoding piece, one
/// across the 1 MiB read buffer, and one whose name has a `/` in its digest.
let testBodies: [TestBody] = {
  var random = SplitMix64(seed: 0xB10B)
  var bodies: [TestBody] = []
  for size in [0, 1, 2, 3, 100, 70_001, (1 << 20) + 5] {
    bodies.append(try! TestBody((0..<size).map { _ in UInt8(truncatingIfNeeded: random.next()) }))
  }
  // A digest with a '/' (so its file name has a '_'): search a little.
  var counter: UInt8 = 0
  while !bodies.contains(where: { $0.sha1.contains("/") }) {
    bodies.append(try! TestBody(Array("slash \(counter)".utf8)))
    counter &+= 1
  }
  return bodies
}()

/// A store holding every test body, as Couchbase Lite names and protects them.
func makeStore(_ bodies: [TestBody] = testBodies) throws -> TemporaryFolder {
  let store = try TemporaryFolder()
  for body in bodies {
    let url = store.url.appendingPathComponent(body.fileName)
    try Data(body.bytes).write(to: url)
    try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: url.path)
  }
  return store
}

/// Documents made by Couchbase Lite 2 pointing at the bodies: blobs at the top, nested, in
/// arrays, a length written `4.321e3`-style, and a document with a real legacy entry.
func blobDocuments(_ bodies: [TestBody] = testBodies) -> [String] {
  var documents: [String] = []
  for (index, body) in bodies.enumerated() {
    let length = index == 4 ? "1.00e2" : String(body.bytes.count)
    documents.append(
      #"{"_id":"d\#(index)","_rev":"3-a","n":12345678901234567890123,"file":{"@type":"blob","content_type":"application/octet-stream","digest":"\#(body.sha1)","length":\#(length)},"list":[1,{"deep":{"@type":"blob","digest":"\#(body.sha1)"}}]}"#
    )
  }
  documents.append(
    #"{"_id":"legacy","_attachments":{"old.txt":{"content_type":"text/plain","digest":"\#(bodies[3].sha1)","length":3}}}"#
  )
  return documents
}

private func ndjson(_ lines: [String]) -> [UInt8] {
  Array((lines.joined(separator: "\n") + "\n").utf8)
}

@Suite("Attachment bodies: --blobs, push and pull with a blob store")
struct BlobStoreTests {
  @Test("push carries every body as data, byte for byte, at every chunk size and buffer size")
  func pushCarriesBodies() throws {
    let store = try makeStore()
    defer { withExtendedLifetime(store) {} }
    let options = ConversionOptions(
      mode: .push, blobs: BlobStoreOptions(path: store.path), keepGoing: true)
    let input = ndjson(blobDocuments())
    let reference = CBLAttachments.convertStream(input, options: options)
    #expect(reference.diagnostics.isEmpty, "\(reference.diagnostics)")
    #expect(reference.failure == nil)
    for (chunk, capacities) in [(1, EngineCapacities.tiny), (7, .tiny), (4096, .standard)] {
      let result = CBLAttachments.convertStream(
        input, options: options, chunkSize: chunk, capacities: capacities)
      #expect(result.output == reference.output, "chunk \(chunk)")
    }
    let lines = String(decoding: reference.output, as: UTF8.self).split(separator: "\n")
    #expect(lines.count == testBodies.count + 1)
    for (index, line) in lines.enumerated() {
      let document = try JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any]
      let entries = document["_attachments"] as! [String: [String: Any]]
      if index == testBodies.count {
        // The real entry, which had neither data nor stub, got its bytes too.
        #expect(entries["old.txt"]?["data"] as? String == testBodies[3].base64)
        continue
      }
      let body = testBodies[index]
      for name in ["$.file", "$.list[1].deep"] {
        let entry = try #require(entries[name], "\(name) in \(line.prefix(200))")
        #expect(entry["data"] as? String == body.base64, "\(name) of d\(index)")
        #expect(entry["stub"] == nil && entry["revpos"] == nil)
        #expect(Data(base64Encoded: entry["data"] as! String) == Data(body.bytes))
      }
      // data is each entry's last member, and the rest of the document is as it was.
      #expect(line.contains(#"\#(body.sha1)","length":"#))
      #expect(line.contains("\"n\":12345678901234567890123"))
    }
  }

  @Test("pull stores exactly the files, read-only, and gives the documents back: B2 == B1")
  func roundTrip() throws {
    let store = try makeStore()
    defer { withExtendedLifetime(store) {} }
    let input = ndjson(blobDocuments())
    let pushed = CBLAttachments.convertStream(
      input, options: ConversionOptions(mode: .push, blobs: BlobStoreOptions(path: store.path)))
    #expect(pushed.diagnostics.isEmpty)
    for (chunk, capacities) in [(1 << 16, EngineCapacities.standard), (5, .tiny)] {
      let fresh = try TemporaryFolder()
      defer { withExtendedLifetime(fresh) {} }
      let pulled = CBLAttachments.convertStream(
        pushed.output,
        options: ConversionOptions(mode: .pull, blobs: BlobStoreOptions(path: fresh.path)),
        chunkSize: chunk, capacities: capacities)
      #expect(pulled.diagnostics.isEmpty, "\(pulled.diagnostics)")
      // The legacy document keeps its real entry (pull removes only blob mirrors); the others
      // come back exactly.
      let expected =
        blobDocuments().dropLast() + [
          String(decoding: pushed.output, as: UTF8.self).split(separator: "\n").last.map(
            String.init)!
        ]
      #expect(
        String(decoding: pulled.output, as: UTF8.self) == expected.joined(separator: "\n") + "\n")
      #expect(try fresh.files() == store.files(), "the same files, the same bytes")
      for name in try FileManager.default.contentsOfDirectory(atPath: fresh.path) {
        let attributes = try FileManager.default.attributesOfItem(
          atPath: fresh.url.appendingPathComponent(name).path)
        #expect((attributes[.posixPermissions] as? Int) == 0o444, "\(name) is read-only")
      }
    }
  }

  @Test("every chunk size from 1 to 64, at 16-byte buffers: the same output, the same files")
  func everyChunkSize() throws {
    let small = Array(testBodies.prefix(5))
    let store = try makeStore(small)
    defer { withExtendedLifetime(store) {} }
    let input = ndjson(blobDocuments(small))
    let push = ConversionOptions(mode: .push, blobs: BlobStoreOptions(path: store.path))
    let pushed = CBLAttachments.convertStream(input, options: push)
    for chunk in 1...64 {
      let result = CBLAttachments.convertStream(
        input, options: push, chunkSize: chunk, capacities: .tiny)
      #expect(result.output == pushed.output, "push, chunk \(chunk)")
      let fresh = try TemporaryFolder()
      defer { withExtendedLifetime(fresh) {} }
      let pulled = CBLAttachments.convertStream(
        pushed.output,
        options: ConversionOptions(mode: .pull, blobs: BlobStoreOptions(path: fresh.path)),
        chunkSize: chunk, capacities: .tiny)
      #expect(pulled.diagnostics.isEmpty, "pull, chunk \(chunk)")
      #expect(try fresh.files() == store.files(), "pull, chunk \(chunk)")
    }
  }

  @Test("-j 2, 16-byte buffers, tiny reads: the same output and the same files as one thread")
  func threadsAndBuffers() throws {
    let store = try makeStore()
    defer { withExtendedLifetime(store) {} }
    let input = ndjson(blobDocuments() + blobDocuments())
    let push = ConversionOptions(mode: .push, blobs: BlobStoreOptions(path: store.path))
    let one = try convertFile(input, options: push, jobs: 1, batchBytes: 1 << 20)
    for (jobs, batch, tiny, read) in [
      (2, 64, true, 7), (2, 1 << 12, false, 1 << 18), (1, 1 << 20, true, 3),
    ] {
      let other = try convertFile(
        input, options: push, jobs: jobs, batchBytes: batch, tinyBuffers: tiny, readSize: read)
      #expect(other.output == one.output, "push -j \(jobs), batches of \(batch)")
    }
    var stores: [[String: [UInt8]]] = []
    for (jobs, batch, tiny) in [(1, 1 << 20, false), (2, 100, true)] {
      let fresh = try TemporaryFolder()
      defer { withExtendedLifetime(fresh) {} }
      let pull = ConversionOptions(mode: .pull, blobs: BlobStoreOptions(path: fresh.path))
      let result = try convertFile(
        one.output, options: pull, jobs: jobs, batchBytes: batch, tinyBuffers: tiny, readSize: 11)
      #expect(result.diagnostics.isEmpty, "\(result.diagnostics)")
      stores.append(try fresh.files())
    }
    #expect(stores[0] == stores[1])
    #expect(stores[0] == (try store.files()))
  }

  @Test("pull checks md5 digests (CouchDB, PouchDB) and stores the bytes under their SHA-1")
  func md5Bodies() throws {
    let body = testBodies[4]
    let fresh = try TemporaryFolder()
    defer { withExtendedLifetime(fresh) {} }
    let document =
      #"{"_id":"p","img":{"@type":"blob","digest":"\#(body.md5)"},"_attachments":{"img.png":{"digest":"\#(body.md5)","data":"\#(body.base64)"}}}"#
    let result = CBLAttachments.convertStream(
      ndjson([document]),
      options: ConversionOptions(mode: .pull, blobs: BlobStoreOptions(path: fresh.path)))
    #expect(result.diagnostics.isEmpty, "\(result.diagnostics)")
    #expect(
      String(decoding: result.output, as: UTF8.self)
        == #"{"_id":"p","img":{"@type":"blob","digest":"\#(body.md5)"}}"# + "\n")
    #expect(try fresh.files() == [body.fileName: body.bytes])
  }

  @Test("each failure on its own: the document is rejected, nothing half-written is left")
  func failures() throws {
    let store = try makeStore([testBodies[4], testBodies[5]])
    let good = testBodies[4]
    // A file with other bytes under good's name, and a wrong length.
    let corrupt = try TemporaryFolder()
    try Data(testBodies[5].bytes).write(to: corrupt.url.appendingPathComponent(good.fileName))
    let pullStores = [try TemporaryFolder(), try TemporaryFolder()]
    defer { withExtendedLifetime((store, corrupt, pullStores)) {} }
    let cases: [(String, ConversionOptions, String, ConversionDiagnostic.Kind, String)] = [
      (
        "missing file", ConversionOptions(mode: .push, blobs: BlobStoreOptions(path: store.path)),
        #"{"_id":"m","b":{"@type":"blob","digest":"\#(testBodies[3].sha1)"}}"#, .blobMissing,
        "blob at $.b (\(testBodies[3].sha1)): no file \(store.path)/\(testBodies[3].fileName) in the blob store"
      ),
      (
        "corrupt file", ConversionOptions(mode: .push, blobs: BlobStoreOptions(path: corrupt.path)),
        #"{"_id":"c","b":{"@type":"blob","digest":"\#(good.sha1)"}}"#, .blobCorrupt,
        "blob at $.b (\(good.sha1)): \(corrupt.path)/\(good.fileName) holds other bytes (\(testBodies[5].sha1))"
      ),
      (
        "wrong length", ConversionOptions(mode: .push, blobs: BlobStoreOptions(path: store.path)),
        #"{"_id":"l","b":{"@type":"blob","digest":"\#(good.sha1)","length":101}}"#, .lengthMismatch,
        "blob at $.b (\(good.sha1)): \(store.path)/\(good.fileName) is 100 bytes; length is 101"
      ),
      (
        "inline data that is not the digest's",
        ConversionOptions(mode: .push, blobs: BlobStoreOptions(path: store.path)),
        #"{"_id":"i","b":{"@type":"blob","digest":"\#(good.sha1)","data":"\#(testBodies[5].base64)"}}"#,
        .blobCorrupt,
        "blob at $.b (\(good.sha1)): its \"data\" holds other bytes (\(testBodies[5].sha1))"
      ),
      (
        "pulled body that is not the digest's",
        ConversionOptions(mode: .pull, blobs: BlobStoreOptions(path: pullStores[0].path)),
        #"{"_id":"x","b":{"@type":"blob","digest":"\#(good.sha1)"},"_attachments":{"$.b":{"digest":"\#(good.sha1)","data":"\#(testBodies[5].base64)"}}}"#,
        .dataMismatch,
        "_attachments entry \"$.b\" (\(good.sha1)): its \"data\" holds other bytes (\(testBodies[5].sha1))"
      ),
      (
        "invalid base64",
        ConversionOptions(mode: .pull, blobs: BlobStoreOptions(path: pullStores[1].path)),
        #"{"_id":"y","b":{"@type":"blob","digest":"\#(good.sha1)"},"_attachments":{"$.b":{"digest":"\#(good.sha1)","data":"aGVs bG8="}}}"#,
        .invalidData,
        "_attachments entry \"$.b\": \"data\" is not base64 (RFC 4648: padded, no whitespace, unused bits zero)"
      ),
    ]
    for (what, options, document, kind, message) in cases {
      var keepGoing = options
      keepGoing.keepGoing = true
      let result = CBLAttachments.convertStream(
        ndjson([document, #"{"_id":"after"}"#]), options: keepGoing)
      #expect(
        result.diagnostics.map(\.kind) == [kind]
          && result.diagnostics.first?.message == message
          && result.diagnostics.first?.severity == .error,
        "\(what): \(result.diagnostics.map(\.description))")
      #expect(
        String(decoding: result.output, as: UTF8.self) == #"{"_id":"after"}"# + "\n", "\(what)")
      #expect(String(decoding: result.rejects, as: UTF8.self) == document + "\n", "\(what)")
      if let directory = options.blobs?.directory, options.mode == .pull {
        #expect(
          try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty,
          "\(what): nothing stored, no temporary file")
      }
    }
  }

  @Test(
    "a document rejected by a later body leaves nothing of its earlier ones in the store",
    arguments: [ConversionMode.pull, .upgrade])
  func rejectedLaterBodyStoresNothing(mode: ConversionMode) throws {
    let (first, second) = (testBodies[4], testBodies[5])
    let entries = [
      // The second body's bytes are not its digest's; then not base64.
      #""data":"\#(testBodies[6].base64)""#, #""data":"aGVs bG8=""#,
    ]
    for badData in entries {
      let document =
        #"{"_id":"two","p":[{"@type":"blob","digest":"\#(first.sha1)"},{"@type":"blob","digest":"\#(second.sha1)"}],"_attachments":{"$.p[0]":{"digest":"\#(first.sha1)","data":"\#(first.base64)"},"$.p[1]":{"digest":"\#(second.sha1)",\#(badData)}}}"#
      // An empty store, and one that holds the first body already (that file stays).
      for holdsFirst in [false, true] {
        let store = holdsFirst ? try makeStore([first]) : try TemporaryFolder()
        defer { withExtendedLifetime(store) {} }
        let before = try store.files()
        var options = ConversionOptions(mode: mode, blobs: BlobStoreOptions(path: store.path))
        options.keepGoing = true
        let result = CBLAttachments.convertStream(
          ndjson([document, #"{"_id":"after"}"#]), options: options)
        #expect(
          result.diagnostics.map(\.severity) == [.error], "\(badData): \(result.diagnostics)")
        #expect(String(decoding: result.rejects, as: UTF8.self) == document + "\n")
        #expect(String(decoding: result.output, as: UTF8.self) == #"{"_id":"after"}"# + "\n")
        #expect(try store.files() == before, "\(mode) \(badData) holdsFirst: \(holdsFirst)")
      }
    }
    // The same document with both bodies good stores both.
    let store = try TemporaryFolder()
    defer { withExtendedLifetime(store) {} }
    let good =
      #"{"_id":"two","p":[{"@type":"blob","digest":"\#(first.sha1)"},{"@type":"blob","digest":"\#(second.sha1)"}],"_attachments":{"$.p[0]":{"digest":"\#(first.sha1)","data":"\#(first.base64)"},"$.p[1]":{"digest":"\#(second.sha1)","data":"\#(second.base64)"}}}"#
    let result = CBLAttachments.convertStream(
      ndjson([good]),
      options: ConversionOptions(mode: mode, blobs: BlobStoreOptions(path: store.path)))
    #expect(result.diagnostics.filter { $0.severity == .error }.isEmpty, "\(result.diagnostics)")
    #expect(
      try store.files() == [first.fileName: first.bytes, second.fileName: second.bytes], "\(mode)")
  }

  @Test("--missing-blobs stub: the entry becomes a stub with the revpos of litecore, and a warning")
  func missingBecomesStub() throws {
    let store = try TemporaryFolder()
    defer { withExtendedLifetime(store) {} }
    let body = testBodies[2]
    let document =
      #"{"_id":"s","_rev":"7-x","b":{"@type":"blob","digest":"\#(body.sha1)","length":2}}"#
    let result = CBLAttachments.convertStream(
      ndjson([document]),
      options: ConversionOptions(
        mode: .push, blobs: BlobStoreOptions(path: store.path, missing: .stub)))
    #expect(
      String(decoding: result.output, as: UTF8.self)
        == #"{"_id":"s","_rev":"7-x","b":{"@type":"blob","digest":"\#(body.sha1)","length":2},"_attachments":{"$.b":{"digest":"\#(body.sha1)","length":2,"stub":true,"revpos":7}}}"#
        + "\n")
    #expect(result.diagnostics.map(\.severity) == [.warning])
    #expect(result.diagnostics.first?.kind == .blobMissing)
  }

  @Test(
    "an entry that carries its bytes has data last and no stub or revpos: the blob's own are left out",
    arguments: [EntryNaming.jsonpath, .litecore])
  func dataLastWithoutStub(_ naming: EntryNaming) throws {
    let body = testBodies[2]
    let store = try makeStore([body])
    defer { withExtendedLifetime(store) {} }
    let name = naming == .jsonpath ? "$.b" : "blob_/b"
    let options = ConversionOptions(
      mode: .push, naming: naming, blobs: BlobStoreOptions(path: store.path))
    // A blob that was itself a stub (as Couchbase Lite's replicator leaves one): its `stub` and
    // `revpos` stay in the blob, out of the entry that now carries the bytes.
    let stubbed =
      #"{"b":{"@type":"blob","digest":"\#(body.sha1)","stub":true,"revpos":2,"length":2}}"#
    var result = CBLAttachments.convertStream(ndjson([stubbed]), options: options)
    #expect(
      String(decoding: result.output, as: UTF8.self)
        == #"{"b":{"@type":"blob","digest":"\#(body.sha1)","stub":true,"revpos":2,"length":2},"_attachments":{"\#(name)":{"digest":"\#(body.sha1)","length":2,"data":"\#(body.base64)"}}}"#
        + "\n")
    #expect(result.diagnostics.isEmpty)
    // A blob with its bytes inline: they are checked, and written last.
    let inline =
      #"{"b":{"@type":"blob","data":"\#(body.base64)","digest":"\#(body.sha1)","content_type":"x"}}"#
    result = CBLAttachments.convertStream(ndjson([inline]), options: options)
    #expect(
      String(decoding: result.output, as: UTF8.self)
        == #"{"b":{"@type":"blob","data":"\#(body.base64)","digest":"\#(body.sha1)","content_type":"x"},"_attachments":{"\#(name)":{"digest":"\#(body.sha1)","content_type":"x","data":"\#(body.base64)"}}}"#
        + "\n")
    #expect(result.diagnostics.isEmpty)
    // A missing file with --missing-blobs stub: `stub` and `revpos` once each.
    let empty = try TemporaryFolder()
    defer { withExtendedLifetime(empty) {} }
    result = CBLAttachments.convertStream(
      ndjson([stubbed]),
      options: ConversionOptions(
        mode: .push, naming: naming, blobs: BlobStoreOptions(path: empty.path, missing: .stub)))
    #expect(
      String(decoding: result.output, as: UTF8.self)
        == #"{"b":{"@type":"blob","digest":"\#(body.sha1)","stub":true,"revpos":2,"length":2},"_attachments":{"\#(name)":{"digest":"\#(body.sha1)","length":2,"stub":true,"revpos":1}}}"#
        + "\n")
    #expect(result.diagnostics.map(\.kind) == [.blobMissing])
  }

  @Test("pull: a file already there with other bytes of the same size is kept, and so is the entry")
  func existingFileWithOtherBytes() throws {
    let body = testBodies[3]
    let store = try TemporaryFolder()
    defer { withExtendedLifetime(store) {} }
    // The right name and size, the wrong bytes (a corrupt store).
    let wrong = body.bytes.map { $0 ^ 0xFF }
    let file = store.url.appendingPathComponent(body.fileName)
    try Data(wrong).write(to: file)
    let wrongSHA1 = "sha1-" + Data(try coreutilsHash("sha1sum", wrong)).base64EncodedString()
    let document =
      #"{"b":{"@type":"blob","digest":"\#(body.sha1)"},"_attachments":{"w":{"digest":"\#(body.sha1)","data":"\#(body.base64)"}}}"#
    let result = CBLAttachments.convertStream(
      ndjson([document]),
      options: ConversionOptions(mode: .pull, blobs: BlobStoreOptions(path: store.path)))
    // Removing the entry would leave only the store's other bytes.
    #expect(String(decoding: result.output, as: UTF8.self) == document + "\n")
    #expect(result.diagnostics.map(\.severity) == [.warning])
    #expect(result.diagnostics.first?.kind == .blobCorrupt)
    #expect(
      result.diagnostics.first?.message.hasSuffix(
        "is already in the blob store with other bytes (\(wrongSHA1)); it is kept as it is") == true
    )
    #expect(try store.files() == [body.fileName: wrong])
  }

  @Test("--missing-blobs stub: a kept real entry whose file is missing becomes a stub too")
  func keptEntryBecomesStub() throws {
    let store = try TemporaryFolder()
    defer { withExtendedLifetime(store) {} }
    let body = testBodies[2]
    let options = ConversionOptions(
      mode: .push, blobs: BlobStoreOptions(path: store.path, missing: .stub))
    // Its revpos, if it has one, is kept; otherwise the revision's generation is added.
    let documents = [
      #"{"_id":"k","_rev":"4-x","_attachments":{"r.txt":{"digest":"\#(body.sha1)","length":2}}}"#,
      #"{"_id":"o","_rev":"4-x","_attachments":{"r.txt":{"digest":"\#(body.sha1)","revpos":2}}}"#,
    ]
    let result = CBLAttachments.convertStream(ndjson(documents), options: options)
    #expect(
      String(decoding: result.output, as: UTF8.self)
        == #"{"_id":"k","_rev":"4-x","_attachments":{"r.txt":{"digest":"\#(body.sha1)","length":2,"stub":true,"revpos":4}}}"#
        + "\n"
        + #"{"_id":"o","_rev":"4-x","_attachments":{"r.txt":{"digest":"\#(body.sha1)","revpos":2,"stub":true}}}"#
        + "\n")
    #expect(result.diagnostics.map(\.kind) == [.blobMissing, .blobMissing])
    #expect(result.diagnostics.map(\.severity) == [.warning, .warning])
    // Without --missing-blobs stub the document is rejected, as for a blob.
    let strict = CBLAttachments.convertStream(
      ndjson([documents[0]]),
      options: ConversionOptions(
        mode: .push, blobs: BlobStoreOptions(path: store.path), keepGoing: true))
    #expect(strict.output.isEmpty)
    #expect(strict.diagnostics.map(\.severity) == [.error])
  }

  @Test("--missing-blobs stub keeps a kept entry as it is when its own stub or revpos cannot stay")
  func keptEntryNotStubbable() throws {
    let store = try TemporaryFolder()
    defer { withExtendedLifetime(store) {} }
    let body = testBodies[2]
    let options = ConversionOptions(
      mode: .push, blobs: BlobStoreOptions(path: store.path, missing: .stub), keepGoing: true)
    for entry in [#""stub":false"#, #""revpos":"7""#, #""revpos":-1"#, #""revpos":2.0"#] {
      let document =
        #"{"_rev":"4-x","_attachments":{"r.txt":{"digest":"\#(body.sha1)",\#(entry)}}}"#
      let result = CBLAttachments.convertStream(ndjson([document]), options: options)
      #expect(result.output.isEmpty, "\(entry)")
      #expect(result.diagnostics.map(\.severity) == [.error], "\(entry)")
      #expect(
        result.diagnostics.first?.message.hasSuffix(
          #"its own "stub" or "revpos" is not one a stub can keep, so it is not made a stub"#)
          == true, "\(entry)")
    }
  }

  @Test("a FIFO where a body should be is refused, never read (it would block)")
  func fifoInStore() throws {
    let store = try TemporaryFolder()
    defer { withExtendedLifetime(store) {} }
    let body = try TestBody([])
    #expect(mkfifo(store.url.appendingPathComponent(body.fileName).path, 0o644) == 0)
    let push = CBLAttachments.convertStream(
      ndjson([#"{"p":{"@type":"blob","digest":"\#(body.sha1)"}}"#]),
      options: ConversionOptions(mode: .push, blobs: BlobStoreOptions(path: store.path)))
    #expect(push.output.isEmpty)
    #expect(push.failure != nil)
    // Pull does not read it either: it is no regular file, so the entry keeps its bytes.
    let document =
      #"{"p":{"@type":"blob","digest":"\#(body.sha1)"},"_attachments":{"$.p":{"digest":"\#(body.sha1)","data":""}}}"#
    let pull = CBLAttachments.convertStream(
      ndjson([document]),
      options: ConversionOptions(mode: .pull, blobs: BlobStoreOptions(path: store.path)))
    #expect(pull.failure == nil)
    #expect(String(decoding: pull.output, as: UTF8.self) == document + "\n")
    #expect(pull.diagnostics.map(\.severity) == [.warning])
    #expect(
      pull.diagnostics.first?.message.hasSuffix(
        "is already in the blob store and is not a regular file; it is kept as it is") == true,
      "\(pull.diagnostics)")
  }
}

@Suite("Digests Couchbase Lite reads leniently")
struct NonCanonicalDigestTests {
  @Test("a sha1- digest with unused bits set names the file of its canonical text; --check says so")
  func nonCanonical() throws {
    let body = testBodies[4]
    // The canonical text ends in a character whose two low bits are unused ("…=" after 27
    // characters): setting one of them gives the same hash, written otherwise.
    let canonical = body.sha1
    let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
    let last = canonical[canonical.index(canonical.endIndex, offsetBy: -2)]
    let value = alphabet.firstIndex(of: last)!
    #expect(value % 4 == 0, "the last character's unused bits are clear in \(canonical)")
    let written = String(canonical.dropLast(2)) + String(alphabet[value | 1]) + "="
    let store = try makeStore([body])
    let document =
      #"{"_id":"n","p":{"@type":"blob","digest":"\#(written)","length":\#(body.bytes.count)}}"#
    let listed = CBLAttachments.convertStream(
      Array((document + "\n").utf8),
      options: ConversionOptions(mode: .list, blobs: BlobStoreOptions(path: store.path)))
    #expect(String(decoding: listed.output, as: UTF8.self).contains(#""stored":true"#))
    let checked = CBLAttachments.convertStream(
      Array((document + "\n").utf8), options: ConversionOptions(mode: .check))
    let finding = String(decoding: checked.output, as: UTF8.self)
    #expect(finding.contains(#""problem":"non-canonical-digest""#), "\(finding)")
    #expect(finding.contains("Couchbase Lite reads it as \(canonical)"))
    // Push with the store finds the bytes under the canonical name.
    let pushed = CBLAttachments.convertStream(
      Array((document + "\n").utf8),
      options: ConversionOptions(mode: .push, blobs: BlobStoreOptions(path: store.path)))
    #expect(pushed.diagnostics.isEmpty, "\(pushed.diagnostics.map(\.description))")
    #expect(String(decoding: pushed.output, as: UTF8.self).contains(#""data":"\#(body.base64)""#))
  }
}
