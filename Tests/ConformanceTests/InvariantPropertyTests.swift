import Foundation
@_spi(Testing) import LegacyAttachments
import TestSupport
import Testing

// SPEC.md, "Nothing lost — the invariant", as a property: on random streams a few megabytes long,
// mixing good documents (compact and pretty-printed) with malformed, truncated, non-object,
// duplicate-`_attachments` and invalid-UTF-8 ones, in `lines` and `list` framing, output plus
// rejects account for every input document, in input order, at -j 1, 2 and 4, with the engine's
// buffers at their usual sizes and at 16 bytes; and every message is the same however the work
// was split. What each document becomes is the reference model's (Model/ReferenceModel.swift)
// verdict on that document alone.

/// `text` without its trailing whitespace, as a rejected text is saved.
private func trimmed(_ text: [UInt8]) -> [UInt8] {
  var text = text
  while let last = text.last, [0x0A, 0x0D, 0x20, 0x09].contains(last) { text.removeLast() }
  return text
}

/// One document of a generated stream, with what must become of it.
private struct Piece {
  var text: [UInt8]
  /// What the output must hold for it, or nil when it must be rejected.
  var converted: [UInt8]?
  /// Whether its text spans more than one line.
  var pretty: Bool
}

/// A generated stream and what converting it must give.
private struct Stream {
  var input: [UInt8] = []
  var output: [UInt8] = []
  var rejects: [UInt8] = []
  var documents = 0
  var rejected = 0
  /// Where each rejected text lies in the input, in order: its first byte, and its end (after
  /// its last non-space byte), or nil when it runs to the end of the input.
  var rejectedRanges: [(start: Int, end: Int?)] = []
  /// The suffix every error must end with without --rejects, in order (``suffixes()``).
  var restNotConverted = false

  /// `1:1`-style line and column of each of `offsets` (ascending) of the input, in one pass
  /// (columns count characters).
  func positions(_ offsets: [Int]) -> [String] {
    var result: [String] = []
    var line = 1
    var column = 1
    var index = 0
    for offset in offsets {
      while index < offset {
        if input[index] == 0x0A {
          line += 1
          column = 1
        } else if input[index] & 0xC0 != 0x80 {
          column += 1
        }
        index += 1
      }
      result.append("\(line):\(column)")
    }
    return result
  }

  /// Where the character that ends just before `end` starts.
  func lastCharacter(before end: Int) -> Int {
    var start = end - 1
    while start > 0 && input[start] & 0xC0 == 0x80 { start -= 1 }
    return start
  }

  /// What each error must end with when nothing is saved: the extent of what it skipped.
  func suffixes() -> [String] {
    let places = positions(
      rejectedRanges.flatMap { [$0.start, $0.end.map(lastCharacter(before:)) ?? $0.start] })
    return rejectedRanges.enumerated().map { index, range in
      let start = places[2 * index]
      guard range.end != nil else { return " (skipped \(start) to end of input)" }
      let last = places[2 * index + 1]
      if restNotConverted && index == rejectedRanges.count - 1 {
        return "; the rest of the input (\(start) to \(last)) is not converted"
      }
      return " (skipped \(start) to \(last))"
    }
  }

  /// Records a rejected text of the input from `start` to `end` (nil: to the end of the input).
  mutating func reject(from start: Int, to end: Int?) {
    let stop = end ?? input.count
    var contentEnd = stop
    while contentEnd > start, [0x0A, 0x0D, 0x20, 0x09].contains(input[contentEnd - 1]) {
      contentEnd -= 1
    }
    rejects += input[start..<contentEnd] + [0x0A]
    rejected += 1
    rejectedRanges.append((start, end == nil ? nil : contentEnd))
  }
}

/// Lines that follow a malformed document and are skipped with it: none starts with `{`, and
/// each starts with something JSON never has there, so none can complete the document.
private let junkLines = ["@junk", "# a comment of sorts", "x y z", "?", "% 12,", "=}"].map {
  Array($0.utf8)
}

@Suite("Nothing lost: output plus rejects account for every document, whatever the split")
struct InvariantPropertyTests {
  static let targetBytes = 1_500_000

