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

/// The offset of the first `needle` in `body` at or after `after`.
private func position(of needle: String, in body: [UInt8], after: Int = 0) -> Int {
  let bytes = Array(needle.utf8)
  return (after...(body.count - bytes.count)).first { body[$0...].starts(with: bytes) }!
}

/// `part` wrapped as the one part of a body with the captured body's boundary, as the rejects
/// file holds it.
private func rejectsBody(_ parts: [ArraySlice<UInt8>], boundary: String) -> [UInt8] {
  var body: [UInt8] = []
  for part in parts { body += Array("--\(boundary)\r\n".utf8) + part + [0x0D, 0x0A] }
  return body + Array("--\(boundary)--\r\n".utf8)
}

@Suite("--format multipart: bodies that are wrong")
struct BadMultipartTests {
  static let body = try! captured("couchdb-bulk-get-multipart.txt")
  /// The outer boundary (after the leading "--" of its lines).
  static let boundary: String = {
    let line = body[position(of: "--", in: body)...].prefix { $0 != 0x0D }
    return String(decoding: line.dropFirst(2), as: UTF8.self)
  }()

  /// Where a top-level part's headers start: its `X-Doc-Id` line.
  static func partStart(_ id: String) -> Int { position(of: "X-Doc-Id: \(id)\r\n", in: body) }

  /// Where the top-level part that starts at `start` ends (the CRLF before the next boundary).
  static func partEnd(after start: Int) -> Int {
    position(of: "\r\n--\(boundary)", in: body, after: start)
  }

  @Test("a body cut short: the document being read is rejected where it ends, the rest is lost")
  func cutShort() throws {
    let scan = position(of: "filename=\"$.scan\"", in: Self.body)
    let cut = Array(Self.body[..<(scan + 1000)])
    let store = try TemporaryFolder()
    let run = try convertMultipart(
      cut, options: ConversionOptions(mode: .pull, blobs: BlobStoreOptions(path: store.path)),
      keepsRejects: true)
    #expect(run.outcome == .abandoned)
    #expect(
      run.diagnostics == [
        "cbl-attachments: body: byte \(cut.count): error: document \"note::2017-004\": malformed"
          + " multipart body: the body ends before its closing boundary line"
      ])
    #expect(lines(run.output).count == 1, "the document before it")
    let note = Self.partStart("note::2017-004")
    #expect(run.rejects == rejectsBody([cut[note...]], boundary: Self.boundary))
    // The note's readme had been stored: it is taken out again.
    #expect(try store.files().keys.sorted() == ["qYHybdMfZYz_UnMwZhjrAccGSXg=.blob"])
  }

  @Test("without its closing boundary line the body is cut short too")
  func noClosingBoundary() throws {
    let close = position(of: "\r\n--\(Self.boundary)--", in: Self.body)
    let run = try convertMultipart(
      Array(Self.body[..<close]), options: ConversionOptions(mode: .pull), keepsRejects: true)
    #expect(run.outcome == .abandoned)
    #expect(
      run.diagnostics.last?.hasSuffix("the body ends before its closing boundary line") == true)
    #expect(run.diagnostics.last?.contains("byte \(close):") == true)
  }

  @Test("a part whose bytes are not its digest's: -k sets its document's part aside, whole")
  func otherBytes() throws {
    var body = Self.body
    let image = position(of: "filename=\"$.image\"", in: body)
    let bytesStart = position(of: "\r\n\r\n", in: body, after: image) + 4
    body[bytesStart + 100] ^= 0xFF
    let store = try TemporaryFolder()
    let run = try convertMultipart(
      body,
      options: ConversionOptions(
        mode: .pull, blobs: BlobStoreOptions(path: store.path), keepGoing: true),
      keepsRejects: true)
    #expect(run.outcome == .completed)
    let error = try #require(run.diagnostics.first)
    #expect(
      error.hasPrefix(
        "cbl-attachments: body: byte \(bytesStart): error: document \"user::priya\":"
          + " _attachments entry \"$.image\" (md5-"), "\(error)")
    #expect(error.contains("): its part holds other bytes (md5-"))
    let priya = Self.partStart("user::priya")
    #expect(
      run.rejects
        == rejectsBody([body[priya..<Self.partEnd(after: priya)]], boundary: Self.boundary))
    #expect(lines(run.output).count == 3, "the three documents after it")
    #expect(try store.files()["qYHybdMfZYz_UnMwZhjrAccGSXg=.blob"] != nil, "pancakes.png")
    // Without -k the run stops there.
    let stopped = try convertMultipart(body, options: ConversionOptions(mode: .pull))
    #expect(stopped.outcome == .stopped && stopped.output.isEmpty)
  }

  @Test("lengths, encodings and parts that disagree with their entries")
  func disagreements() throws {
    func run(_ body: [UInt8]) throws -> MultipartRun {
      try convertMultipart(body, options: ConversionOptions(mode: .pull, keepGoing: true))
    }
    func replacing(_ old: String, _ new: String) -> [UInt8] {
      let at = position(of: old, in: Self.body)
      return Array(Self.body[..<at]) + Array(new.utf8) + Array(Self.body[(at + old.utf8.count)...])
    }
    let shorter = try run(
      replacing(
        "Content-Type: image/png\r\nContent-Length: 3008",
        "Content-Type: image/png\r\nContent-Length: 3007"))
    #expect(
      shorter.diagnostics.first?.contains(
        "document \"user::priya\": _attachments entry \"$.image\": its part holds 3008 bytes;"
          + " Content-Length says 3007") == true, "\(shorter.diagnostics)")
    let brotli = try run(replacing("Content-Encoding: gzip", "Content-Encoding: br"))
    #expect(
      brotli.diagnostics.contains {
        $0.contains(
          "document \"note::2017-004\": _attachments entry \"readme.txt\": its part's"
            + " Content-Encoding \"br\" is not gzip; its bytes cannot be read")
      },
      "\(brotli.diagnostics)")
    // The note's scan part taken out: its entry says follows, and no part comes.
    let scanHeaders = position(
      of: "Content-Disposition: attachment; filename=\"$.scan\"", in: Self.body)
    let scanDelimiter = position(of: "\r\n--", in: Self.body, after: scanHeaders - 60) + 2
    let scanEnd = position(of: "\r\n--", in: Self.body, after: scanHeaders)
    let missing = try run(Array(Self.body[..<(scanDelimiter - 2)]) + Array(Self.body[scanEnd...]))
    #expect(
      missing.diagnostics.contains {
        $0.contains(
          "document \"note::2017-004\": \"follows\" without its part: _attachments entry \"$.scan\""
            + " (the body has no part for its bytes)")
      }, "\(missing.diagnostics)")
    #expect(lines(missing.output).count == 3)
  }
}

