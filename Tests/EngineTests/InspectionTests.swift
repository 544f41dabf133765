// Unit tests reach internal types through @testable, which only debug builds allow; the release
// run of `make test` covers the build that ships with ConformanceTests and CLITests.
#if DEBUG

import Foundation
import LegacyAttachments
import Testing
import TestSupport

// SPEC.md "Inspection": `--list` rows and `--check` findings, through the library's
// `CBLAttachments.convertStream` with `mode: .list` / `.check`. Every expected row below was
// written by hand from SPEC.md (and the documented field order of README.md), never copied from
// the tool's output.

/// The members of a `--list` row, in their documented order.
private let listFields = [
  "id", "line", "kind", "name", "pointer", "digest", "length", "content_type",
]
/// The members of a `--check` finding, in their documented order.
private let checkFields = ["id", "line", "problem", "pointer", "detail"]

private func stream(
  _ text: String, _ mode: ConversionMode, framing: InputFraming = .lines, keepGoing: Bool = false,
  chunkSize: Int = 1 << 16
) -> StreamResult {
  CBLAttachments.convertStream(
    Array(text.utf8),
    options: ConversionOptions(mode: mode, framing: framing, keepGoing: keepGoing),
    chunkSize: chunkSize)
}

/// The NDJSON rows of a result (each line without its newline); fails unless the output ends
/// with a newline.
private func rows(_ result: StreamResult, sourceLocation: SourceLocation = #_sourceLocation)
  -> [String]
{
  let text = String(decoding: result.output, as: UTF8.self)
  if text.isEmpty { return [] }
  #expect(
    text.hasSuffix("\n"), "output does not end with a newline: \(text)",
    sourceLocation: sourceLocation)
  return text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
}

/// `--list` rows of `text`, which must convert without diagnostics.
private func list(
  _ text: String, framing: InputFraming = .lines, sourceLocation: SourceLocation = #_sourceLocation
) -> [String] {
  let result = stream(text, .list, framing: framing)
  #expect(result.diagnostics.isEmpty, "\(result.diagnostics)", sourceLocation: sourceLocation)
  #expect(result.outcome == .completed, sourceLocation: sourceLocation)
  return rows(result, sourceLocation: sourceLocation)
}

/// The keys of a JSON object text, in order (a minimal scan of a flat row: enough for the rows
/// this tool writes, whose values hold no unescaped quotes).
private func memberNames(_ row: String) -> [String] {
  guard let object = try? JSONSerialization.jsonObject(with: Data(row.utf8)) as? [String: Any]
  else {
    return []
  }
  // JSONSerialization forgets the order: recover it from the positions of `"key":` at depth 1.
  let keys = Array(object.keys)
  return keys.sorted { a, b in
    (row.range(of: "\"\(a)\":")?.lowerBound ?? row.endIndex)
      < (row.range(of: "\"\(b)\":")?.lowerBound ?? row.endIndex)
  }
}

private func decoded(_ row: String) -> [String: Any] {
  (try? JSONSerialization.jsonObject(with: Data(row.utf8)) as? [String: Any]) ?? [:]
}

/// One `--check` finding, decoded; `detail` is checked only for being a non-empty string.
private struct Finding: Equatable, CustomStringConvertible {
  var id: String?
  var line: Int
  var problem: String
  var pointer: String

  init(_ id: String?, _ line: Int, _ problem: String, _ pointer: String) {
    self.id = id
    self.line = line
    self.problem = problem
    self.pointer = pointer
  }

  var description: String { "(\(id ?? "null"), \(line), \(problem), \(pointer))" }
}

/// Decodes `--check` rows, checking that each has exactly the five documented members and a
/// non-empty human `detail`.
private func findings(_ result: StreamResult, sourceLocation: SourceLocation = #_sourceLocation)
  -> [Finding]
{
  rows(result, sourceLocation: sourceLocation).map { row in
    #expect(memberNames(row) == checkFields, "members of \(row)", sourceLocation: sourceLocation)
    let object = decoded(row)
    let detail = object["detail"] as? String ?? ""
    #expect(!detail.isEmpty, "no detail in \(row)", sourceLocation: sourceLocation)
    return Finding(
      object["id"] as? String, (object["line"] as? NSNumber)?.intValue ?? -1,
      object["problem"] as? String ?? "?", object["pointer"] as? String ?? "?")
  }
}

/// The findings of `--check` on `text`; `only` keeps the problems a test is about (its input's
/// entries may raise the Sync Gateway entry rules too, tested on their own).
private func check(
  _ text: String, framing: InputFraming = .lines, only: Set<String>? = nil,
  sourceLocation: SourceLocation = #_sourceLocation
)
  -> [Finding]
{
  let result = stream(text, .check, framing: framing)
  #expect(
    result.outcome == .completed, "check reads the whole input", sourceLocation: sourceLocation)
  let all = findings(result, sourceLocation: sourceLocation)
  guard let only else { return all }
  return all.filter { only.contains($0.problem) }
}

