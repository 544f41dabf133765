// Unit tests reach internal types through @testable, which only debug builds allow; the release
// run of `make test` covers the build that ships with ConformanceTests and CLITests.
#if DEBUG

import Testing

@testable import LegacyAttachments

@Suite("Attachment naming: steps, prefixes, tails and push rule 3")
struct AttachmentNamingTests {
  private func synthesized(_ name: String) -> Bool {
    var name = name
    return name.withUTF8 { AttachmentNaming.isSynthesized($0) }
  }

  @Test(
    "names a push made, in either naming, are recognised (SPEC.md push rule 3)",
    arguments: [
      "$.a", "$[0]", "$.photos.gallery[2]", "$.a\\.b", "$.x\\[1]", "$.c:\\\\tmp", "$.", "$..a",
      "$.a[0].b", "$.é", "blob_/a", "blob_/", "blob_/a~0b~1c", "blob_/photos/gallery/2", "blob_1",
      "blob_27",
    ])
  func synthesizedNames(name: String) {
    #expect(synthesized(name))
  }

  @Test(
    "other names are real attachments and stay",
    arguments: [
      "", "$", "$x", "$$.a", "$[]", "$[x]", "$[0", "$.a\\x", "$.a\\", "blob_", "blob",
      "blob_notes.txt", "blob_1a", "blob_/~2", "blob_/~", "Blob_/a", "photo.jpg", "a",
    ])
  func realNames(name: String) {
    #expect(!synthesized(name))
  }

  private func steps(_ style: PathStyle, key: String) -> String {
    var output = ByteBuffer(capacity: 16)
    var key = key
    key.withUTF8 { style.appendKeyStep($0, to: &output) }
    style.appendIndexStep(12, to: &output)
    return String(decoding: output.bytes, as: UTF8.self)
  }

  @Test("key and index steps, with each style's escapes")
  func pathSteps() {
    #expect(steps(.jsonpath, key: "a.b[c\\d~/") == ".a\\.b\\[c\\\\d~/[12]")
    #expect(steps(.pointer, key: "a.b[c\\d~/") == "/a.b[c\\d~0~1/12")
    #expect(steps(.jsonpath, key: "") == ".[12]")
  }

  @Test("the plain prefix of a raw key stops at what needs an escape")
  func plainPrefix() {
    let key = Array("ab.c~d".utf8)
    key.withUnsafeBufferPointer {
      #expect(PathStyle.jsonpath.plainPrefixLength($0.baseAddress!, count: $0.count) == 2)
      #expect(PathStyle.pointer.plainPrefixLength($0.baseAddress!, count: $0.count) == 4)
    }
    let escaped = Array("ab\\u0041".utf8)
    escaped.withUnsafeBufferPointer {
      #expect(PathStyle.pointer.plainPrefixLength($0.baseAddress!, count: $0.count) == 2)
    }
  }

  @Test("prefixes and entry tails of the two namings")
  func prefixesAndTails() {
    let jsonpath = AttachmentNaming(.jsonpath)
    let litecore = AttachmentNaming(.litecore)
    #expect(jsonpath.prefix.description == "$")
    #expect(litecore.prefix.description == "blob_")
    #expect(!jsonpath.writesStubAndRevpos && litecore.writesStubAndRevpos)
    var output = ByteBuffer(capacity: 16)
    jsonpath.appendEntryTail(revpos: 3, needsComma: true, to: &output)
    #expect(output.count == 0)
    litecore.appendEntryTail(revpos: 3, needsComma: true, to: &output)
    #expect(String(decoding: output.bytes, as: UTF8.self) == ",\"stub\":true,\"revpos\":3")
  }
}

#endif