/// A `_bulk_get` body as Sync Gateway writes one (rest/multipart.go): Go's multipart.Writer
/// (no preamble, CRLF lines, header names canonical, `X-Doc-Id`), each revision a part of its
/// own (WriteRevisionAsPart): a nested `multipart/related` with a quoted boundary when the
/// revision has inline attachments, trimmed of its last CRLF; attachments of more than 200 bytes
/// as parts with `Content-Disposition: attachment; filename=%q` and their type, no length, in
/// any order (WriteMultipartDocument ranges over a map); a JSON part of 300 bytes or more gzipped
/// when asked (writeJSONPart); an error as `application/json; error="true"`.
private struct SyncGatewayBody {
  let boundary = "7d3c2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b0c9d8e7f6a5b"
  var text: [UInt8] = []

  mutating func part(_ headers: [(String, String)], _ body: [UInt8]) {
    text += Array("--\(boundary)\r\n".utf8)
    for (name, value) in headers { text += Array("\(name): \(value)\r\n".utf8) }
    text += Array("\r\n".utf8) + body + Array("\r\n".utf8)
  }

  /// A revision with attachments: its JSON (gzipped or not) and then `attachments` in the order
  /// given, as one nested part.
  mutating func revision(
    id: String, rev: String, json: [UInt8], gzipJSON: Bool = false,
    attachments: [(name: String, type: String, bytes: [UInt8])]
  ) throws {
    let inner = "a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1d2e3f4a5b6c7d8e9f0"
    var nested: [UInt8] = []
    nested += Array("--\(inner)\r\n".utf8)
    if gzipJSON {
      nested += Array("Content-Encoding: gzip\r\nContent-Type: application/json\r\n\r\n".utf8)
      nested += try PythonGzip(json).plainStream
    } else {
      nested += Array("Content-Type: application/json\r\n\r\n".utf8) + json
    }
    for attachment in attachments {
      let quoted = attachment.name.replacingOccurrences(of: "\"", with: "\\\"")
      nested += Array("\r\n--\(inner)\r\n".utf8)
      nested += Array(
        "Content-Disposition: attachment; filename=\"\(quoted)\"\r\nContent-Type: \(attachment.type)\r\n\r\n"
          .utf8)
      nested += attachment.bytes
    }
    nested += Array("\r\n--\(inner)--".utf8)
    part(
      [
        ("Content-Type", "multipart/related; boundary=\"\(inner)\""), ("X-Doc-Id", id),
        ("X-Rev-Id", rev),
      ], nested)
  }