// MARK: - Documents whose pushed `_attachments` has an exact size

/// A document `{"_id":ID,["_attachments":LEGACY,]"p":[blob, blob, ...]}` whose `_attachments` as
/// `--push` makes it (the kept legacy members, then `"$.p[i]":{"digest":D}` per blob) is exactly
/// `target` bytes of compact JSON. Returns the document and that `_attachments` text.
private func documentWithMetadata(
  id: String, target: Int, legacyInput: String? = nil, legacyCompactMembers: String? = nil
) -> (document: String, attachments: String) {
  func digest(_ index: Int) -> String {
    let number = String(index)
    return "sha1-" + String(repeating: "0", count: 27 - number.count) + number + "="
  }
  func entry(_ index: Int, _ digest: String) -> String {
    "\"$.p[\(index)]\":{\"digest\":\"\(digest)\"}"
  }
  var digests: [String] = []
  var members: [String] = legacyCompactMembers.map { [$0] } ?? []
  // `{` + members separated by `,` + `}`, kept as a running total.
  var memberBytes = members.map(\.utf8.count).reduce(0, +)
  func size() -> Int { 2 + memberBytes + max(members.count - 1, 0) }
  while size() < target - 200 {
    let value = digest(digests.count)
    members.append(entry(digests.count, value))
    memberBytes += members[members.count - 1].utf8.count
    digests.append(value)
  }
  // Pad the last digest so that the total is exactly `target`.
  let padding = target - size()
  let last = digests.count - 1
  memberBytes -= members[members.count - 1].utf8.count
  digests[last] += String(repeating: "x", count: padding)
  members[members.count - 1] = entry(last, digests[last])
  memberBytes += members[members.count - 1].utf8.count
  precondition(size() == target)
  precondition(("{" + members.joined(separator: ",") + "}").utf8.count == target)
  let blobs = digests.map { "{\"@type\":\"blob\",\"digest\":\"\($0)\"}" }.joined(separator: ",")
  let legacy = legacyInput.map { "\"_attachments\":\($0)," } ?? ""
  return (
    "{\"_id\":\"\(id)\",\(legacy)\"p\":[\(blobs)]}",
    "{" + members.joined(separator: ",") + "}"
  )
}

@Suite("Inspection: --list and --check (library)")
struct InspectionTests {
  // MARK: --list fields

  @Test("--list: every field of blob and legacy rows, in the documented order")
  func listEveryField() {
    let input = """
      {"_id":"doc-a","first":{"@type":"blob","digest":"sha1-A","length":10,"content_type":"image/png"},"_attachments":{"old.txt":{"digest":"sha1-L","length":5,"content_type":"text/plain"},"n":7},"list":[1,{"@type":"blob","digest":"sha1-B"}]}

      """
    let expected = [
      #"{"id":"doc-a","line":1,"kind":"blob","name":"$.first","pointer":"/first","digest":"sha1-A","length":10,"content_type":"image/png"}"#,
      #"{"id":"doc-a","line":1,"kind":"legacy","name":"old.txt","pointer":"/_attachments/old.txt","digest":"sha1-L","length":5,"content_type":"text/plain"}"#,
      #"{"id":"doc-a","line":1,"kind":"blob","name":"$.list[1]","pointer":"/list/1","digest":"sha1-B","length":null,"content_type":null}"#,
    ]
    let got = list(input)
    #expect(got == expected)
    for row in got { #expect(memberNames(row) == listFields, "members of \(row)") }
  }

  @Test("--list: digest, length and content_type are null when absent")
  func listNullsWhenAbsent() {
    let input = #"{"_id":"n","b":{"@type":"blob"},"_attachments":{"e":{},"f":{"revpos":2}}}"# + "\n"
    #expect(
      list(input) == [
        #"{"id":"n","line":1,"kind":"blob","name":"$.b","pointer":"/b","digest":null,"length":null,"content_type":null}"#,
        #"{"id":"n","line":1,"kind":"legacy","name":"e","pointer":"/_attachments/e","digest":null,"length":null,"content_type":null}"#,
        #"{"id":"n","line":1,"kind":"legacy","name":"f","pointer":"/_attachments/f","digest":null,"length":null,"content_type":null}"#,
      ])
  }

