// Unit tests reach internal types through @testable, which only debug builds allow; the release
// run of `make test` covers the build that ships with ConformanceTests and CLITests.
#if DEBUG

import TestSupport
import Testing

@testable import LegacyAttachments

@Suite("CouchDB's rules: compressible types, gzip streams, document size, named places")
struct CouchDBTests {
  @Test(
    "compressible types as couch_db:compressible_att_type/1 matches the default list",
    arguments: [
      ("text/plain", true), ("text/plain; charset=utf-8", true), (" TEXT/HTML ", true),
      ("text/", true), ("application/json", true), ("Application/JSON ; q=1", true),
      ("application/javascript", true), ("application/xml", true), ("application/xhtml+xml", false),
      ("application/jsonx", false), ("image/png", false), ("", false), ("texts/plain", false),
    ])
  func compressibleTypes(type: String, compresses: Bool) {
    #expect(CouchDB.compresses(contentType: Array(type.utf8)) == compresses)
  }

  @Test(
    "a gzip stream made piece by piece reads back whole, members and all; a broken one is refused")
  func gzipRoundTrip() throws {
    var random = SplitMix64(seed: 0x6219)
    let bytes = (0..<200_000).map { _ in UInt8(truncatingIfNeeded: random.next() % 7) }
    var stream: [UInt8] = []
    var compressor = GzipCompressor(level: 8)
    for start in stride(from: 0, to: bytes.count, by: 4099) {
      bytes[start..<min(start + 4099, bytes.count)].withUnsafeBytes {
        compressor.append($0) { stream += $0 }
      }
    }
    compressor.finish { stream += $0 }
    #expect(stream.starts(with: [0x1F, 0x8B, 0x08]) && stream.count < bytes.count / 2)
    let pieces = stride(from: 0, to: stream.count, by: 13).map {
      Array(stream[$0..<min($0 + 13, stream.count)])
    }
    let roundTrip = Self.decompress(pieces)
    #expect(roundTrip.failure == nil && roundTrip.bytes == bytes)

    func failure(_ stream: [UInt8]) -> String? { Self.decompress([stream]).failure }
    #expect(failure(Array(stream.prefix(stream.count - 3))) == "the gzip stream is cut short")
    // Members one after another (RFC 1952) are one stream, as gzip(1) and Go read them; what
    // follows a member must be another.
    let twoMembers = Self.decompress(
      [Array(stream.prefix(100)), Array(stream.dropFirst(100)) + stream])
    #expect(twoMembers.failure == nil && twoMembers.bytes == bytes + bytes)
    #expect(failure(stream + [0x1F]) == "the gzip stream is cut short")
    #expect(failure(stream + [0, 0]) == "after member 1: incorrect header check")
    #expect(failure([0x1F, 0x8B, 0x08, 0, 0, 0, 0, 0, 0, 3, 0xFF, 0xFF]) != nil)
    #expect(failure(Array("plain text".utf8)) == "incorrect header check")
    var corrupt = stream
    corrupt[corrupt.count - 6] ^= 0xFF  // the CRC-32 of the trailer
    #expect(failure(corrupt) == "incorrect data check")
  }