  func closed() -> [UInt8] { text + Array("--\(boundary)--\r\n".utf8) }
}

@Suite("--format multipart: Sync Gateway's _bulk_get, in the shapes its code writes")
struct SyncGatewayMultipartTests {
  @Test("attachments by filename in any order, inline ones left, a gzipped JSON part, errors")
  func bulkGet() throws {
    var random = SplitMix64(seed: 0x5A7E)
    let photo = try TestBody((0..<4000).map { _ in UInt8(truncatingIfNeeded: random.next()) })
    let notes = try TestBody(Array(String(repeating: "sync gateway notes ", count: 40).utf8))
    let small = try TestBody(Array("tiny".utf8))
    // A client's gzip stream, kept as sent ("encoding":"gzip"): its digest is the stream's.
    let stream = try TestBody(try PythonGzip(notes.bytes).plainStream)
    var body = SyncGatewayBody()
    let first =
      #"{"_attachments":{"notes.txt":{"content_type":"text/plain","digest":"\#(notes.sha1)","follows":true,"length":\#(notes.bytes.count),"revpos":1},"say \"hi\".jpg":{"content_type":"image/jpeg","digest":"\#(photo.sha1)","follows":true,"length":\#(photo.bytes.count),"revpos":2},"tiny.txt":{"content_type":"text/plain","data":"\#(small.base64)","digest":"\#(small.sha1)","length":4,"revpos":1}},"_id":"d1","_rev":"2-b","kind":"sg"}"#
    try body.revision(
      id: "d1", rev: "2-b", json: Array(first.utf8), gzipJSON: true,
      attachments: [
        ("say \"hi\".jpg", "image/jpeg", photo.bytes), ("notes.txt", "text/plain", notes.bytes),
      ])
    body.part(
      [("Content-Type", "application/json"), ("X-Doc-Id", "d2"), ("X-Rev-Id", "1-a")],
      Array(#"{"_id":"d2","_rev":"1-a","plain":true}"#.utf8))
    let encoded =
      #"{"_attachments":{"log.txt":{"content_type":"text/plain","digest":"\#(stream.sha1)","encoded_length":\#(stream.bytes.count),"encoding":"gzip","follows":true,"length":\#(notes.bytes.count),"revpos":1}},"_id":"d3","_rev":"1-c"}"#
    try body.revision(
      id: "d3", rev: "1-c", json: Array(encoded.utf8),
      attachments: [("log.txt", "text/plain", stream.bytes)])
    body.part(
      [("Content-Type", "application/json; error=\"true\"")],
      Array(#"{"error":"not_found","id":"d4","reason":"missing","status":404}"#.utf8))
    let text = body.closed()

    let store = try TemporaryFolder()
    let run = try convertMultipart(
      text, options: ConversionOptions(mode: .pull, blobs: BlobStoreOptions(path: store.path)),
      readSize: 7)
    #expect(run.outcome == .completed)
    #expect(run.messages == ["the server could not give the document: not_found (missing)"])
    #expect(
      try store.files()
        == [
          photo.fileName: photo.bytes, notes.fileName: notes.bytes, stream.fileName: stream.bytes,
        ])
    let documents = lines(run.output).map { String(decoding: $0, as: UTF8.self) }
    #expect(
      documents == [
        #"{"_attachments":{"notes.txt":{"content_type":"text/plain","digest":"\#(notes.sha1)","stub":true,"length":\#(notes.bytes.count),"revpos":1},"say \"hi\".jpg":{"content_type":"image/jpeg","digest":"\#(photo.sha1)","stub":true,"length":\#(photo.bytes.count),"revpos":2},"tiny.txt":{"content_type":"text/plain","data":"\#(small.base64)","digest":"\#(small.sha1)","length":4,"revpos":1}},"_id":"d1","_rev":"2-b","kind":"sg"}"#,
        #"{"_id":"d2","_rev":"1-a","plain":true}"#,
        #"{"_attachments":{"log.txt":{"content_type":"text/plain","digest":"\#(stream.sha1)","encoded_length":\#(stream.bytes.count),"encoding":"gzip","stub":true,"length":\#(notes.bytes.count),"revpos":1}},"_id":"d3","_rev":"1-c"}"#,
      ])

    // --inline: the documents Sync Gateway's JSON form gives (data where follows was).
    let inline = try convertMultipart(
      text, options: ConversionOptions(mode: .pull), multipart: MultipartOptions(inline: true))
    #expect(
      lines(inline.output).first.map { String(decoding: $0, as: UTF8.self) }
        == #"{"_attachments":{"notes.txt":{"content_type":"text/plain","digest":"\#(notes.sha1)","data":"\#(notes.base64)","length":\#(notes.bytes.count),"revpos":1},"say \"hi\".jpg":{"content_type":"image/jpeg","digest":"\#(photo.sha1)","data":"\#(photo.base64)","length":\#(photo.bytes.count),"revpos":2},"tiny.txt":{"content_type":"text/plain","data":"\#(small.base64)","digest":"\#(small.sha1)","length":4,"revpos":1}},"_id":"d1","_rev":"2-b","kind":"sg"}"#
    )
  }
}

@Suite("--format multipart: names and boundaries")
struct MultipartNamingTests {
  @Test("a filename with a backslash matches as CouchDB writes it (unescaped) and as Go does")
  func backslashNames() throws {
    let bytes = try TestBody(Array("dotted key bytes".utf8))
    for disposition in [#"filename="dot\key.txt""#, #"filename="dot\\key.txt""#] {
      let body = Array(
        ("--b\r\nContent-Type: application/json\r\n\r\n"
          + #"{"_id":"k","_attachments":{"dot\\key.txt":{"digest":"\#(bytes.sha1)","length":16,"follows":true}}}"#
          + "\r\n--b\r\nContent-Disposition: attachment; \(disposition)\r\n\r\n"
          + "dotted key bytes\r\n--b--\r\n").utf8)
      let run = try convertMultipart(
        body, options: ConversionOptions(mode: .pull),
        multipart: MultipartOptions(boundary: "b", inline: true))
      #expect(run.diagnostics.isEmpty, "\(disposition): \(run.diagnostics)")
      #expect(
        String(decoding: run.output, as: UTF8.self)
          == #"{"_id":"k","_attachments":{"dot\\key.txt":{"digest":"\#(bytes.sha1)","length":16,"data":"\#(bytes.base64)"}}}"#
          + "\n")
    }
  }