  /// A random piece for `operation`: usually a good document (a third pretty-printed), else a
  /// malformed one (compact, on its own line). `startsObject`: the piece must begin with `{`.
  private static func piece(
    _ generator: inout DocumentGenerator, _ random: inout SplitMix64,
    operation: DifferentialTests.Operation, startsObject: Bool
  ) -> Piece {
    while true {
      let tree = generator.documentTree()
      let compact = tree.serialized()
      let malformed = random.percent(12)
      let pretty = !malformed && random.percent(33)
      var text = compact
      if malformed {
        text = generator.corrupt(compact)
      } else if pretty {
        // Continuation lines are indented: only a document's first line starts with `{`.
        text = tree.serialized {
          random.pick([[], [0x20], [0x0A, 0x20, 0x20], [0x0D, 0x0A, 0x09]])
        }
      }
      if startsObject && text.first != UInt8(ascii: "{") { continue }
      let model = ReferenceModel.Document(text)
      if case .failure(.moreThanOneValue) = model.members { continue }
      if malformed, case .success = model.members { continue }
      let converted: [UInt8]?
      switch operation.model(ReferenceModel.Document(compact)) {
      case .converted(let bytes, _): converted = malformed ? nil : bytes
      case .rejected: converted = nil
      }
      return Piece(text: text, converted: converted, pretty: pretty)
    }
  }

  /// A `lines` stream: pieces one after another, each on lines of its own. A malformed piece may
  /// be followed by junk lines, skipped with it, then by a piece that starts with `{`, where
  /// conversion resumes. The stream may end inside such a skip, or inside a document.
  private static func linesStream(seed: UInt64, operation: DifferentialTests.Operation) -> Stream {
    var generator = DocumentGenerator(seed: seed)
    var random = SplitMix64(seed: seed ^ 0xF00D)
    var stream = Stream()
    var afterMalformed = false
    var skipStart = 0
    while stream.input.count < targetBytes || afterMalformed {
      let piece = piece(&generator, &random, operation: operation, startsObject: afterMalformed)
      if afterMalformed { stream.reject(from: skipStart, to: stream.input.count) }
      let start = stream.input.count
      stream.input += piece.text + (random.percent(10) ? [0x0D, 0x0A] : [0x0A])
      if random.percent(5) { stream.input += [0x0A] }
      stream.documents += 1
      afterMalformed = piece.converted == nil && ReferenceModel.Document(piece.text).isMalformed
      if let converted = piece.converted {
        stream.output += converted + [0x0A]
      } else if afterMalformed {
        // Saved once its end is known: with the junk after it, up to the next piece.
        skipStart = start
        for _ in 0..<(random.percent(30) ? random.below(3) + 1 : 0) {
          stream.input += random.pick(junkLines) + [0x0A]
        }
      } else {
        stream.reject(from: start, to: stream.input.count)
      }
    }
    // The end: inside the skip of a malformed document (with junk after it), or inside a
    // document cut short.
    let last = generator.document()
    let start = stream.input.count
    stream.input += last.prefix(min(9, last.count - 1))
    if random.percent(50) { stream.input += [0x0A] + random.pick(junkLines) }
    stream.documents += 1
    stream.reject(from: start, to: nil)
    return stream
  }

  /// A `list` stream: one array of pieces. Well-formed bad elements are rejected one by one; a
  /// malformed one (sometimes, once) breaks the array: it and everything after it go to the
  /// rejects.
  private static func listStream(seed: UInt64, operation: DifferentialTests.Operation) -> Stream {
    var generator = DocumentGenerator(seed: seed)
    var random = SplitMix64(seed: seed ^ 0xBEEF)
    var stream = Stream()
    var converted: [[UInt8]] = []
    var elements = 0
    /// Where the malformed element that breaks the array starts, once there is one.
    var restStart: Int? = nil
    stream.input = Array("[\n".utf8)
    while stream.input.count < targetBytes {
      let piece = piece(&generator, &random, operation: operation, startsObject: false)
      if elements > 0 { stream.input += Array(",\n".utf8) }
      elements += 1
      let start = stream.input.count
      stream.input += piece.text
      guard restStart == nil else { continue }
      stream.documents += 1
      if let bytes = piece.converted {
        converted.append(bytes)
      } else if ReferenceModel.Document(piece.text).isMalformed {
        // The array breaks here, half-way: everything from here on is the rest.
        if stream.input.count < targetBytes / 2 {
          stream.input.removeLast(stream.input.count - start)
          stream.input += Array("{}".utf8)
          converted.append(Array("{}".utf8))
          continue
        }
        restStart = start
      } else {
        stream.reject(from: start, to: stream.input.count)
      }
    }
    stream.input += Array("\n]\n".utf8)
    if let restStart {
      stream.reject(from: restStart, to: stream.input.count)
      stream.restNotConverted = true
    }
    stream.output =
      converted.isEmpty
      ? Array("[\n]\n".utf8)
      : Array("[\n".utf8) + Array(converted.joined(separator: Array(",\n".utf8)))
        + Array("\n]\n".utf8)
    return stream
  }