  /// What a gzip stream fed in `pieces` decodes to, and why it is refused (zlib's reason).
  static func decompress(_ pieces: [[UInt8]]) -> (bytes: [UInt8], failure: String?) {
    var decompressor = GzipDecompressor()
    var output: [UInt8] = []
    for piece in pieces {
      let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: piece.count, alignment: 1)
      defer { buffer.deallocate() }
      buffer.copyBytes(from: piece)
      do throws(DecompressionFailure<Never>) {
        try decompressor.append(UnsafeRawBufferPointer(buffer)) { (bytes) throws(Never) in
          output += bytes
        }
      } catch {
        if case .invalid(let invalid) = error { return (output, invalid.reason) }
      }
    }
    do {
      try decompressor.finish()
    } catch {
      return (output, error.reason)
    }
    return (output, nil)
  }

  @Test("the level a body's md5 names is found and tried first next; a miss changes no verdict")
  func compressionLevels() {
    var random = SplitMix64(seed: 0x1E7E1)
    let words = ["level", "blob", "couch", "gzip", "digest", "store"]
    let bytes = Array(
      (0..<3000).map { _ in words[Int(random.next() % 6)] }.joined(separator: " ").utf8)
    func body(_ sink: (UnsafeRawBufferPointer) -> Void) { bytes.withUnsafeBytes(sink) }
    let level1 = CouchDB.md5OfStoredStream(level: 1, body: body)
    let level8 = CouchDB.md5OfStoredStream(level: 8, body: body)
    #expect(level1 != level8)
    var guess = CompressionLevelGuess()
    #expect(guess.likely == 8)
    #expect(guess.level(giving: level1, body: body) == 1 && guess.likely == 1)
    // A digest no level gives, then the others: each is verified as on a fresh run.
    #expect(guess.level(giving: [UInt8](repeating: 7, count: 16), body: body) == nil)
    #expect(guess.level(giving: level8, body: body) == 8 && guess.likely == 8)
    #expect(guess.level(giving: level1, body: body) == 1)
  }

  /// `couch_ejson_size:encoded_size/1` of the body, worked out by hand from its clauses.
  @Test(
    "max_document_size: the body as couch_ejson_size counts it",
    arguments: [
      (#"{}"#, 2),
      (#"{"a":1}"#, 7),
      // _id, _rev, _attachments, _deleted, _revisions are not in the body; _access is.
      (#"{"_id":"x","_rev":"1-a","a":1,"_attachments":{"f":{"data":"aGk="}},"_deleted":false}"#, 7),
      (#"{"_access":["u"],"a":1}"#, 23),
      // A string counts its decoded bytes: \u00e9 is 2, \/ is 1, \n is 1.
      (#"{"s":"\u00e9\/\n"}"#, 2 + 3 + 1 + 2 + 4),
      // Integers by their digits; -0 is 0; from 10,000 on by trunc(log10(N)) + 1.
      (#"{"n":[0,-0,7,-7,12345,99999,-100000]}"#, 2 + 3 + 1 + 2 + 1 + 1 + 1 + 2 + 5 + 5 + 7 + 6),
      // Floats by their magnitude alone: 3, 3, 3, 3, 4, 4, 5, 6, 3, 4, 5 and 4 (47), with 11
      // commas, the brackets, the key, the colon and the braces.
      (
        #"{"f":[1.0,1.5,3.14159,0.25,0.001,1e-5,1e-50,1e-200,1e-301,2e10,1e100,-2.5]}"#,
        47 + 11 + 2 + 3 + 1 + 2
      ),
      (#"{"t":true,"f":false,"n":null}"#, 2 + 8 + 9 + 8 + 2),
      // An integer beyond a double's range counts its digits (CouchDB itself answers 500).
      ("{\"n\":1" + String(repeating: "0", count: 400) + "}", 2 + 3 + 1 + 401),
    ])
  func documentSize(text: String, size: Int) {
    let bytes = Array(text.utf8)
    #expect(bytes.withUnsafeBufferPointer { CouchDB.documentSize($0) } == size)
  }

  @Test(
    "a synthesized name gives its place; a walk of the compact text finds the value there",
    arguments: [
      ("blob_/a/0/b", "/a/0/b", true), ("$.a[0].b", "/a/0/b", true),
      ("blob_/a~1x/~0", "/a~1x/~0", true), ("$.a\\.b", "/a.b", true), ("$.x/y.~", "/x~1y/~0", true),
      ("$.a[01]", "", false), ("blob_1", "", false), ("photo", "", false),
      ("blob_/x~2", "", false), ("$", "", false), ("$.", "", true), ("blob_/", "", true),
    ])
  func namedPlaces(name: String, pointer: String, parses: Bool) {
    let place = NamedPlace(name: Array(name.utf8))
    #expect((place != nil) == parses)
    if let place, !pointer.isEmpty { #expect(place.pointer == pointer) }
  }

  @Test("which blob is at a place: arrays by index, pointer tokens as keys or indexes, duplicates")
  func placesHoldValues() {
    let text = Array(
      #"{"a":[{"b":{"@type":"blob"}},{"c":1}],"a/x":{"~":{"@type":"blob"}},"2":{"k":{"@type":"blob"}},"d":{"k":1},"d":{"k":{"@type":"blob"}},"a.b":{"@type":"blob"}}"#
        .utf8)
    func offset(of needle: String, after: Int = 0) -> Int {
      let needle = Array(needle.utf8)
      return (after..<text.count).first { text[$0...].starts(with: needle) }!
    }
    let first = offset(of: #"{"@type""#)
    let second = offset(of: #"{"@type""#, after: first + 1)
    let third = offset(of: #"{"@type""#, after: second + 1)
    let duplicate = offset(of: #"{"@type""#, after: third + 1)
    let dotted = offset(of: #"{"@type""#, after: duplicate + 1)
    func holds(_ name: String, _ value: Int) -> Bool {
      text.withUnsafeBufferPointer {
        let place = NamedPlace(name: Array(name.utf8))!
        return place.holds(valueAt: value, in: $0)
      }
    }
    #expect(holds("blob_/a/0/b", first) && holds("$.a[0].b", first))
    #expect(!holds("blob_/a/1/b", first) && !holds("$.a.0.b", first) && !holds("blob_/a/0", first))
    #expect(holds("blob_/a~1x/~0", second) && holds("$.a/x.~", second))
    #expect(holds("blob_/2/k", third) && !holds("$[2].k", third) && holds("$.2.k", third))
    #expect(holds("$.d.k", duplicate) && holds("blob_/d/k", duplicate))

    #expect(holds("$.a\\.b", dotted) && !holds("$.a.b", dotted))
  }

  @Test("one walk over compact text knows every value's path, and can skip a value's inside")
  func compactWalk() {
    let text = Array(#"{"a":[1,{"b\"c":[]},[[{}]]],"d":{"e":"x,]}"},"f":null}"#.utf8)
    let dEnd = (0..<text.count).first { text[$0...].starts(with: #","f""#.utf8) }!
    var visited: [String] = []
    text.withUnsafeBufferPointer { buffer in
      var walker = CompactWalker(text: buffer)
      walker.walk { start, path in
        let steps = path.map { step -> String in
          switch step {
          case .key(let key): String(decoding: buffer[key.start..<key.end], as: UTF8.self)
          case .index(let index): String(index)
          }
        }
        visited.append("\(steps.joined(separator: "/"))=\(Character(UnicodeScalar(buffer[start])))")
        // The object under "d" is skipped: its end is given (a string in it holds "}").
        if steps == [#""d""#] { return dEnd }
        return nil
      }
    }
    #expect(
      visited == [
        "={", #""a"=["#, #""a"/0=1"#, #""a"/1={"#, #""a"/1/"b\"c"=["#, #""a"/2=["#,
        #""a"/2/0=["#, #""a"/2/0/0={"#, #""d"={"#, #""f"=n"#,
      ])
  }
}

#endif