  @Test("bare LF lines, a preamble, padding after a boundary, an empty body")
  func looseBodies() throws {
    let bytes = try TestBody(Array("lf".utf8))
    let body = Array(
      ("preamble text\n--b  \nContent-Type: application/json\n\n"
        + #"{"_id":"lf","_attachments":{"a":{"digest":"\#(bytes.sha1)","follows":true}}}"#
        + "\n--b\t\ncontent-disposition: attachment; filename=a\n\nlf\n--b--\nepilogue").utf8)
    let run = try convertMultipart(
      body, options: ConversionOptions(mode: .pull), multipart: MultipartOptions(inline: true))
    #expect(run.diagnostics.isEmpty, "\(run.diagnostics)")
    #expect(
      String(decoding: run.output, as: UTF8.self)
        == #"{"_id":"lf","_attachments":{"a":{"digest":"\#(bytes.sha1)","data":"\#(bytes.base64)"}}}"#
        + "\n")
    let empty = try convertMultipart(
      Array("--bound--\r\n".utf8), options: ConversionOptions(mode: .pull))
    #expect(empty.output.isEmpty && empty.diagnostics.isEmpty && empty.outcome == .completed)
    let none = try convertMultipart(Array("{}".utf8), options: ConversionOptions(mode: .pull))
    #expect(
      none.diagnostics == [
        "cbl-attachments: body: byte 0: error: malformed multipart body: no boundary line: a MIME"
          + " multipart body starts with \"--\" and its boundary"
      ])
    #expect(none.outcome == .abandoned)
  }
}