  static let operations: [DifferentialTests.Operation] = [.pushJSONPath, .pull]

  /// A fixed seed per operation and framing.
  private static func seed(_ operation: DifferentialTests.Operation, _ framing: InputFraming)
    -> UInt64
  {
    (operation == .pull ? 0x9A11 : 0x9054) &+ (framing == .list ? 0x1157 : 0x11AE5)
  }

  @Test("lines framing", arguments: operations)
  func lines(operation: DifferentialTests.Operation) throws {
    let stream = Self.linesStream(seed: Self.seed(operation, .lines), operation: operation)
    try check(stream, operation, framing: .lines)
  }

  @Test("list framing", arguments: operations)
  func list(operation: DifferentialTests.Operation) throws {
    let stream = Self.listStream(seed: Self.seed(operation, .list), operation: operation)
    try check(stream, operation, framing: .list)
  }

  private func check(
    _ stream: Stream, _ operation: DifferentialTests.Operation, framing: InputFraming
  ) throws {
    #expect(stream.input.count >= Self.targetBytes, "a stream of megabytes")
    #expect(stream.rejected > 10 && stream.documents - stream.rejected > 1000, "both kinds")
    var options = operation.options
    options.framing = framing
    options.keepGoing = true
    var reference: Outcome? = nil
    for jobs in [1, 2, 4] {
      for tiny in [false, true] {
        let result = try convertFile(
          stream.input, options: options, jobs: jobs, batchBytes: 1 << 16, tinyBuffers: tiny,
          readSize: tiny ? 4093 : 1 << 18)
        let how = "\(operation) \(framing) -j \(jobs)\(tiny ? ", 16-byte buffers" : "")"
        let sameOutput = result.output == stream.output
        #expect(sameOutput, "\(how): output \(difference(result.output, stream.output))")
        let sameRejects = result.rejects == stream.rejects
        #expect(sameRejects, "\(how): rejects \(difference(result.rejects, stream.rejects))")
        #expect(result.documents == stream.documents, "\(how): documents")
        if let reference {
          #expect(result.diagnostics == reference.diagnostics, "\(how): diagnostics")
          #expect(result.outcome == reference.outcome, "\(how): outcome")
        } else {
          reference = result
          #expect(result.diagnostics.filter { $0.contains(": error: ") }.count == stream.rejected)
        }
      }
    }
    // Without --rejects nothing is saved, and every error says what it skipped.
    for jobs in [1, 2] {
      let result = try convertFile(
        stream.input, options: options, jobs: jobs, batchBytes: 1 << 16, tinyBuffers: true,
        keepsRejects: false)
      #expect(result.output == stream.output, "-j \(jobs) without rejects: output")
      #expect(result.rejects.isEmpty)
      let errors = result.diagnostics.filter { $0.contains(": error: ") }
      #expect(errors.count == stream.rejected)
      let said = errors.allSatisfy {
        $0.contains(" (skipped ") || $0.contains(" is not converted")
      }
      #expect(said, "every error says what was skipped")
      // ...exactly: from the first to the last character of what the rejects would hold.
      let expected = stream.suffixes()
      let mismatch = zip(errors, expected).first { !$0.hasSuffix($1) }
      #expect(
        mismatch == nil, "-j \(jobs): \(mismatch.map { "\($0.0)\n  should end: \($0.1)" } ?? "")")
      // What was skipped is what the rejects file would hold, less the newlines it adds.
      #expect(result.skipped == stream.rejects.count - stream.rejected)
    }
  }
}

extension ReferenceModel.Document {
  /// Whether the document is not JSON at all.
  fileprivate var isMalformed: Bool {
    if case .failure(.malformedJSON) = members { return true }
    return false
  }
}
