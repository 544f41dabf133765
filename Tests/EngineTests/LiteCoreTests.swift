// Unit tests reach internal types through @testable, which only debug builds allow; the release
// run of `make test` covers the build that ships with ConformanceTests and CLITests.
#if DEBUG

import TestSupport
import Testing

@testable import LegacyAttachments

/// `LiteCorePull.resolve`, Fleece's `Path::evalJSONPointer` as `--check` models it: the rules
/// `litecore-harness` showed (LiteCore's pull of documents with such entry names), case by case.
/// `make litecore` compares the whole model with the harness on generated documents.
@Suite("LiteCore's pull: how it follows blob_ names")
struct LiteCoreTests {
  static let document =
    #"{"a":{"@type":"blob"},"g":[{"@type":"blob"},[1,{"x":2}]],"a~b":3,"0":{"k":4},"":5,"s":"t"}"#

  /// Where the pointer goes: the text of the value, "nothing", or "throws".
  private func resolve(_ pointer: String) -> String {
    Array(Self.document.utf8).withUnsafeBufferPointer { text in
      switch LiteCorePull.resolve(Array(pointer.utf8), in: CompactIndex(text)) {
      case .value(let span): String(decoding: text[span.start..<span.end], as: UTF8.self)
      case .nothing: "nothing"
      case .fails: "throws"
      }
    }
  }

  @Test(
    "tokens are not decoded, an empty key finds nothing, a last / is dropped, an index is digits",
    arguments: [
      ("/a", #"{"@type":"blob"}"#), ("/a/", #"{"@type":"blob"}"#),
      ("/g/0", #"{"@type":"blob"}"#), ("/g/00", #"{"@type":"blob"}"#),
      ("/g/1/1/x", "2"), ("/a~b", "3"), ("/a~0b", "nothing"), ("/0/k", "4"),
      ("/", Self.document), ("//", "nothing"), ("/a//x", "nothing"), ("/g/9", "nothing"),
      ("/s/x/y", "nothing"), ("/h/x", "nothing"),
      ("/g/x", "throws"), ("/g/0x", "throws"), ("/g/-1", "throws"), ("/g/99999999999", "throws"),
      ("x", "throws"), ("", "throws"),
    ])
  func resolves(pointer: String, value: String) {
    #expect(resolve(pointer) == value)
  }

  /// What `C4BlobKey::withDigestString` takes (`litecore-harness digest` answered each): 28
  /// bytes after `sha1-`, 27 of them base64, whatever the 28th is and wherever; the file is
  /// named by the canonical text.
  @Test(
    "a sha1- digest is read as Couchbase Lite reads it",
    arguments: [
      ("sha1-2jmj7l5rSw0yVb/vlWAYkK/YBwk=", "sha1-2jmj7l5rSw0yVb/vlWAYkK/YBwk=", true),
      ("sha1-2jmj7l5rSw0yVb/vlWAYkK/YBwl=", "sha1-2jmj7l5rSw0yVb/vlWAYkK/YBwk=", false),
      ("sha1-2jmj7l5rSw0yVb/vlWAYk K/YBwk", "sha1-2jmj7l5rSw0yVb/vlWAYkK/YBwk=", false),
      ("sha1-2jmj7l5rSw0yVb/vlWAYkK/YBwk\n", "sha1-2jmj7l5rSw0yVb/vlWAYkK/YBwk=", false),
      ("sha1-2jmj7l5rSw0=yVb/vlWAYkK/YBwk", "sha1-2jmj7l5rSw0yVb/vlWAYkK/YBwk=", false),
      ("sha1-2jmj7l5rSw0yVb/vlWAYkK/YBwkA", nil, false),
      ("sha1-2jmj7l5rSw0yVb/vlWAYkK/YBw==", nil, false),
      ("sha1-2jmj7l5rSw0yVb/vlWAYkK/YBwk", nil, false),
    ] as [(String, String?, Bool)])
  func digests(written: String, read: String?, canonical: Bool) {
    let digest = Array(written.utf8).withUnsafeBufferPointer { AttachmentDigest($0) }
    #expect(digest?.description == read)
    if read != nil { #expect(digest?.isCanonical == canonical) }
  }
}

#endif