@Suite("--format multipart: large CouchDB parts, their MD5 hashed on a thread of its own")
struct SideHashingTests {
  /// A `_bulk_get` body in CouchDB's shape with one document per part of `bodies`, each entry
  /// labelled `digests[i]`.
  static func body(_ bodies: [TestBody], digests: [String]) -> [UInt8] {
    var text = Array("\r\n".utf8)
    for (index, body) in bodies.enumerated() {
      let inner = "inner\(index)"
      text += Array(
        ("----outer\r\nX-Doc-Id: d\(index)\r\nContent-Type: multipart/related; boundary=\(inner)"
          + "\r\n\r\n--\(inner)\r\nContent-Type: application/json\r\n\r\n"
          + #"{"_id":"d\#(index)","_attachments":{"big.bin":{"content_type":"application/octet-stream","revpos":1,"digest":"\#(digests[index])","length":\#(body.bytes.count),"follows":true}}}"#
          + "\r\n--\(inner)\r\nContent-Disposition: attachment; filename=\"big.bin\"\r\n"
          + "Content-Type: application/octet-stream\r\nContent-Length: \(body.bytes.count)\r\n\r\n")
          .utf8)
      text += body.bytes + Array("\r\n--\(inner)--\r\n".utf8)
    }
    return text + Array("----outer--\r\n".utf8)
  }

  @Test("parts from 1 MiB on are checked alike, one refused half-way does not spoil the next")
  func largeParts() throws {
    var random = SplitMix64(seed: 0x51DE)
    let bodies = try (0..<3).map { index in
      try TestBody(
        (0..<((1 << 20) + 777 * index)).map { _ in UInt8(truncatingIfNeeded: random.next()) })
    }
    let store = try TemporaryFolder()
    for readSize in [1 << 18, 1000] {
      let good = try convertMultipart(
        Self.body(bodies, digests: bodies.map(\.md5)),
        options: ConversionOptions(mode: .upgrade, blobs: BlobStoreOptions(path: store.path)),
        readSize: readSize)
      #expect(good.diagnostics.isEmpty, "\(good.diagnostics)")
      #expect(try store.files().count == 3)
      #expect(
        try store.files()
          == Dictionary(uniqueKeysWithValues: bodies.map { ($0.fileName, $0.bytes) })
      )
    }
    // The middle one labelled with the first's MD5: refused, the last converted.
    let fresh = try TemporaryFolder()
    let refused = try convertMultipart(
      Self.body(bodies, digests: [bodies[0].md5, bodies[0].md5, bodies[2].md5]),
      options: ConversionOptions(
        mode: .upgrade, blobs: BlobStoreOptions(path: fresh.path), keepGoing: true))
    #expect(refused.messages.count == 1)
    #expect(
      refused.messages.first
        == "_attachments entry \"big.bin\" (\(bodies[0].md5)): its part holds other bytes"
        + " (\(bodies[1].md5))")
    #expect(try fresh.files().keys.sorted() == [bodies[0].fileName, bodies[2].fileName].sorted())
  }
}

@Suite("--format multipart: one document, as CouchDB answers GET ?attachments=true")
struct SingleDocumentMultipartTests {
  @Test("multipart/related: the JSON part, then each attachment at the top level")
  func related() throws {
    let body = try captured("couchdb-doc-multipart.txt")
    for readSize in [1 << 18, 13, 1] {
      let store = try TemporaryFolder()
      let run = try convertMultipart(
        body, options: ConversionOptions(mode: .pull, blobs: BlobStoreOptions(path: store.path)),
        readSize: readSize)
      #expect(run.diagnostics.isEmpty, "\(run.diagnostics)")
      let document = String(decoding: run.output, as: UTF8.self)
      // The blob push made is back as it was; the entry that mirrored it is gone.
      #expect(
        document.contains(
          #""scan":{"@type":"blob","content_type":"image/tiff","digest":"sha1-tXA0C7MAnpPwaEL+gODDrXcg/K4=","length":70000}"#
        ))
      #expect(!document.contains("$.scan"))
      #expect(lines(run.output).count == 1)
      let files = try store.files()
      #expect(files["9XLTlvrpIGYocU+yzgD3LpTyJY8=.blob"] == Array("hello\n".utf8))
      let original = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent(
          "examples/data/app.cblite2/Attachments/tXA0C7MAnpPwaEL+gODDrXcg_K4=.blob")
      #expect(files["tXA0C7MAnpPwaEL+gODDrXcg_K4=.blob"] == Array(try Data(contentsOf: original)))
    }
  }
}
