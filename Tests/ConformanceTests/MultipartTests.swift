import Foundation
@_spi(Testing) import LegacyAttachments
import TestSupport
import Testing

// --format multipart against bodies a real CouchDB 3.5 sent (examples/data/api/, captured by
// scripts/capture-couchdb-bodies.sh): the _bulk_get body in multipart/mixed is checked against
// the same request answered as JSON with attachments=true, and the large one against the SHA-1
// digests sha1sum gave of the files CouchDB was sent. Sync Gateway's bodies are made here in the
// shapes its code writes (rest/multipart.go: WriteRevisionAsPart, WriteMultipartDocument,
// writeJSONPart), cited where each is made.

private let apiFolder = URL(fileURLWithPath: #filePath)
  .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
  .appendingPathComponent("examples/data/api")

private func captured(_ name: String) throws -> [UInt8] {
  Array(try Data(contentsOf: apiFolder.appendingPathComponent(name)))
}

/// What a multipart conversion produced.
struct MultipartRun: Equatable {
  var output: [UInt8] = []
  var rejects: [UInt8] = []
  var diagnostics: [String] = []
  var messages: [String] = []
  var outcome: InputOutcome = .completed
  var statistics = ConversionStatistics()
}

func convertMultipart(
  _ body: [UInt8], options: ConversionOptions, multipart: MultipartOptions = MultipartOptions(),
  readSize: Int = 1 << 18, tiny: Bool = false, keepsRejects: Bool = false
) throws -> MultipartRun {
  var run = MultipartRun()
  var output: [UInt8] = []
  var rejects: [UInt8] = []
  let converter = MultipartConverter(
    options: options, multipart: multipart,
    output: ClosureSink { output.append(contentsOf: $0) },
    rejects: keepsRejects ? ClosureSink { rejects.append(contentsOf: $0) } : nil,
    capacities: tiny ? .tiny : .standard)
  converter.readSize = readSize
  var diagnostics: [String] = []
  var messages: [String] = []
  converter.diagnosticHandler = { diagnostic, input in
    diagnostics.append(diagnostic.formatted(inputName: input))
    messages.append(diagnostic.message)
  }
  run.outcome = try body.withUnsafeBytes { try converter.convert(bytes: $0, name: "body") }
  try converter.finish()
  run.output = output
  run.rejects = rejects
  run.diagnostics = diagnostics
  run.messages = messages
  run.statistics = converter.statistics
  return run
}

/// The documents of a JSON `_bulk_get` answer (`results[].docs[].ok`), one compact line each,
/// as Python writes them (key order kept).
private func bulkGetDocuments(_ json: [UInt8]) throws -> [[UInt8]] {
  let script = """
    import sys, json
    body = json.load(sys.stdin)
    for result in body["results"]:
        for doc in result["docs"]:
            if "ok" in doc:
                print(json.dumps(doc["ok"], ensure_ascii=False, separators=(",", ":")))
    """
  let process = Process()
  process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
  process.arguments = ["python3", "-c", script]
  let input = Pipe()
  let output = Pipe()
  process.standardInput = input
  process.standardOutput = output
  try process.run()
  let writer = Thread {
    input.fileHandleForWriting.write(Data(json))
    try? input.fileHandleForWriting.close()
  }
  writer.start()
  let text = output.fileHandleForReading.readDataToEndOfFile()
  process.waitUntilExit()
  return text.split(separator: UInt8(ascii: "\n")).map(Array.init)
}

/// A document parsed, with `length` taken out of the `_attachments` entries that carry `data`
/// (CouchDB writes it in a multipart body's JSON part, not in JSON with `attachments=true`).
private func comparable(_ line: some Collection<UInt8>) throws -> NSDictionary {
  var object = try JSONSerialization.jsonObject(with: Data(line)) as! [String: Any]
  if var attachments = object["_attachments"] as? [String: Any] {
    for (name, value) in attachments {
      guard var entry = value as? [String: Any], entry["data"] != nil else { continue }
      entry.removeValue(forKey: "length")
      attachments[name] = entry
    }
    object["_attachments"] = attachments
  }
  return object as NSDictionary
}

/// The SHA-1 of every file in `folder`, as sha1sum computes it.
private func sha1sums(of folder: String) throws -> Set<String> {
  let names = try FileManager.default.contentsOfDirectory(atPath: folder)
  let process = Process()
  process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
  process.arguments = ["sha1sum"] + names.map { folder + "/" + $0 }
  let output = Pipe()
  process.standardOutput = output
  try process.run()
  let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
  process.waitUntilExit()
  return Set(text.split(separator: "\n").map { String($0.prefix(40)) })
}

private func lines(_ bytes: [UInt8]) -> [ArraySlice<UInt8>] {
  bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true)
}

