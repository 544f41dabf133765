#if DEBUG
import Foundation
@testable import LegacyAttachments
import TestSupport
import Testing

// The pieces attachment bodies are built from: libcrypto's digests and base64 as wrapped
// here, checked against published test vectors (RFC 4648, FIPS 180, RFC 1321).

private func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

private func encoded(_ bytes: [UInt8]) -> String {
  var output = ByteBuffer(capacity: 0)
  bytes.withUnsafeBufferPointer { Base64.encodeWhole($0, into: &output) }
  return text(Array(output.bytes))
}

private func decoded(_ string: String) -> [UInt8]? {
  Array(string.utf8).withUnsafeBufferPointer { Base64.decodeWhole($0) }
}

private func hash(_ algorithm: DigestAlgorithm, _ string: String) -> String {
  var hasher = Hasher(algorithm)
  Array(string.utf8).withUnsafeBytes { hasher.update($0) }
  return AttachmentDigest(algorithm: algorithm, hash: hasher.finish()).description
}

@Suite("Bodies: digests, base64, blob file names")
struct BodiesTests {
  @Test("base64: the RFC 4648 test vectors, both ways")
  func rfc4648() {
    let vectors = [
      ("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="),
      ("fooba", "Zm9vYmE="), ("foobar", "Zm9vYmFy"),
    ]
    for (plain, base64) in vectors {
      #expect(encoded(Array(plain.utf8)) == base64)
      #expect(decoded(base64) == Array(plain.utf8), "\(base64)")
    }
  }

  @Test(
    "base64: strict; no whitespace, padding only at the end, length a multiple of 4",
    arguments: [
      "Zg=", "Zm9v ", " Zm9v", "Zm 9v", "Zm9v\nYmFy", "Z===", "Zg==Zm9v", "Zm=v",
      "Zm9v!", "Zm9vYmF=y",
      // Unused bits of a padded block set: d29ybGQ= is "world"; d29ybGR= decodes to it too.
      "d29ybGR=", "Zh==", "Zm9=",
    ])
  func strict(_ text: String) {
    #expect(decoded(text) == nil, "\(text) must be refused")
  }

  @Test("base64: decoding in pieces and encoding a stream in pieces give the whole")
  func pieces() throws {
    var random = SplitMix64(seed: 64)
    for size in [0, 1, 2, 3, 4, 5, 100, 4095, 65_536, 200_001] {
      let bytes = (0..<size).map { _ in UInt8(truncatingIfNeeded: random.next()) }
      let whole = encoded(bytes)
      // A stream cut at random places encodes the same.
      var encoder = Base64Encoder()
      var streamed = ByteBuffer(capacity: 0)
      var offset = 0
      while offset < size {
        let count = min(size - offset, 1 + random.below(700))
        bytes[offset..<offset + count].withUnsafeBytes { encoder.append($0, to: &streamed) }
        offset += count
      }
      encoder.finish(to: &streamed)
      #expect(text(Array(streamed.bytes)) == whole, "size \(size)")
      // Decoding with small pieces hands the bytes over in order.
      for piece in [3, 4, 10, 1 << 16] {
        var out: [UInt8] = []
        try Array(whole.utf8).withUnsafeBufferPointer { buffer in
          try Base64.decode(buffer, piece: piece) { out.append(contentsOf: $0) }
        }
        #expect(out == bytes, "size \(size), piece \(piece)")
      }
    }
  }

  @Test("SHA-1 and MD5: published vectors, as digests are written")
  func digests() {
    #expect(hash(.sha1, "") == "sha1-2jmj7l5rSw0yVb/vlWAYkK/YBwk=")
    #expect(hash(.sha1, "abc") == "sha1-qZk+NkcGgWq6PiVxeFDCbJzQ2J0=")
    #expect(hash(.md5, "") == "md5-1B2M2Y8AsgTpgAmY7PhCfg==")
    #expect(hash(.md5, "abc") == "md5-kAFQmDzST7DWlj99KOF/cg==")
  }

  @Test("a digest names a file only when it is sha1- and 28 characters that decode to 20 bytes")
  func fileNames() {
    func name(_ digest: String) -> String? {
      Array(digest.utf8).withUnsafeBufferPointer { AttachmentDigest($0) }.flatMap {
        BlobStore.fileName(for: $0)
      }
    }
    #expect(name("sha1-2jmj7l5rSw0yVb/vlWAYkK/YBwk=") == "2jmj7l5rSw0yVb_vlWAYkK_YBwk=.blob")
    #expect(name("md5-1B2M2Y8AsgTpgAmY7PhCfg==") == nil, "md5 names no file")
    #expect(name("sha1-2jmj7l5rSw0yVb/vlWAYkK/YBw=") == nil, "too short")
    #expect(name("sha1-2jmj7l5rSw0yVb/vlWAYkK/YBwk") == nil, "unpadded")
    #expect(name("sha1-x") == nil)
    #expect(name("SHA1-2jmj7l5rSw0yVb/vlWAYkK/YBwk=") == nil)
  }

  @Test("a .cblite2 database's store is its Attachments folder")
  func location() {
    #expect(BlobStoreOptions(path: "app.cblite2").directory == "app.cblite2/Attachments")
    #expect(BlobStoreOptions(path: "app.cblite2/").directory == "app.cblite2/Attachments")
    #expect(BlobStoreOptions(path: "x/Attachments").directory == "x/Attachments")
  }

  @Test("length: 4321, 4321.0 and 4.321e3 are the same number; others are not checked")
  func lengths() {
    func value(_ text: String) -> Int? {
      Array(text.utf8).withUnsafeBufferPointer { BodyCarrier.lengthValue($0) }
    }
    #expect(value("4321") == 4321 && value("4321.0") == 4321 && value("4.321e3") == 4321)
    #expect(value("-1") == nil && value("1.5") == nil && value("\"12\"") == nil)
    // Read exactly: a Double would make this 6.
    #expect(value("6.00000000000000000001") == nil)
  }

  @Test("a body being stored has no name in the store until it is committed (O_TMPFILE)")
  func noNameUntilCommitted() throws {
    let folder = "/tmp/cbl-attachments-store-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    #expect(mkdir(folder, 0o755) == 0)
    defer {
      for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] {
        unlink(folder + "/" + name)
      }
      rmdir(folder)
    }
    func names() -> [String] {
      (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
    }
    let store = BlobStore(options: BlobStoreOptions(path: folder))
    let hello = UnsafeMutableRawBufferPointer.allocate(byteCount: 5, alignment: 1)
    defer { hello.deallocate() }
    hello.copyBytes(from: "hello".utf8)
    do {
      var body = try store.beginStoring(checking: .sha1)
      try body.append(UnsafeRawBufferPointer(hello))
      #expect(names() == [], "a body not yet committed leaves nothing a signal could strand")
    }
    #expect(names() == [], "a body dropped unstored leaves nothing")
    var body = try store.beginStoring(checking: .sha1)
    try body.append(UnsafeRawBufferPointer(hello))
    let name = "qvTGHdzF6KLavt4PO0gs2a6pQ00=.blob"
    #expect(try store.commit(body, as: name) == .stored)
    #expect(names() == [name])
    var info = stat()
    #expect(stat(folder + "/" + name, &info) == 0 && info.st_mode & 0o777 == 0o444)
    #expect(info.st_size == 5)
  }
}
#endif
