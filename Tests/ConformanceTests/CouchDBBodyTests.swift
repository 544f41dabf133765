import Foundation
@_spi(Testing) import LegacyAttachments
import TestSupport
import Testing

// SPEC.md, "Running peers": bodies as a real CouchDB 3.5 labels them (the md5 of the gzip stream
// it stores for compressible types), as Sync Gateway returns an entry with "encoding":"gzip"
// (the stream itself as data), and entries whose digest CouchDB re-labelled md5-. Every stream
// and digest the expectations use comes from Python's zlib and hashlib (CouchDB's parameters:
// `zlib.compressobj(level, zlib.DEFLATED, 31, 8)`), never from the library under test.
// `make interop` checks the same against the running server.

/// What Python computes for `bytes`: the gzip stream CouchDB stores at `level`, its MD5, and a
/// plain gzip stream (Python's `gzip.compress`, another header) with its SHA-1.
struct PythonGzip {
  var couchDBStream: [UInt8]
  var couchDBMD5: String
  var plainStream: [UInt8]
  var plainStreamSHA1: String

  init(_ bytes: [UInt8], level: Int = 8) throws {
    let script = """
      import sys, zlib, gzip, hashlib, base64
      data = sys.stdin.buffer.read()
      c = zlib.compressobj(\(level), zlib.DEFLATED, 31, 8)
      stream = c.compress(data) + c.flush()
      plain = gzip.compress(data, mtime=0)
      print(base64.b64encode(stream).decode())
      print("md5-" + base64.b64encode(hashlib.md5(stream).digest()).decode())
      print(base64.b64encode(plain).decode())
      print("sha1-" + base64.b64encode(hashlib.sha1(plain).digest()).decode())
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
      input.fileHandleForWriting.write(Data(bytes))
      try? input.fileHandleForWriting.close()
    }
    writer.start()
    let lines = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
      .split(separator: "\n").map(String.init)
    process.waitUntilExit()
    guard process.terminationStatus == 0, lines.count == 4 else {
      throw CocoaError(.fileReadUnknown)
    }
    couchDBStream = Array(Data(base64Encoded: lines[0])!)
    couchDBMD5 = lines[1]
    plainStream = Array(Data(base64Encoded: lines[2])!)
    plainStreamSHA1 = lines[3]
  }
}

private func lines(_ documents: [String]) -> [UInt8] {
  Array((documents.joined(separator: "\n") + "\n").utf8)
}

private func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

/// Some text that compresses (CouchDB stores it gzip-compressed): words in a seeded order, so
/// that each compression level makes another stream of it.
private let prose: TestBody = {
  var random = SplitMix64(seed: 0x7E47)
  let words = ["quick", "brown", "fox", "jumps", "over", "the", "lazy", "dog", "and", "blob"]
  let text = (0..<3000).map { _ in words[Int(random.next() % UInt64(words.count))] }
  return try! TestBody(Array(text.joined(separator: " ").utf8))
}()

@Suite("CouchDB's bodies: md5 of what it stores, encoding, mirrors by name")
struct CouchDBBodyTests {
  @Test("pull --blobs checks a text body by CouchDB's gzip stream of it, at level 8 and another")
  func compressedBodiesAreVerified() throws {
    let level8 = try PythonGzip(prose.bytes)
    let level1 = try PythonGzip(prose.bytes, level: 1)
    #expect(level8.couchDBMD5 != prose.md5 && level1.couchDBMD5 != level8.couchDBMD5)
    for (label, digest) in [("level 8", level8.couchDBMD5), ("level 1", level1.couchDBMD5)] {
      let store = try TemporaryFolder()
      let documents = (0..<2).map { index in
        #"{"_id":"t\#(index)","note":{"@type":"blob","content_type":"text/plain","digest":"\#(prose.sha1)","length":\#(prose.bytes.count)},"_attachments":{"$.note":{"content_type":"text/plain","revpos":1,"digest":"\#(digest)","data":"\#(prose.base64)"}}}"#
      }
      let result = CBLAttachments.convertStream(
        lines(documents),
        options: ConversionOptions(mode: .pull, blobs: BlobStoreOptions(path: store.path)))
      #expect(result.diagnostics.isEmpty, "\(label): \(result.diagnostics.map(\.description))")
      #expect(result.statistics.unverified == 0 && result.statistics.entriesRemoved == 2)
      let pulled = (0..<2).map { index in
        #"{"_id":"t\#(index)","note":{"@type":"blob","content_type":"text/plain","digest":"\#(prose.sha1)","length":\#(prose.bytes.count)}}"#
          + "\n"
      }
      #expect(text(result.output) == pulled.joined(), "\(label)")
      #expect(try store.files() == [prose.fileName: prose.bytes], "\(label)")
    }
  }

  @Test("a text body no compression gives is stored unverified, with a warning; strict rejects it")
  func unverifiableBodies() throws {
    // The md5 of other text: no level of zlib makes a stream of these bytes with it.
    let other = try TestBody(Array("not these bytes".utf8))
    let document =
      #"{"_id":"u","note":{"@type":"blob","digest":"\#(prose.sha1)"},"_attachments":{"$.note":{"content_type":"Text/Plain; charset=utf-8","digest":"\#(other.md5)","data":"\#(prose.base64)"}}}"#
    let store = try TemporaryFolder()
    let result = CBLAttachments.convertStream(
      lines([document]),
      options: ConversionOptions(mode: .pull, blobs: BlobStoreOptions(path: store.path)))
    #expect(result.diagnostics.map(\.kind) == [.unverified])
    #expect(result.diagnostics.first?.severity == .warning)
    #expect(
      result.diagnostics.first?.message
        == "_attachments entry \"$.note\" (\(other.md5)): its bytes could not be checked: CouchDB"
        + " labels a body it stores compressed with the md5 of the gzip stream, and compressing"
        + " them again as CouchDB does (zlib, gzip) does not give it; they are kept unverified,"
        + " named by their SHA-1")
    #expect(result.statistics.unverified == 1 && result.statistics.warnings == 1)
    #expect(try store.files() == [prose.fileName: prose.bytes])

    let strictStore = try TemporaryFolder()
    let strict = CBLAttachments.convertStream(
      lines([document]),
      options: ConversionOptions(
        mode: .pull, blobs: BlobStoreOptions(path: strictStore.path), keepGoing: true,
        strict: true))
    #expect(strict.diagnostics.map(\.kind) == [.unverified])
    #expect(strict.diagnostics.first?.severity == .error)
    #expect(strict.output.isEmpty && text(strict.rejects) == document + "\n")
    #expect(try strictStore.files().isEmpty, "a rejected document leaves nothing in the store")

    // A type CouchDB does not compress: the md5 must be the bytes' own, or the document goes.
    let binary = document.replacingOccurrences(
      of: "Text/Plain; charset=utf-8", with: "image/png")
    let binaryStore = try TemporaryFolder()
    let rejected = CBLAttachments.convertStream(
      lines([binary]),
      options: ConversionOptions(
        mode: .pull, blobs: BlobStoreOptions(path: binaryStore.path), keepGoing: true))
    #expect(rejected.diagnostics.map(\.kind) == [.dataMismatch])
    #expect(try binaryStore.files().isEmpty)
  }

  @Test("upgrade of CouchDB's attachments=true&att_encoding_info=true entries: SHA-1 blobs")
  func upgradeEncodingInfo() throws {
    let gzip = try PythonGzip(prose.bytes)
    let document =
      #"{"_id":"c","_rev":"2-x","_attachments":{"notes.txt":{"content_type":"text/plain","revpos":1,"digest":"\#(gzip.couchDBMD5)","data":"\#(prose.base64)","encoding":"gzip","encoded_length":\#(gzip.couchDBStream.count)}}}"#
    let inline = CBLAttachments.convertStream(
      lines([document]), options: ConversionOptions(mode: .upgrade))
    #expect(inline.diagnostics.isEmpty, "\(inline.diagnostics.map(\.description))")
    #expect(
      text(inline.output)
        == #"{"_id":"c","_rev":"2-x","attachments":{"notes.txt":{"@type":"blob","content_type":"text/plain","digest":"\#(prose.sha1)","data":"\#(prose.base64)","length":\#(prose.bytes.count)}}}"#
        + "\n")
    let store = try TemporaryFolder()
    let stored = CBLAttachments.convertStream(
      lines([document]),
      options: ConversionOptions(mode: .upgrade, blobs: BlobStoreOptions(path: store.path)))
    #expect(stored.diagnostics.isEmpty, "\(stored.diagnostics.map(\.description))")
    #expect(
      text(stored.output)
        == #"{"_id":"c","_rev":"2-x","attachments":{"notes.txt":{"@type":"blob","content_type":"text/plain","digest":"\#(prose.sha1)","length":\#(prose.bytes.count)}}}"#
        + "\n")
    #expect(try store.files() == [prose.fileName: prose.bytes])
  }

  @Test(
    "Sync Gateway's encoding gzip: data is the stream its digest names; the blob holds the bytes")
  func syncGatewayEncodedStream() throws {
    // sync_gateway db/attachment.go (storeAttachments keeps a client's encoding and hashes the
    // bytes as sent; loadAttachmentsData returns them as data).
    let gzip = try PythonGzip(prose.bytes)
    let data = Data(gzip.plainStream).base64EncodedString()
    let document =
      #"{"_id":"s","_attachments":{"log.txt":{"content_type":"text/plain","digest":"\#(gzip.plainStreamSHA1)","revpos":2,"data":"\#(data)","encoding":"gzip","encoded_length":\#(gzip.plainStream.count),"length":\#(prose.bytes.count)}}}"#
    let inline = CBLAttachments.convertStream(
      lines([document]), options: ConversionOptions(mode: .upgrade))
    #expect(inline.diagnostics.isEmpty, "\(inline.diagnostics.map(\.description))")
    #expect(
      text(inline.output)
        == #"{"_id":"s","attachments":{"log.txt":{"@type":"blob","content_type":"text/plain","digest":"\#(prose.sha1)","data":"\#(prose.base64)","length":\#(prose.bytes.count)}}}"#
        + "\n")
    let store = try TemporaryFolder()
    let stored = CBLAttachments.convertStream(
      lines([document]),
      options: ConversionOptions(mode: .upgrade, blobs: BlobStoreOptions(path: store.path)))
    #expect(stored.diagnostics.isEmpty, "\(stored.diagnostics.map(\.description))")
    #expect(try store.files() == [prose.fileName: prose.bytes])

    // Pull: an entry whose digest names the stream does not mirror a blob of the decoded bytes
    // (its name is a push's, so it is kept with a warning) ...
    let pullStore = try TemporaryFolder()
    let mirror =
      #"{"_id":"m","log":{"@type":"blob","digest":"\#(prose.sha1)"},"_attachments":{"$.log":{"digest":"\#(gzip.plainStreamSHA1)","data":"\#(data)","encoding":"gzip"}}}"#
    let pulled = CBLAttachments.convertStream(
      lines([mirror]),
      options: ConversionOptions(mode: .pull, blobs: BlobStoreOptions(path: pullStore.path)))
    #expect(pulled.diagnostics.map(\.kind) == [.entryKept], "its digest names the stream")
    #expect(try text(pulled.output) == mirror + "\n" && pullStore.files().isEmpty)

    // ... and a blob whose digest is the stream's own (a client pushed it encoded) keeps its
    // digest: pull stores the stream itself under that name, undecoded, as upgrade would not.
    let streamBlob =
      #""log":{"@type":"blob","digest":"\#(gzip.plainStreamSHA1)","length":\#(gzip.plainStream.count)}"#
    let encodedBlob =
      #"{"_id":"n",\#(streamBlob),"_attachments":{"$.log":{"digest":"\#(gzip.plainStreamSHA1)","data":"\#(data)","encoding":"gzip"}}}"#
    let streamStore = try TemporaryFolder()
    let kept = CBLAttachments.convertStream(
      lines([encodedBlob]),
      options: ConversionOptions(mode: .pull, blobs: BlobStoreOptions(path: streamStore.path)))
    #expect(kept.diagnostics.isEmpty, "\(kept.diagnostics.map(\.description))")
    #expect(text(kept.output) == #"{"_id":"n",\#(streamBlob)}"# + "\n")
    let files = try streamStore.files()
    #expect(files.count == 1 && files.values.first == gzip.plainStream)
  }

  @Test("encoding gzip over bytes that are no gzip stream is refused; another encoding is kept")
  func badEncodings() throws {
    let notGzip = try TestBody([0x1F, 0x8B, 0x08, 0x00, 1, 2, 3])
    let invalid =
      #"{"_id":"i","_attachments":{"x.txt":{"digest":"\#(notGzip.sha1)","data":"\#(notGzip.base64)","encoding":"gzip"}}}"#
    let result = CBLAttachments.convertStream(
      lines([invalid]), options: ConversionOptions(mode: .upgrade, keepGoing: true))
    #expect(result.diagnostics.map(\.kind) == [.invalidData])
    #expect(
      result.diagnostics.first.map {
        $0.message.hasPrefix(
          "_attachments entry \"x.txt\" (\(notGzip.sha1)): \"encoding\" says gzip, but its \"data\""
            + " is not a gzip stream (")
      } == true, "\(result.diagnostics.map(\.message))")
    #expect(text(result.rejects) == invalid + "\n")

    let brotli =
      #"{"_id":"b","_attachments":{"x.txt":{"digest":"\#(prose.sha1)","data":"\#(prose.base64)","encoding":"br"}}}"#
    let kept = CBLAttachments.convertStream(
      lines([brotli]), options: ConversionOptions(mode: .upgrade))
    #expect(kept.diagnostics.map(\.kind) == [.upgradeKept])
    #expect(text(kept.output) == brotli + "\n")
    // An encoding that is not a string is no encoding anyone reads: kept, not taken as none.
    for value in ["1", "null", "{}"] {
      let odd = brotli.replacingOccurrences(of: #""br""#, with: value)
      let result = CBLAttachments.convertStream(
        lines([odd]), options: ConversionOptions(mode: .upgrade))
      #expect(result.diagnostics.map(\.kind) == [.upgradeKept], "\(value)")
      #expect(text(result.output) == odd + "\n", "\(value)")
    }
    // Content codings are compared in any case (RFC 9110 8.4.1).
    let gzip = try PythonGzip(prose.bytes)
    let upper =
      #"{"_id":"s","_attachments":{"log.txt":{"digest":"\#(gzip.plainStreamSHA1)","data":"\#(Data(gzip.plainStream).base64EncodedString())","encoding":"GZip"}}}"#
    let decoded = CBLAttachments.convertStream(
      lines([upper]), options: ConversionOptions(mode: .upgrade))
    #expect(decoded.diagnostics.isEmpty, "\(decoded.diagnostics.map(\.description))")
    #expect(text(decoded.output).contains(#""digest":"\#(prose.sha1)""#))

    // Pull --blobs the same: the entry mirrors a blob by its bytes' SHA-1, but what it holds is
    // another encoding's, kept with a warning. A gzip stream whose SHA-1 the blob's digest is
    // needs no decoding: pull stores the bytes the digest names, as they are.
    let store = try TemporaryFolder()
    let mirrored =
      #"{"_id":"b","x":{"@type":"blob","digest":"\#(prose.sha1)"},"_attachments":{"$.x":{"digest":"\#(prose.sha1)","data":"\#(prose.base64)","encoding":"br"}}}"#
    let pulled = CBLAttachments.convertStream(
      lines([mirrored]),
      options: ConversionOptions(mode: .pull, blobs: BlobStoreOptions(path: store.path)))
    #expect(pulled.diagnostics.map(\.kind) == [.encodedKept])
    #expect(
      pulled.diagnostics.first?.message
        == "_attachments entry \"$.x\" (\(prose.sha1)): its bytes are encoded with \"br\", which"
        + " is not gzip; they cannot be read and the entry is kept")
    #expect(try text(pulled.output) == mirrored + "\n" && store.files().isEmpty)
    let broken =
      #"{"_id":"g","x":{"@type":"blob","digest":"\#(notGzip.sha1)"},"_attachments":{"$.x":{"digest":"\#(notGzip.sha1)","data":"\#(notGzip.base64)","encoding":"gzip"}}}"#
    let stored = CBLAttachments.convertStream(
      lines([broken]),
      options: ConversionOptions(
        mode: .pull, blobs: BlobStoreOptions(path: store.path), keepGoing: true))
    #expect(stored.diagnostics.isEmpty, "\(stored.diagnostics.map(\.description))")
    #expect(
      text(stored.output)
        == #"{"_id":"g","x":{"@type":"blob","digest":"\#(notGzip.sha1)"}}"# + "\n")
    #expect(try store.files() == [notGzip.fileName: notGzip.bytes])
  }

  @Test("plain pull removes what push made once CouchDB re-labelled it md5-, by name and length")
  func mirrorsByNameAndLength() {
    let blob = #""photo":{"@type":"blob","content_type":"image/png","digest":"sha1-x","length":5}"#
    let documents = [
      // CouchDB's default GET: a stub, md5-, revpos and length; both namings.
      #"{"_id":"a",\#(blob),"_attachments":{"$.photo":{"content_type":"image/png","revpos":1,"digest":"md5-XUFAKrxLKna5cZ2REBfFkg==","length":5,"stub":true}}}"#,
      #"{"_id":"b",\#(blob),"_attachments":{"blob_/photo":{"content_type":"image/png","revpos":1,"digest":"md5-XUFAKrxLKna5cZ2REBfFkg==","length":5,"stub":true,"encoding":"gzip","encoded_length":25}}}"#,
      // Another length: replaced on the server; kept, with a warning.
      #"{"_id":"c",\#(blob),"_attachments":{"$.photo":{"digest":"md5-XUFAKrxLKna5cZ2REBfFkg==","length":6,"stub":true}}}"#,
      // A real attachment beside it stays, silently.
      #"{"_id":"d",\#(blob),"_attachments":{"$.photo":{"digest":"md5-XUFAKrxLKna5cZ2REBfFkg==","length":5.0,"stub":true},"x.txt":{"digest":"md5-y","length":5,"stub":true}}}"#,
      // No blob where the name points.
      #"{"_id":"e",\#(blob),"_attachments":{"$.gone":{"digest":"md5-XUFAKrxLKna5cZ2REBfFkg==","length":5,"stub":true}}}"#,
    ]
    let result = CBLAttachments.convertStream(
      lines(documents), options: ConversionOptions(mode: .pull))
    #expect(
      text(result.output)
        == [
          #"{"_id":"a",\#(blob)}"#, #"{"_id":"b",\#(blob)}"#, documents[2],
          #"{"_id":"d",\#(blob),"_attachments":{"x.txt":{"digest":"md5-y","length":5,"stub":true}}}"#,
          documents[4],
        ].map { $0 + "\n" }.joined())
    #expect(
      result.diagnostics.map(\.description) == [
        "3:109: warning: document \"c\": _attachments entry \"$.photo\" has an md5- digest"
          + " (CouchDB's), and its length (6) is not the blob's at /photo (5), so it does not"
          + " mirror it; it is kept",
        "5:109: warning: document \"e\": _attachments entry \"$.gone\" has a name a push makes, but"
          + " no blob is at /gone; it is kept",
      ])
    #expect(result.diagnostics.allSatisfy { $0.kind == .entryKept })

    // --update-blobs: a mirror, not a replaced attachment: the blob keeps its own members.
    let updating = CBLAttachments.convertStream(
      lines([documents[0], documents[2]]),
      options: ConversionOptions(mode: .pull, updateBlobs: true))
    #expect(text(updating.output) == #"{"_id":"a",\#(blob)}"# + "\n" + documents[2] + "\n")
    #expect(updating.diagnostics.map(\.kind) == [.blobNotUpdated])
  }

  @Test("attachments=true leaves length out: the data's SHA-1 is compared, and --blobs stores it")
  func mirrorsByDataBytes() throws {
    let body = testBodies[4]
    let blob =
      #""file":{"@type":"blob","content_type":"application/octet-stream","digest":"\#(body.sha1)","length":\#(body.bytes.count)}"#
    let document =
      #"{"_id":"f",\#(blob),"_attachments":{"blob_/file":{"content_type":"application/octet-stream","revpos":1,"digest":"\#(body.md5)","data":"\#(body.base64)"}}}"#
    // Without a store the bytes stay where they are (the only copy), with the warning for it.
    let plain = CBLAttachments.convertStream(
      lines([document]), options: ConversionOptions(mode: .pull))
    #expect(plain.diagnostics.map(\.kind) == [.dataKept])
    let store = try TemporaryFolder()
    let stored = CBLAttachments.convertStream(
      lines([document]),
      options: ConversionOptions(mode: .pull, blobs: BlobStoreOptions(path: store.path)))
    #expect(stored.diagnostics.isEmpty, "\(stored.diagnostics.map(\.description))")
    #expect(text(stored.output) == #"{"_id":"f",\#(blob)}"# + "\n")
    #expect(try store.files() == [body.fileName: body.bytes])

    // Other bytes of the same size: the attachment was replaced on the server. The entry stays,
    // with a warning that says so, with a store or without; --update-blobs does not take it
    // either (an md5- digest is not one a blob can have), and says why.
    var other = body.bytes
    other[0] ^= 0xFF
    let replaced = try TestBody(other)
    let changed =
      #"{"_id":"g",\#(blob),"_attachments":{"blob_/file":{"content_type":"application/octet-stream","revpos":2,"digest":"\#(replaced.md5)","data":"\#(replaced.base64)"}}}"#
    let message =
      "_attachments entry \"blob_/file\" has an md5- digest (CouchDB's), and the bytes it"
      + " carries are not the blob's at /file (their SHA-1 is not its digest): the attachment"
      + " was replaced; it is kept"
    let notUpdated =
      "_attachments entry \"blob_/file\" names a blob but its digest is not sha1-: Couchbase"
      + " Lite keeps only sha1- blobs, so the blob is not updated and the entry stays"
    let otherStore = try TemporaryFolder()
    for blobs in [nil, BlobStoreOptions(path: otherStore.path)] {
      for (updateBlobs, kind, text) in [
        (false, ConversionDiagnostic.Kind.entryKept, message), (true, .blobNotUpdated, notUpdated),
      ] {
        let result = CBLAttachments.convertStream(
          lines([changed]),
          options: ConversionOptions(mode: .pull, blobs: blobs, updateBlobs: updateBlobs))
        let label = "store: \(blobs != nil), update: \(updateBlobs)"
        #expect(String(decoding: result.output, as: UTF8.self) == changed + "\n", "\(label)")
        #expect(result.diagnostics.map(\.kind) == [kind], "\(label)")
        #expect(result.diagnostics.first?.message == text, "\(label)")
      }
    }
    #expect(try otherStore.files().isEmpty)
  }
}