  @Test(
    "--list: digest, length and content_type are copied as found (escapes, number literals, other types)"
  )
  func listRawValues() {
    let input = """
      {"_id":"raw","a":{"@type":"blob","digest":"sha1-\\u0041\\/x","length":1.50e3,"content_type":"image\\/png"},"b":{"@type":"blob","digest":42,"length":12345678901234567890123,"content_type":null},"_attachments":{"c":{"digest":["x"],"length":"12","content_type":{"t":1}}}}

      """
    #expect(
      list(input) == [
        #"{"id":"raw","line":1,"kind":"blob","name":"$.a","pointer":"/a","digest":"sha1-\u0041\/x","length":1.50e3,"content_type":"image\/png"}"#,
        #"{"id":"raw","line":1,"kind":"blob","name":"$.b","pointer":"/b","digest":42,"length":12345678901234567890123,"content_type":null}"#,
        #"{"id":"raw","line":1,"kind":"legacy","name":"c","pointer":"/_attachments/c","digest":["x"],"length":"12","content_type":{"t":1}}"#,
      ])
  }

  @Test("--list: with duplicate digest keys the last one counts")
  func listDuplicateDigest() {
    let input = #"{"b":{"@type":"blob","digest":"first","length":1,"digest":"second"}}"# + "\n"
    #expect(
      list(input) == [
        #"{"id":null,"line":1,"kind":"blob","name":"$.b","pointer":"/b","digest":"second","length":1,"content_type":null}"#
      ])
  }

  @Test(
    "--list: blobs and legacy entries in document order; non-object entries are not attachments")
  func listDocumentOrder() {
    let input = """
      {"_attachments":{"z":{"digest":"1"},"s":"not an attachment","a":{"digest":"2"}},"m":{"@type":"blob","digest":"3"},"n":[{"x":{"@type":"blob","digest":"4"}},{"@type":"blob","digest":"5"}]}
      {"m":{"deep":{"deeper":{"@type":"blob","digest":"6"}},"@t":1},"_attachments":{"k":{"digest":"7"}},"z":{"@type":"blob","digest":"8"}}

      """
    let got = list(input).map { row -> String in
      let object = decoded(row)
      return
        "\(object["kind"] as? String ?? "?") \(object["pointer"] as? String ?? "?") \(object["digest"] as? String ?? "?")"
    }
    #expect(
      got == [
        "legacy /_attachments/z 1", "legacy /_attachments/a 2", "blob /m 3", "blob /n/0/x 4",
        "blob /n/1 5",
        "blob /m/deep/deeper 6", "legacy /_attachments/k 7", "blob /z 8",
      ])
  }

  @Test("--list: what is a blob (decoded @type, exactly \"blob\", outermost only, never the root)")
  func listBlobDetection() {
    let input = """
      {"a":{"\\u0040type":"blob","digest":"escaped-key"},"b":{"@type":"bl\\u006fb","digest":"escaped-value"},"c":{"@type":"Blob","digest":"no"},"d":{"@type":"blob ","digest":"no"},"e":{"@type":["blob"],"digest":"no"}}
      {"p":{"q":{"@type":"blob","digest":"inner"},"@type":"blob","digest":"outer"}}
      {"@type":"blob","digest":"root","_attachments":{"r":{"digest":"root"}}}
      {"_attachments":{"photo":{"@type":"blob","digest":"legacy"},"nested":{"in":{"@type":"blob","digest":"deep"}}},"body":{"_attachments":{"deep":{"@type":"blob","digest":"not-top-level"}}}}

      """
    let got = list(input).map { row -> String in
      let object = decoded(row)
      return
        "\(object["line"] as? Int ?? 0) \(object["kind"] as? String ?? "?") \(object["name"] as? String ?? "?") \(object["digest"] as? String ?? "null")"
    }
    #expect(
      got == [
        "1 blob $.a escaped-key", "1 blob $.b escaped-value",
        "2 blob $.p outer",
        "3 legacy r root",
        "4 legacy photo legacy", "4 legacy nested null",
        "4 blob $.body._attachments.deep not-top-level",
      ])
  }

  @Test("--list: id is the top-level _id string, or null")
  func listIdentifiers() {
    let input = """
      {"_id":"early","b":{"@type":"blob","digest":"1"}}
      {"b":{"@type":"blob","digest":"2"},"_id":"late"}
      {"_id":7,"b":{"@type":"blob","digest":"3"}}
      {"x":{"_id":"nested"},"b":{"@type":"blob","digest":"4"}}
      {"b":{"@type":"blob","digest":"5","_id":"in-blob"}}
      {"_id":"user::\\u00e9\\"q\\"","b":{"@type":"blob","digest":"6"}}

      """
    let ids = list(input).map { row -> String in
      let object = decoded(row)
      return object["id"] as? String ?? (object["id"] is NSNull ? "null" : "?")
    }
    #expect(ids == ["early", "late", "null", "null", "null", "user::é\"q\""])
  }

  @Test(
    "--list: line is where the document starts (blank lines, pretty-printing, CRLF, BOM, several per line)"
  )
  func listLines() {
    let blob = #"{"@type":"blob","digest":"d"}"#
    let input =
      "\u{FEFF}{\"_id\":\"one\",\"b\":\(blob)}\r\n"  // line 1, after a byte-order mark
      + "\r\n\n"  // lines 2, 3
      + "  {\"_id\":\"four\",\n    \"b\":\n  \(blob)\n  }\n"  // lines 4-7
      + "{\"_id\":\"eight\",\"b\":\(blob)} {\"_id\":\"eight-too\",\"b\":\(blob)}\n"  // line 8
      + "\n{\"_id\":\"ten\",\n\"b\":\(blob)}"  // lines 9-11, no final newline
    let got = list(input).map { row -> String in
      let object = decoded(row)
      return "\(object["id"] as? String ?? "?"):\(object["line"] as? Int ?? 0)"
    }
    #expect(got == ["one:1", "four:4", "eight:8", "eight-too:8", "ten:10"])
  }

  @Test("--list --format list: line of each element; rows are NDJSON, not an array")
  func listFormatList() {
    let input = """
      [
      {"_id":"a","b":{"@type":"blob","digest":"1"}},
        {"_id":"b",
         "_attachments":{"x":{"digest":"2"}}}
      ,{"_id":"c"},{"_id":"d","b":{"@type":"blob","digest":"3"}}]

      """
    #expect(
      list(input, framing: .list) == [
        #"{"id":"a","line":2,"kind":"blob","name":"$.b","pointer":"/b","digest":"1","length":null,"content_type":null}"#,
        #"{"id":"b","line":3,"kind":"legacy","name":"x","pointer":"/_attachments/x","digest":"2","length":null,"content_type":null}"#,
        #"{"id":"d","line":5,"kind":"blob","name":"$.b","pointer":"/b","digest":"3","length":null,"content_type":null}"#,
      ])
  }

  @Test("--list: pointer is RFC 6901 (~ as ~0, / as ~1), for blobs and legacy entries")
  func listPointerEscaping() {
    let input = """
      {"a/b":{"m~n":{"@type":"blob","digest":"1"}},"~1":[{"@type":"blob","digest":"2"}],"":{"@type":"blob","digest":"3"},"_attachments":{"x/y~z":{"digest":"4"},"~01":{"digest":"5"},"a\\/b\\u007e":{"digest":"6"},"":{"digest":"7"}}}

      """
    let pointers = list(input).map { decoded($0)["pointer"] as? String ?? "?" }
    #expect(
      pointers == [
        "/a~1b/m~0n", "/~01/0", "/", "/_attachments/x~1y~0z", "/_attachments/~001",
        "/_attachments/a~1b~0",
        "/_attachments/",
      ])
  }

  @Test(
    "--list: blob names are jsonpath names with \\ . [ escaped; legacy names are the decoded keys")
  func listNames() {
    let input = """
      {"a.b":{"@type":"blob","digest":"1"},"x[1]":{"@type":"blob","digest":"2"},"c:\\\\tmp":{"@type":"blob","digest":"3"},"q\\"t":{"@type":"blob","digest":"4"},"\\u00e9":[[{"@type":"blob","digest":"5"}]],"l\\nf":{"@type":"blob","digest":"6"},"a/b":{"@type":"blob","digest":"7"},"$.a":{"k.e[y\\\\":{"@type":"blob","digest":"8"}}}
      {"_attachments":{"$.photos.thumbnail":{"digest":"9"},"blob_/a~1b":{"digest":"10"},"a\\/b":{"digest":"11"},"\\u00e9.jpg":{"digest":"12"}}}

      """
    let names = list(input).map { decoded($0)["name"] as? String ?? "?" }
    #expect(
      names == [
        #"$.a\.b"#, #"$.x\[1]"#, #"$.c:\\tmp"#, #"$.q"t"#, "$.é[0][0]", "$.l\nf", "$.a/b",
        #"$.$\.a.k\.e\[y\\"#,
        "$.photos.thumbnail", "blob_/a~1b", "a/b", "é.jpg",
      ])
    // The exact text of a simple escaped name: a backslash is written as \\ in JSON.
    #expect(
      list(#"{"a.b":{"@type":"blob","digest":"1"}}"#).first?.contains(#""name":"$.a\\.b""#) == true)
  }

  @Test("--list on pushed documents: each blob and the entry that mirrors it")
  func listPushed() {
    let input = """
      {"_id":"p","photo":{"@type":"blob","digest":"sha1-x","length":3,"content_type":"image/png"},"_attachments":{"$.photo":{"digest":"sha1-x","length":3,"content_type":"image/png"}}}

      """
    #expect(
      list(input) == [
        #"{"id":"p","line":1,"kind":"blob","name":"$.photo","pointer":"/photo","digest":"sha1-x","length":3,"content_type":"image/png"}"#,
        #"{"id":"p","line":1,"kind":"legacy","name":"$.photo","pointer":"/_attachments/$.photo","digest":"sha1-x","length":3,"content_type":"image/png"}"#,
      ])
  }

  @Test("--list: writes no documents; documents without attachments give no row; counters")
  func listStatistics() {
    let input = """
      {"_id":"none"}
      {"_id":"two","a":{"@type":"blob","digest":"1"},"b":[{"@type":"blob"}]}
      {"_attachments":{"x":{"digest":"2"},"y":3}}
      {"_attachments":"not an object"}

      """
    let result = stream(input, .list)
    #expect(result.diagnostics.isEmpty)
    #expect(rows(result).count == 3)
    #expect(result.statistics.documents == 4)
    #expect(result.statistics.blobs == 2)
    #expect(result.statistics.rows == 3)
    #expect(result.statistics.entriesAdded == 0 && result.statistics.entriesRemoved == 0)
    #expect(result.statistics.warnings == 0 && result.statistics.errors == 0)
    #expect(result.statistics.bytesIn == input.utf8.count)
    #expect(result.statistics.bytesOut == result.output.count)
    #expect(result.rejects.isEmpty)
  }

  @Test("--list stops at the first bad document unless keepGoing")
  func listBadDocuments() {
    let input = """
      {"a":{"@type":"blob","digest":"1"}}
      [1]
      {"a":{"@type":"blob","digest":"2"}}

      """
    let stopped = stream(input, .list)
    #expect(stopped.outcome == .stopped)
    #expect(rows(stopped).map { decoded($0)["digest"] as? String } == ["1"])
    #expect(stopped.diagnostics.map(\.kind) == [.notAnObject])
    let kept = stream(input, .list, keepGoing: true)
    #expect(kept.outcome == .completed)
    #expect(rows(kept).map { decoded($0)["digest"] as? String } == ["1", "2"])
  }

  // MARK: --check findings

  @Test("--check: attachment-too-large, blob and legacy, over 20971520 bytes only")
  func checkTooLarge() {
    let input = """
      {"_id":"at-limit","v":{"@type":"blob","digest":"d","length":20971520},"_attachments":{"l":{"digest":"e","length":20971520}}}
      {"_id":"over","v/w":{"@type":"blob","digest":"d","length":20971521},"_attachments":{"x~y":{"digest":"e","length":2.5e7},"s":{"digest":"f","length":"99999999"},"n":{"digest":"g","length":20971520.0}}}
      {"_id":"nested","a":[{"b":{"@type":"blob","digest":"h","length":31457280}}],"_attachments":{"blob":{"@type":"blob","digest":"i","length":22020096}}}
      {"_id":"exact","_attachments":{"a":{"digest":"j","length":20971520.0000000001},"b":{"digest":"k","length":2.0971520e7}}}

      """
    #expect(
      check(input, only: ["attachment-too-large"]) == [
        Finding("over", 2, "attachment-too-large", "/v~1w"),
        Finding("over", 2, "attachment-too-large", "/_attachments/x~0y"),
        Finding("nested", 3, "attachment-too-large", "/a/0/b"),
        Finding("nested", 3, "attachment-too-large", "/_attachments/blob"),
        // Read exactly: a Double makes the first 20971520.
        Finding("exact", 4, "attachment-too-large", "/_attachments/a"),
      ])
  }

  @Test("--check: metadata-too-large when the _attachments push would make is over 1048576 bytes")
  func checkMetadataTooLarge() {
    let atLimit = documentWithMetadata(id: "at-limit", target: 1_048_576)
    let over = documentWithMetadata(id: "over", target: 1_048_577)
    #expect(atLimit.attachments.utf8.count == 1_048_576 && over.attachments.utf8.count == 1_048_577)
    // The model agrees with push itself (only the size matters to --check).
    #expect(
      (try? CBLAttachments.push(Array(over.document.utf8))).map {
        String(decoding: $0, as: UTF8.self)
      }
        == String(over.document.dropLast()) + ",\"_attachments\":" + over.attachments + "}")
    let input = atLimit.document + "\n" + over.document + "\n"
    // (Its made-up digests are not all canonical base64: only the size is looked at here.)
    #expect(
      check(input, only: ["metadata-too-large"])
        == [Finding("over", 2, "metadata-too-large", "/_attachments")])
  }

  @Test(
    "--check: metadata counts the legacy entries push keeps, as compact JSON, not the ones it replaces"
  )
  func checkMetadataCountsKeptEntries() {
    let kept = #""keep.txt":{"digest":"k","length":1}"#
    let pretty = "{ \"keep.txt\" : {\n \"digest\" : \"k\" ,\n \"length\" : 1 } }"
    // At the limit with a pretty-printed legacy entry (measured compact): no finding.
    let atLimit = documentWithMetadata(
      id: "pretty-at-limit", target: 1_048_576, legacyInput: pretty, legacyCompactMembers: kept)
    // One byte more: a finding.
    let over = documentWithMetadata(
      id: "over", target: 1_048_577, legacyInput: "{" + kept + "}", legacyCompactMembers: kept)
    // A document already pushed: its synthesized entries are replaced, not counted twice.
    let pushedOnce = documentWithMetadata(id: "pushed", target: 1_048_576)
    let pushedDocument =
      String(pushedOnce.document.dropLast()) + ",\"_attachments\":" + pushedOnce.attachments + "}"
    let input = atLimit.document + "\n" + over.document + "\n" + pushedDocument + "\n"
    // The pretty-printed document spans lines 1-3.
    #expect(
      check(input, only: ["metadata-too-large"]) == [
        Finding("over", 4, "metadata-too-large", "/_attachments")
      ])
  }

  @Test("--check: blob-without-digest (absent, or not a string), at the blob's pointer")
  func checkBlobWithoutDigest() {
    let input = """
      {"_id":"nod","a":[{"@type":"blob","length":1},{"@type":"blob","digest":42}],"b~/":{"@type":"blob","digest":null},"ok":{"@type":"blob","digest":""}}

      """
    #expect(
      check(input) == [
        Finding("nod", 1, "blob-without-digest", "/a/0"),
        Finding("nod", 1, "blob-without-digest", "/a/1"),
        Finding("nod", 1, "blob-without-digest", "/b~0~1"),
      ])
  }

  @Test("--check: attachments-not-object, with or without blobs, whatever the type")
  func checkAttachmentsNotObject() {
    let input = """
      {"_id":"string","_attachments":"x","b":{"@type":"blob","digest":"d"}}
      {"_id":"null","_attachments":null}
      {"_id":"array","_attachments":[{"digest":"d"}]}
      {"_id":"number","_attachments":1}
      {"_id":"bool","_attachments":true}
      {"_id":"object","_attachments":{}}

      """
    #expect(
      check(input) == [
        Finding("string", 1, "attachments-not-object", "/_attachments"),
        Finding("null", 2, "attachments-not-object", "/_attachments"),
        Finding("array", 3, "attachments-not-object", "/_attachments"),
        Finding("number", 4, "attachments-not-object", "/_attachments"),
        Finding("bool", 5, "attachments-not-object", "/_attachments"),
      ])
  }

  @Test("--check: duplicate-attachments")
  func checkDuplicateAttachments() {
    let input = """
      {"_id":"dup","_attachments":{"a":{"digest":"1"}},"x":1,"_attachments":{"b":{"digest":"2"}}}
      {"_id":"nested-is-fine","_attachments":{},"y":{"_attachments":{}}}

      """
    #expect(
      check(input, only: ["duplicate-attachments"]) == [
        Finding("dup", 1, "duplicate-attachments", "/_attachments")
      ])
  }

  @Test("--check: not-an-object for every non-object document; id null, pointer the root")
  func checkNotAnObject() {
    let input = """
      [1,2]
      "str"
      42
      true
      null
      {"_id":"fine"}

      """
    #expect(
      check(input) == [
        Finding(nil, 1, "not-an-object", ""), Finding(nil, 2, "not-an-object", ""),
        Finding(nil, 3, "not-an-object", ""), Finding(nil, 4, "not-an-object", ""),
        Finding(nil, 5, "not-an-object", ""),
      ])
  }

  @Test("--check: malformed-json, with the _id when it is known, and the rest is still checked")
  func checkMalformed() {
    let input = """
      {"_id":"mal","a":tru}
      {"_id":"after","b":{"@type":"blob"}}
      {"no-id":
      {"_id":"cut","a":
      {"_id":"later","c":{"@type":"blob"}}
      {"_id":"truncated-at-end","a":[

      """
    #expect(
      check(input) == [
        Finding("mal", 1, "malformed-json", ""),
        Finding("after", 2, "blob-without-digest", "/b"),
        Finding(nil, 3, "malformed-json", ""),
        Finding("cut", 4, "malformed-json", ""),
        Finding("later", 5, "blob-without-digest", "/c"),
        Finding("truncated-at-end", 6, "malformed-json", ""),
      ])
  }

  @Test("--check: two truncated records in a row cost only their own lines (resume rule)")
  func checkTwoTruncatedRecords() {
    // shared_decisions.md: after malformed JSON, processing resumes at the first line after the
    // bad document's first line that starts with `{`. Line 2 is a document of its own (cut
    // short), and so is line 3.
    let input = "{\"a\":\n{\"b\":\n{\"_id\":\"ok\",\"p\":{\"@type\":\"blob\"}}\n"
    let result = stream(input, .check)
    #expect(
      findings(result) == [
        Finding(nil, 1, "malformed-json", ""),
        Finding(nil, 2, "malformed-json", ""),
        Finding("ok", 3, "blob-without-digest", "/p"),
      ])
    #expect(result.statistics.documents == 3)
  }

  @Test("--check: every problem of a document, and of the whole input, is reported; counters")
  func checkEverything() {
    let input = """
      {"_id":"ok","a":{"@type":"blob","digest":"1","length":5}}
      {"_id":"many","_rev":"1-a","a":{"@type":"blob","length":20971521},"b":{"@type":"blob","digest":"2","length":30000000},"_attachments":{"big":{"digest":"3","length":99999999,"stub":true,"revpos":1}}}
      [1]
      {"_id":"dup","_attachments":{},"_attachments":{}}
      {"_id":"bad",
      {"_id":"last","_attachments":"s"}

      """
    let result = stream(input, .check)
    #expect(result.outcome == .completed)
    let got = findings(result)
    // Within a document the order of findings is not specified: compare as a set there.
    let many = got.filter { $0.id == "many" }
    #expect(
      Set(many.map(\.description)) == [
        Finding("many", 2, "blob-without-digest", "/a").description,
        Finding("many", 2, "attachment-too-large", "/a").description,
        Finding("many", 2, "attachment-too-large", "/b").description,
        Finding("many", 2, "attachment-too-large", "/_attachments/big").description,
      ])
    #expect(many.count == 4)
    #expect(
      got.filter { $0.id != "many" } == [
        Finding(nil, 3, "not-an-object", ""),
        Finding("dup", 4, "duplicate-attachments", "/_attachments"),
        Finding("bad", 5, "malformed-json", ""),
        Finding("last", 6, "attachments-not-object", "/_attachments"),
      ])
    #expect(got.prefix(4).allSatisfy { $0.id == "many" }, "findings in input order")
    #expect(result.statistics.documents == 6)
    #expect(result.statistics.rows == 8)
    #expect(result.statistics.errors == 5, "documents with a finding")
    #expect(result.statistics.bytesOut == result.output.count)
  }

  @Test("--check: document-too-large measures what push sends, over 20971520 bytes of JSON")
  func checkDocumentTooLarge() {
    let limit = 20 * 1024 * 1024
    /// `{"_id":"ID","s":"xxx…"REST}` padded to exactly `size` bytes.
    func document(_ id: String, size: Int, rest: String = "") -> String {
      let frame = #"{"_id":"\#(id)","s":""\#(rest)}"#
      return #"{"_id":"\#(id)","s":""#
        + String(repeating: "x", count: size - frame.utf8.count) + "\"" + rest + "}"
    }
    let blob = #","b":{"@type":"blob","digest":"sha1-B","length":1}"#
    let entry = #","_attachments":{"$.b":{"digest":"sha1-B","length":1}}"#
    let input =
      [
        document("at-limit", size: limit),
        document("over", size: limit + 1),
        // Under the limit as given; push adds its entry, and that is over.
        document("pushed-over", size: limit - entry.utf8.count + 1, rest: blob),
        document("pushed-at-limit", size: limit - entry.utf8.count, rest: blob),
      ].joined(separator: "\n") + "\n"
    #expect(
      check(input, only: ["document-too-large"]) == [
        Finding("over", 2, "document-too-large", ""),
        Finding("pushed-over", 3, "document-too-large", ""),
      ])
    let rows = stream(input, .check).output
    let detail = String(decoding: rows, as: UTF8.self).split(separator: "\n").first {
      $0.contains(#""problem":"document-too-large""#)
    }.map(String.init)
    #expect(
      detail?.contains(
        "the document push sends is 20971521 bytes of JSON; Sync Gateway and Couchbase Server"
          + " accept at most 20971520 bytes (20 MiB)\"") == true,
      "\(detail ?? "")")
  }

  @Test("--check: a clean input gives no finding")
  func checkClean() {
    let input = """
      {"_id":"a","_rev":"3-a","p":{"@type":"blob","digest":"1","length":20971520},"_attachments":{"x":{"digest":"2","length":0,"stub":true,"revpos":3},"y":{"data":""}}}
      {"_id":"b"}

      """
    let result = stream(input, .check)
    #expect(result.output.isEmpty)
    #expect(result.outcome == .completed)
    #expect(
      result.statistics.documents == 2 && result.statistics.rows == 0
        && result.statistics.errors == 0)
  }

  @Test("--check --format list: findings per element, with the element's line")
  func checkFormatList() {
    let input = """
      [
        {"_id":"a","_attachments":1},
        [],
        {"_id":"b","p":{"@type":"blob"}}
      ]

      """
    #expect(
      check(input, framing: .list) == [
        Finding("a", 2, "attachments-not-object", "/_attachments"),
        Finding(nil, 3, "not-an-object", ""),
        Finding("b", 4, "blob-without-digest", "/p"),
      ])
  }

  // MARK: Chunking

  @Test(
    "--list and --check give the same rows at every chunk size",
    arguments: [ConversionMode.list, ConversionMode.check])
  func chunkSizes(mode: ConversionMode) {
    let input = """
      {"_id":"a","first":{"@type":"blob","digest":"sha1-A","length":10,"content_type":"image/png"},"_attachments":{"old.txt":{"digest":"sha1-L","length":25000000}}}
        {"_id" : "pretty",
         "b/~" : [ { "@type" : "blob" , "length" : 3e7 } ] }
      [1]
      {"_id":"mal","x":
      {"_id":"dup","_attachments":{"k":{"digest":"1"}},"_attachments":{}}
      {"\\u0040type":"blob","_id":"\\u00e9","a.b":{"\\u0040type":"blob","digest":"\\u0041"}}
      """
    let whole = stream(input, mode, keepGoing: true)
    #expect(!whole.output.isEmpty)
    for size in [1, 2, 3, 5, 7, 13, 64] {
      let piecewise = stream(input, mode, keepGoing: true, chunkSize: size)
      #expect(piecewise.output == whole.output, "chunk size \(size)")
      #expect(piecewise.statistics == whole.statistics, "chunk size \(size)")
    }
  }
}

#endif