@Suite("--format multipart: CouchDB's bodies, Sync Gateway's shapes, bad bodies")
struct MultipartTests {
  @Test("_bulk_get as multipart/mixed, --inline, stands for the same request answered as JSON")
  func sameAsJSON() throws {
    let body = try captured("couchdb-bulk-get-multipart.txt")
    let json = try bulkGetDocuments(try captured("couchdb-bulk-get-attachments.json"))
    #expect(json.count == 4, "priya, the note, pancakes and the deleted toast")
    for mode in [ConversionMode.pull, .upgrade, .push] {
      let fromMultipart = try convertMultipart(
        body, options: ConversionOptions(mode: mode),
        multipart: MultipartOptions(inline: true))
      let fromJSON = CBLAttachments.convertStream(
        Array(json.joined(separator: [UInt8(ascii: "\n")])) + [0x0A],
        options: ConversionOptions(mode: mode))
      #expect(fromMultipart.outcome == .completed)
      #expect(
        try lines(fromMultipart.output).map(comparable)
          == lines(fromJSON.output).map(comparable), "\(mode)")
      // The same messages, but for the missing document's error part (JSON leaves it out).
      #expect(
        fromMultipart.messages.filter { !$0.contains("could not give the document") }
          == fromJSON.diagnostics.map(\.message), "\(mode)")
    }
  }

  @Test("pull --blobs: the blobs come back as the store holds them, the entries push made go")
  func pullRestoresTheStore() throws {
    let body = try captured("couchdb-bulk-get-multipart.txt")
    let store = try TemporaryFolder()
    let run = try convertMultipart(
      body,
      options: ConversionOptions(mode: .pull, blobs: BlobStoreOptions(path: store.path)))
    #expect(run.outcome == .completed)
    #expect(
      run.diagnostics == [
        "cbl-attachments: body: byte 78870: warning: document \"recipe::missing\": the server"
          + " could not give the document: not_found (missing)"
      ])
    let documents = lines(run.output).map { String(decoding: $0, as: UTF8.self) }
    #expect(documents.count == 4)
    // The documents push made from the app's database come back as they were.
    #expect(
      documents.first
        == #"{"_id":"user::priya","_rev":"1-2887bb94dd7f09728c8eb4cb08f4312f","type":"user","name":"Priya","email":"priya@example.com","image":{"@type":"blob","content_type":"image/png","digest":"sha1-qYHybdMfZYz/UnMwZhjrAccGSXg=","length":3008}}"#
    )
    let files = try store.files()
    let original = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
      .deletingLastPathComponent().deletingLastPathComponent()
      .appendingPathComponent("examples/data/app.cblite2/Attachments")
    for name in ["qYHybdMfZYz_UnMwZhjrAccGSXg=.blob", "tXA0C7MAnpPwaEL+gODDrXcg_K4=.blob"] {
      #expect(
        files[name] == Array(try Data(contentsOf: original.appendingPathComponent(name))), "\(name)"
      )
    }
    // A real attachment stays, a stub whose SHA-1 digest names the file it is in.
    #expect(
      documents[1].contains(
        #""readme.txt":{"content_type":"text/plain","revpos":2,"digest":"sha1-9XLTlvrpIGYocU+yzgD3LpTyJY8=","length":6,"stub":true}"#
      ))
    #expect(files["9XLTlvrpIGYocU+yzgD3LpTyJY8=.blob"] == Array("hello\n".utf8))
  }

  @Test("any read size from 1 to 64 and tiny buffers give the same output, messages and store")
  func everyReadSize() throws {
    let body = try captured("couchdb-bulk-get-multipart.txt")
    let referenceStore = try TemporaryFolder()
    let reference = try convertMultipart(
      body,
      options: ConversionOptions(mode: .pull, blobs: BlobStoreOptions(path: referenceStore.path)))
    let expectedFiles = try referenceStore.files()
    for size in 1...64 {
      let store = try TemporaryFolder()
      let run = try convertMultipart(
        body,
        options: ConversionOptions(mode: .pull, blobs: BlobStoreOptions(path: store.path)),
        readSize: size, tiny: size % 2 == 1)
      #expect(run.output == reference.output, "read size \(size)")
      #expect(run.diagnostics == reference.diagnostics, "read size \(size)")
      #expect(try store.files() == expectedFiles, "read size \(size)")
    }
  }

  @Test("5 MB of text in a gzip part and 64 KiB in an identity part are stored as sha1sum says")
  func largeParts() throws {
    let body = try captured("couchdb-bulk-get-large-multipart.txt")
    let manifest = String(decoding: try captured("couchdb-bulk-get-large.sha1"), as: UTF8.self)
    let digests = Set(manifest.split(separator: "\n").map { String($0.prefix(40)) })
    for readSize in [1 << 18, 4093, 61] {
      let store = try TemporaryFolder()
      let run = try convertMultipart(
        body,
        options: ConversionOptions(mode: .upgrade, blobs: BlobStoreOptions(path: store.path)),
        readSize: readSize)
      #expect(run.diagnostics.isEmpty, "\(run.diagnostics)")
      #expect(try sha1sums(of: store.path) == digests, "read size \(readSize)")
      #expect(try store.files().values.map(\.count).sorted() == [0, 65536, 5_000_000])
    }
  }
}
