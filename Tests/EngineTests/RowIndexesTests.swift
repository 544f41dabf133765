// Unit tests reach internal types through @testable, which only debug builds allow; the release
// run of `make test` covers the build that ships with ConformanceTests and CLITests.
#if DEBUG

import Testing

@testable import LegacyAttachments

@Suite("Row indexes: a batch's rows count an envelope's elements from the envelope's start")
struct RowIndexesTests {
  private let prefix = Array(#""path":".results["#.utf8)

  @Test("the index after the path's prefix gets the elements before; marks after it move")
  func correctsIndexesAndMarks() {
    let rows = [
      #"{"id":"a","path":".results[0].doc","line":2}"#,
      #"{"id":"b","path":".results[9].doc","line":3}"#,
      #"{"id":"c\"path\":\".results[1","path":".results[10].doc","line":4}"#,
    ]
    var result = BatchResult()
    result.output = BatchOutput(Array(rows.map { $0 + "\n" }.joined().utf8))
    let starts = rows.indices.map { index in rows[..<index].map { $0.utf8.count + 1 }.reduce(0, +) }
    // A mark at each row's start, and one at the end.
    result.marks = (starts + [result.output.count]).map {
      ResultMark(output: $0, rejects: 0, diagnostics: 0)
    }
    // Only the first two rows count from the batch's start (the envelope closed after them).
    result.addToRowIndexes(95, after: prefix, before: starts[2])
    let expected = [
      #"{"id":"a","path":".results[95].doc","line":2}"#,
      #"{"id":"b","path":".results[104].doc","line":3}"#,
      rows[2],
    ]
    #expect(
      String(decoding: result.output.bytes, as: UTF8.self) == expected.map { $0 + "\n" }.joined())
    // "0" became "95" (one byte more), "9" became "104" (two more).
    #expect(result.marks.map(\.output) == [0, starts[1] + 1, starts[2] + 3, result.output.count])
  }

  @Test("an escaped look-alike inside a string is not a path")
  func escapedLookAlike() {
    var result = BatchResult()
    let row = #"{"id":"x\"path\":\".results[3","path":".results[3].doc"}"# + "\n"
    result.output = BatchOutput(Array(row.utf8))
    result.addToRowIndexes(1, after: prefix, before: result.output.count)
    #expect(
      String(decoding: result.output.bytes, as: UTF8.self)
        == #"{"id":"x\"path\":\".results[3","path":".results[4].doc"}"# + "\n")
  }
}

#endif
