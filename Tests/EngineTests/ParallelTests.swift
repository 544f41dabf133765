// Unit tests reach internal types through @testable, which only debug builds allow; the release
// run of `make test` covers the build that ships with ConformanceTests and CLITests.
#if DEBUG

import Foundation
import Glibc
import Testing
import TestSupport

@_spi(Testing) @testable import LegacyAttachments

// `--jobs N` must change nothing but speed: the same stdout, stderr (diagnostics with the same
// lines and columns), rejects and counts as one thread, for any input. Batches are made tiny
// here so that documents are cut at every possible place and carried into the next batch.

/// Converts `input` (as a file, so the parallel reader sees a real descriptor) with `jobs` threads.
private func run(
  _ input: [UInt8], options: ConversionOptions, jobs: Int, batchBytes: Int = 1 << 20
) throws -> Outcome {
  try convertFile(input, options: options, jobs: jobs, batchBytes: batchBytes)
}

/// A deterministic NDJSON stream of `count` documents, some with blobs, some with legacy
/// attachments, every `badEvery`-th one bad in a rotating way (0: none bad).
private func stream(count: Int, badEvery: Int = 0, pretty: Bool = false) -> [UInt8] {
  var text = ""
  for index in 0..<count {
    if badEvery > 0 && index % badEvery == badEvery - 1 {
      switch (index / badEvery) % 5 {
      case 0: text += "{\"_id\":\"bad\(index)\",\"a\":\n"  // cut short at the end of its line
      case 1: text += "[\(index)]\n"  // not an object
      case 2: text += "{\"_attachments\":{},\"_attachments\":{}}\n"  // duplicate
      case 3: text += "{\"_id\":\"bad\(index)\" \"x\"}\n"  // missing colon
      default: text += "garbage \(index)\n"
      }
      continue
    }
    var document = "{\"_id\":\"doc\(index)\",\"n\":\(index).50"
    if index % 3 == 0 {
      document +=
        ",\"photo\":{\"@type\":\"blob\",\"digest\":\"sha1-\(index)\",\"length\":\(index * 7)}"
    }
    if index % 4 == 1 {
      document +=
        ",\"_attachments\":{\"old\(index).jpg\":{\"digest\":\"sha1-old\(index)\",\"stub\":true}}"
    }
    if index % 5 == 2 {
      document += ",\"list\":[{\"@type\":\"blob\",\"digest\":\"sha1-l\(index)\"},\"\\u00e9\"]"
    }
    document += "}"
    if pretty {
      // One member per line, nested objects indented; the document starts with `{` alone.
      document = document.replacingOccurrences(of: "{\"_id\"", with: "{\n  \"_id\"")
        .replacingOccurrences(of: ",\"", with: ",\n  \"")
      document = String(document.dropLast()) + "\n}"
    }
    text += document + "\n"
  }
  return Array(text.utf8)
}

/// A continuous `_changes` feed of `count` rows, one per line, in rotating shapes: plain rows,
/// rows whose inner lines start with `{` (so that batches are cut inside a row), a row holding two
/// documents (a duplicate key) the first of which ends before such a cut, rejected rows (one of
/// them cut), removed rows, a truncated record, and rows without a document.
private func feed(count: Int) -> [UInt8] {
  var text = ""
  for index in 0..<count {
    let blob = #"{"@type":"blob","digest":"sha1-\#(index)","length":\#(index)}"#
    switch index % 8 {
    case 0:
      text +=
        #"{"seq":\#(index),"id":"a","changes":[{"rev":"1-a"}],"doc":{"_id":"\#(index)","p":\#(blob)}}"#
    case 1:
      text += "{\"seq\":\(index),\"doc\":\n{\"_id\":\"\(index)\",\"x\":[\n\(blob)\n]},\"n\":1}"
    case 2:
      text +=
        "{\"seq\":\(index),\"doc\":{\"_id\":\"\(index)\",\"b\":\(blob)},\"doc\":\n{\"_id\":\"two\"}}"
    case 3: text += #"{"seq":\#(index),"doc":{"_attachments":{},"_attachments":{}}}"#
    case 4: text += #"{"seq":\#(index),"id":"r","removed":["ch"]}"#
    case 5: text += #"{"seq":\#(index),"doc":{"_id":"cut short""#
    case 6: text += #"{"seq":\#(index),"doc":null}"#
    default:
      text +=
        "{\"seq\":\(index),\"doc\":\n{\"_id\":\"\(index)\",\"_attachments\":{},\"_attachments\":{}}}"
    }
    text += "\n"
  }
  return Array((text + #"{"last_seq":"\#(count)"}"# + "\n").utf8)
}

/// One response body that spans lines, its rows one per line, as Sync Gateway writes them (each
/// row's line starts with the comma before it) or as CouchDB does (each line ends with the comma
/// after it), with rows of every shape a server sends and some it does not: documents with blobs
/// and with legacy attachments, a deleted document, a removed row, `"doc":null`, a rejected row,
/// a document that is not an object, a scalar row, escapes and a big number in the envelope.
private func spanningBody(rows: Int, couchDB: Bool, seed: Int, malformedAt: Int? = nil) -> String {
  var lines: [String] = []
  for index in 0..<rows {
    let blob = #"{"@type":"blob","digest":"sha1-\#(index)","length":\#(index)}"#
    let row: String
    switch (index + seed) % 9 {
    case 0: row = #"{"seq":\#(index),"id":"a\"\u00e9","doc":{"_id":"\#(index)","p":\#(blob)}}"#
    case 1:
      row =
        #"{"seq":\#(index),"doc":{"_id":"\#(index)","_attachments":{"old":{"digest":"sha1-o","stub":true}}},"changes":[{"rev":"1-a"}]}"#
    case 2: row = #"{"seq":\#(index),"id":"d","deleted":true,"doc":{"_id":"d","_deleted":true}}"#
    case 3: row = #"{"seq":\#(index),"id":"r","removed":["ch"],"changes":[]}"#
    case 4: row = #"{"seq":12345678901234567890123,"doc":null}"#
    case 5: row = #"{"seq":\#(index),"doc":{"_attachments":{},"_attachments":{}}}"#
    case 6: row = #"{"seq":\#(index),"doc":[\#(index)]}"#
    case 7: row = #""scalar \#(index)""#
    default: row = #"{"doc":{"_id":"\#(index)","l":[\#(blob),\#(blob)]},"n":1}"#
    }
    lines.append(index == malformedAt ? #"{"seq":\#(index),"doc":{"_id":"x" "y"}}"# : row)
  }
  if couchDB {
    return "{\"total_rows\":\(rows),\"offset\":0,\"rows\":[\r\n"
      + lines.joined(separator: ",\r\n") + "\r\n]}\n"
  }
  return "{\"results\":[\n" + lines.joined(separator: "\n,") + "\n],\n\"last_seq\":\"\(rows)\"}\n"
}

/// Expects `inputs` converted with 2 and 3 jobs at each of `batchSizes` (and with 16-byte
/// buffers) to give `single`, the one-thread result, with the same located diagnostics, and
/// some batches to have started between the elements of an envelope or list (it was spread).
private func expectSameAsOneThread(
  _ single: Outcome, _ inputs: [[UInt8]], options: ConversionOptions, batchSizes: [Int],
  _ label: String
) throws {
  var spread = 0
  for batchBytes in batchSizes {
    for jobs in [2, 3] {
      let parallel = try convertFiles(
        inputs, options: options, jobs: jobs, batchBytes: batchBytes,
        batchesStartedBetweenElements: { spread += $0 })
      #expect(parallel == single, "\(label) jobs \(jobs) batch \(batchBytes)")
      #expect(parallel.located == single.located, "\(label) jobs \(jobs) batch \(batchBytes)")
    }
  }
  let tiny = try convertFiles(inputs, options: options, jobs: 2, batchBytes: 50, tinyBuffers: true)
  #expect(tiny == single, "\(label) 16-byte buffers")
  #expect(spread > 0, "\(label): \(spread)")
}

/// A loopback TCP connection whose peer sent `bytes` and then reset it: reading it gives the
/// bytes, then ECONNRESET, a read error in the middle of an input.
private func resetConnection(after bytes: [UInt8]) -> Int32 {
  let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
  var address = sockaddr_in()
  address.sin_family = sa_family_t(AF_INET)
  address.sin_addr.s_addr = inet_addr("127.0.0.1")
  var length = socklen_t(MemoryLayout<sockaddr_in>.size)
  let bound = withUnsafeMutablePointer(to: &address) {
    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
      bind(server, pointer, length) == 0 && listen(server, 1) == 0
        && getsockname(server, pointer, &length) == 0
    }
  }
  precondition(bound, "a loopback listener")
  let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
  let connected = withUnsafeMutablePointer(to: &address) {
    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(client, $0, length) == 0 }
  }
  precondition(connected, "connected to the loopback listener")
  let peer = accept(server, nil, nil)
  close(server)
  var sent = 0
  while sent < bytes.count {
    let count = bytes.withUnsafeBytes { write(peer, $0.baseAddress! + sent, bytes.count - sent) }
    precondition(count > 0, "written to the loopback connection")
    sent += count
  }
  // Closing with a zero linger time resets the connection; the reset arrives after the bytes.
  var reset = linger(l_onoff: 1, l_linger: 0)
  setsockopt(peer, SOL_SOCKET, SO_LINGER, &reset, socklen_t(MemoryLayout<linger>.size))
  close(peer)
  // Wait for the reset to arrive (a guard of 10 minutes against a hang, not a speed test).
  var event = pollfd(fd: client, events: 0, revents: 0)
  _ = poll(&event, 1, 600_000)
  return client
}

@Suite("Parallel conversion (--jobs)")
struct ParallelTests {
  @Test(
    "a read error in the middle of an input (a reset connection): what was read before it is converted, as with one thread"
  )
  func readErrorInTheMiddle() throws {
    try readErrorInTheMiddle(
      stream(count: 200, badEvery: 17), options: ConversionOptions(mode: .push, keepGoing: true))
    // An envelope broken before the read error: its skipped text is still reported.
    var changes = ConversionOptions(mode: .push, keepGoing: true)
    changes.documents = .changes
    try readErrorInTheMiddle(
      Array(#"{"results":[{"doc":{"_id":"a"}},x,{"doc":{"_id":"b"}}"#.utf8), options: changes,
      expecting: "invalid character")
  }

  private func readErrorInTheMiddle(
    _ input: [UInt8], options: ConversionOptions, expecting message: String? = nil
  ) throws {
    func convert(jobs: Int) -> (output: [UInt8], diagnostics: [String], failure: String?) {
      let descriptor = resetConnection(after: input)
      defer { close(descriptor) }
      var output: [UInt8] = []
      var diagnostics: [String] = []
      let collected = ClosureSink { (bytes: UnsafeRawBufferPointer) in
        output.append(contentsOf: bytes)
      }
      let converter = StreamConverter(options: options, output: collected)
      converter.jobs = jobs
      converter.batchBytes = 300
      converter.readSize = 1000
      converter.diagnosticHandler = { (diagnostic: ConversionDiagnostic, name: String) in
        diagnostics.append(diagnostic.formatted(inputName: name))
      }
      var failure: String? = nil
      do throws(ConversionIOError) {
        _ = try converter.convert(SystemFileDescriptor(rawValue: descriptor), name: "in")
      } catch {
        failure = "\(error.operation) \(error.errno)"
      }
      try? converter.finish()
      return (output, diagnostics, failure)
    }
    let single = convert(jobs: 1)
    #expect(single.failure == "read \(SystemErrno(code: ECONNRESET))")
    if let message {
      #expect(single.diagnostics.count == 1 && single.diagnostics[0].contains(message))
    } else {
      #expect(single.output.count > input.count / 2, "\(single.output.count) of \(input.count)")
      #expect(single.diagnostics.count > 5)
    }
    for jobs in [2, 3] {
      let parallel = convert(jobs: jobs)
      #expect(parallel.failure == single.failure, "jobs \(jobs)")
      #expect(parallel.output == single.output, "jobs \(jobs)")
      #expect(parallel.diagnostics == single.diagnostics, "jobs \(jobs)")
    }
  }

  @Test(
    "a continuous _changes feed (--docs .doc): the same as one thread at any batch size",
    arguments: [ConversionMode.push, .pull, .list, .check])
  func continuousFeed(mode: ConversionMode) throws {
    let input = feed(count: 96)
    var options = ConversionOptions(mode: mode, keepGoing: true)
    options.documents = DocumentPath(steps: [.member("doc")])
    let single = try run(input, options: options, jobs: 1)
    #expect(single.documents > 80)
    #expect(single.errors > 10)
    #expect(!single.output.isEmpty)
    for batchBytes in [1, 7, 40, 97, 256, 1 << 20] {
      for jobs in [2, 3] {
        let parallel = try run(input, options: options, jobs: jobs, batchBytes: batchBytes)
        #expect(parallel == single, "\(mode) jobs \(jobs) batch \(batchBytes)")
        #expect(parallel.located == single.located, "\(mode) jobs \(jobs) batch \(batchBytes)")
      }
    }
  }

  @Test(
    "_changes bodies one per line, then one cut across lines: the same as one thread",
    arguments: [ConversionMode.push, .pull, .list, .check])
  func envelopesOnePerLine(mode: ConversionMode) throws {
    // Bodies one per line are cut between them; the last spans lines that start with `{` (as
    // CouchDB writes its rows), so a batch ends inside it and the rest goes on on one thread.
    var text = ""
    for index in 0..<60 {
      let row =
        #"{"seq":\#(index),"id":"a","doc":{"_id":"\#(index)","p":{"@type":"blob","digest":"sha1-\#(index)"}}}"#
      switch index % 6 {
      case 1: text += #"{"results":[\#(row),{"seq":0,"doc":[1]}],"last_seq":"\#(index)"}"#
      case 3: text += #"{"results":[\#(row),{"doc":{"_attachments":{},"_attachments":{}}}]}"#
      case 4: text += #"{"results":[],"last_seq":"0"}"#
      default: text += #"{"results":[\#(row),\#(row)],"last_seq":"\#(index)"}"#
      }
      text += "\n"
    }
    text +=
      "{\"results\":[\n"
      + (0..<40).map { #"{"seq":\#($0),"doc":{"_id":"\#($0)"}}"# }
      .joined(separator: ",\n") + "\n],\"last_seq\":\"40\"}\n"
    // And one cut short at the end: the envelope closed, the rest rejected.
    text += "{\"results\":[\n{\"doc\":{\"_id\":\"x\"}},\n{\"doc\":{\"_id\":\"y\"\n"
    let input = Array(text.utf8)
    var options = ConversionOptions(mode: mode, keepGoing: true)
    options.documents = .changes
    let single = try run(input, options: options, jobs: 1)
    #expect(single.documents > 140)
    #expect(single.errors > 15)
    for batchBytes in [1, 9, 64, 300, 1 << 20] {
      for jobs in [2, 3] {
        let parallel = try run(input, options: options, jobs: jobs, batchBytes: batchBytes)
        #expect(parallel == single, "\(mode) jobs \(jobs) batch \(batchBytes)")
        #expect(parallel.located == single.located, "\(mode) jobs \(jobs) batch \(batchBytes)")
      }
    }
  }

  @Test(
    "one body spanning lines is spread over threads from between its rows: the same as one thread",
    arguments: [ConversionMode.push, .pull, .upgrade, .list, .check])
  func oneEnvelopeOverThreads(mode: ConversionMode) throws {
    // Sync Gateway's and CouchDB's layouts, one after the other and after bodies one per line,
    // then variants: a malformed row (the envelope closed there, the rest rejected), a body cut
    // short, and no --keep-going (the run stops at the first rejected row).
    let oneLine =
      #"{"results":[{"doc":{"_id":"o","p":{"@type":"blob","digest":"sha1-o"}}}]}"# + "\n"
    let whole =
      oneLine + spanningBody(rows: 60, couchDB: false, seed: 0) + oneLine
      + spanningBody(rows: 45, couchDB: true, seed: 4) + oneLine
    let variants: [(name: String, text: String, keepGoing: Bool)] = [
      ("whole", whole, true),
      ("malformed row", spanningBody(rows: 50, couchDB: false, seed: 2, malformedAt: 31), true),
      (
        "malformed CouchDB row", spanningBody(rows: 50, couchDB: true, seed: 1, malformedAt: 17),
        true
      ),
      ("cut short", String(spanningBody(rows: 40, couchDB: true, seed: 3).dropLast(30)), true),
      ("stops", whole, false),
      // A row without its comma: a batch guessed to start between input values starts after
      // an element, and is converted again from there.
      (
        "missing comma",
        spanningBody(rows: 30, couchDB: false, seed: 5).replacingOccurrences(
          of: "\n,{\"seq\":22,", with: "\n{\"seq\":22,"), true
      ),
      // Rows over several lines, some starting with `{` or `,`: batches end inside rows.
      (
        "rows over lines",
        spanningBody(rows: 30, couchDB: false, seed: 6).replacingOccurrences(
          of: "\"doc\":{", with: "\"doc\":\n{"
        ).replacingOccurrences(of: ",\"p\"", with: "\n,\"p\""),
        true
      ),
    ]
    for variant in variants {
      var options = ConversionOptions(mode: mode, keepGoing: variant.keepGoing)
      options.documents =
        variant.name.contains("CouchDB") || variant.name == "cut short"
        ? .allDocs : .changes
      if variant.name == "whole" || variant.name == "stops" {
        // Both layouts in one input: the path names both arrays' members.
        options.documents = .changes
      }
      let input = Array(variant.text.utf8)
      let single = try run(input, options: options, jobs: 1)
      #expect(single.errors > 0, "\(variant.name)")
      if variant.name == "missing comma" || variant.name.hasPrefix("malformed") {
        #expect(single.outcome == .abandoned, "\(variant.name)")
      }
      #expect(single.documents > (variant.keepGoing ? 10 : 2), "\(variant.name)")
      #expect(
        (single.outcome == .stopped) == (!variant.keepGoing && mode != .check), "\(variant.name)")
      // The rows were spread over threads (the rows of --list and --check name each element by
      // its index in the whole envelope: counted from each batch's start, then corrected).
      try expectSameAsOneThread(
        single, [input], options: options, batchSizes: [1, 5, 23, 64, 200, 1000, 1 << 20],
        "\(mode) \(variant.name)")
    }
  }

  @Test(
    "--bulk-docs N over threads: bodies gather rows of one body spread between its rows, NDJSON and several inputs, as one thread",
    arguments: [1, 3, 50])
  func bulkDocsOverThreads(perBody: Int) throws {
    let changes = spanningBody(rows: 70, couchDB: false, seed: 1)
    let allDocs = spanningBody(rows: 40, couchDB: true, seed: 7)
    let malformed = spanningBody(rows: 50, couchDB: false, seed: 3, malformedAt: 29)
    let lines = String(decoding: stream(count: 120, badEvery: 13), as: UTF8.self)
    let variants: [(name: String, inputs: [String], path: DocumentPath, keepGoing: Bool)] = [
      ("changes", [changes], .changes, true),
      ("all-docs then changes", [allDocs, changes, allDocs], .changes, true),
      ("malformed row", [malformed, changes], .changes, true),
      ("stops", [changes], .changes, false),
      ("lines", [lines, lines], .root, true),
    ]
    for variant in variants {
      for newEditsFalse in [false, true] {
        var options = ConversionOptions(mode: .push, keepGoing: variant.keepGoing)
        options.documents = variant.path
        options.bulkDocs = BulkDocsOutput(documentsPerBody: perBody, newEditsFalse: newEditsFalse)
        let inputs = variant.inputs.map { Array($0.utf8) }
        let single = try convertFiles(inputs, options: options, jobs: 1, batchBytes: 1 << 20)
        let label = "\(variant.name) per body \(perBody) new_edits false \(newEditsFalse)"
        #expect(single.errors > 0, "\(label)")
        // Whole bodies, one per line, N documents each but the last.
        let bodies = single.output.split(separator: 0x0A)
        #expect(!bodies.isEmpty, "\(label)")
        let close = newEditsFalse ? #"],"new_edits":false}"# : "]}"
        for (index, body) in bodies.enumerated() {
          let text = String(decoding: body, as: UTF8.self)
          #expect(text.hasPrefix(#"{"docs":["#) && text.hasSuffix(close), "\(label): \(text)")
          let parsed = try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any]
          let count = (parsed?["docs"] as? [Any])?.count ?? 0
          #expect(
            index == bodies.count - 1 ? (1...perBody).contains(count) : count == perBody,
            "\(label): body \(index) holds \(count)")
        }
        if variant.path == .root {
          #expect(single == (try convertFiles(inputs, options: options, jobs: 2, batchBytes: 300)))
        } else {
          try expectSameAsOneThread(
            single, inputs, options: options, batchSizes: [1, 17, 64, 250, 1 << 20], label)
        }
      }
    }
  }

  @Test(
    "--format list: one array of documents, as cbexport writes it, spread over threads",
    arguments: [ConversionMode.push, .pull, .list, .check])
  func listOverThreads(mode: ConversionMode) throws {
    // `cbexport json --format list` writes `[`, then one document per line, each but the last
    // followed by its comma. Several inputs make one merged list.
    func documents(_ count: Int, from start: Int, bad: Bool) -> [String] {
      (start..<start + count).map { index in
        switch index % 7 {
        case 3 where bad: #"{"_id":"\#(index)","_attachments":{},"_attachments":{}}"#
        case 5 where bad: #""not a document \#(index)""#
        case 1:
          #"{"_id":"\#(index)","_attachments":{"old":{"digest":"sha1-o","stub":true}}}"#
        default: #"{"_id":"\#(index)","p":{"@type":"blob","digest":"sha1-\#(index)"}}"#
        }
      }
    }
    let cbexport = "[\n" + documents(40, from: 0, bad: true).joined(separator: ",\n") + "\n]\n"
    let second = "[\n" + documents(25, from: 100, bad: false).joined(separator: ",\n") + "\n]\n"
    let leadingCommas = "[\n" + documents(20, from: 200, bad: true).joined(separator: "\n,") + "\n]"
    let pretty =
      "[\n"
      + documents(20, from: 300, bad: false).map {
        $0.replacingOccurrences(of: ",\"", with: ",\n  \"")
      }.joined(separator: ",\n") + "\n]\n"
    let variants: [(name: String, inputs: [String], keepGoing: Bool)] = [
      ("cbexport", [cbexport], true),
      ("merged", ["[]\n", cbexport, second, "[\n]\n", leadingCommas], true),
      ("pretty", [pretty, second], true),
      (
        "malformed", [cbexport.replacingOccurrences(of: #"{"_id":"20","#, with: #"{"_id" "20","#)],
        true
      ),
      ("more follows", [cbexport + #"{"_id":"after"}"# + "\n"], true),
      ("cut short", [String(cbexport.dropLast(40))], true),
      ("stops", [second, cbexport], false),
    ]
    for variant in variants {
      var options = ConversionOptions(mode: mode, keepGoing: variant.keepGoing)
      options.framing = .list
      let inputs = variant.inputs.map { Array($0.utf8) }
      let single = try convertFiles(inputs, options: options, jobs: 1, batchBytes: 1 << 20)
      #expect(single.documents > 10, "\(variant.name)")
      try expectSameAsOneThread(
        single, inputs, options: options, batchSizes: [1, 5, 23, 64, 200, 1 << 20],
        "\(mode) \(variant.name)")
    }
  }

  @Test("review findings: a double comma at a cut, a rejected row before a break, --list rows kept")
  func reviewFindings() throws {
    // Two commas, the second starting a line: the second is the refused token (the first was
    // due), and it is no place to cut.
    let doubleComma = Array(
      "{\"rows\":[\r\n{\"doc\":{\"_id\":\"a\"}},\r\n,{\"doc\":{\"_id\":\"b\"}}\r\n]}\n".utf8)
    var allDocs = ConversionOptions(mode: .push, keepGoing: true)
    allDocs.documents = .allDocs
    let single = try run(doubleComma, options: allDocs, jobs: 1)
    #expect(
      single.located.last?.hasPrefix("malformed-json 3:1: error: ") == true, "\(single.located)")
    for batchBytes in 1...40 {
      let parallel = try run(doubleComma, options: allDocs, jobs: 2, batchBytes: batchBytes)
      #expect(parallel == single, "batch \(batchBytes)")
      #expect(parallel.located == single.located, "batch \(batchBytes)")
    }
    // A rejected row, then the envelope breaks: the row is reported and saved (one pass lost
    // both when the envelope was closed at the place after the row); the rest goes from after
    // the row's comma.
    let rejectedThenBroken = Array(
      "{\"results\":[\n{\"doc\":{\"_id\":\"bad\",\"_attachments\":{},\"_attachments\":{}}}\n,x]}\n"
        .utf8)
    var changes = ConversionOptions(mode: .push, keepGoing: true)
    changes.documents = .changes
    let broken = try run(rejectedThenBroken, options: changes, jobs: 1)
    #expect(broken.errors == 2, "\(broken)")
    #expect(broken.located.first?.hasPrefix("duplicate-attachments 2:39: error: ") == true)
    #expect(
      String(decoding: broken.rejects, as: UTF8.self)
        == "{\"doc\":{\"_id\":\"bad\",\"_attachments\":{},\"_attachments\":{}}}\nx]}\n")
    #expect(broken.output == Array("{\"results\":[]}\n".utf8))
    for batchBytes in [1, 12, 15, 16, 40] {
      let parallel = try run(rejectedThenBroken, options: changes, jobs: 2, batchBytes: batchBytes)
      #expect(parallel == broken && parallel.located == broken.located, "batch \(batchBytes)")
    }
    // --list: a row holding two documents, the second rejected after the first one's rows went
    // out (read a byte at a time): the rows stay (they cannot be taken back), and no crash.
    let twoDocuments = Array(
      ("{\"doc\":{\"_id\":\"a\",\"p\":{\"@type\":\"blob\",\"digest\":\"sha1-1\"}}\n"
        + ",\"doc\":{\"_attachments\":{},\"_attachments\":{}}}").utf8)
    var list = ConversionOptions(mode: .list, keepGoing: true)
    list.documents = DocumentPath(steps: [.member("doc")])
    let whole = try run(twoDocuments, options: list, jobs: 1)
    #expect(String(decoding: whole.output, as: UTF8.self).contains(#""id":"a""#))
    for readSize in [1, 7, 64] {
      let piecewise = try convertFile(
        twoDocuments, options: list, jobs: 1, batchBytes: 1 << 20, readSize: readSize)
      #expect(piecewise == whole, "read size \(readSize)")
    }
    #expect(try run(twoDocuments, options: list, jobs: 2, batchBytes: 9) == whole)
  }

  @Test("fuzz: an envelope malformed at once, then another value, cut into tiny batches")
  func malformedEnvelopeAcrossBatches() throws {
    let input = Array(" {{\n{ ".utf8)
    var options = ConversionOptions(mode: .push, keepGoing: true)
    options.documents = .changes
    let single = try run(input, options: options, jobs: 1)
    for batchBytes in [1, 2, 3, 4, 8] {
      let parallel = try run(input, options: options, jobs: 2, batchBytes: batchBytes)
      #expect(parallel == single, "batch \(batchBytes)")
      #expect(parallel.located == single.located, "batch \(batchBytes)")
    }
  }

  @Test("a form feed at a batch's end, after a truncated record, is reported as with one thread")
  func formFeedAfterTruncatedRecord() throws {
    // The truncated record leaves the batch recovering; the form feed after the next line's
    // last token is yajl's whitespace, not JSON's, and must be seen before the next batch.
    for separator in ["\u{0C}", "\u{0B}"] {
      let input = Array("{\"k\":\n {\"s\":1}\n{\"f\":1}\(separator)\n{\"m\":1}\n".utf8)
      let options = ConversionOptions(mode: .push, keepGoing: true)
      let single = try run(input, options: options, jobs: 1)
      #expect(single.errors == 2, "\(single)")
      for batchBytes in [1, 4, 9, 16, 64] {
        let parallel = try run(input, options: options, jobs: 2, batchBytes: batchBytes)
        #expect(parallel == single, "batch \(batchBytes)")
      }
    }
  }

  @Test(
    "a form feed at the end of a row's line, then a token yajl refuses: one message at -j 1 and 2")
  func formFeedBeforeRefusedToken() throws {
    // At a cut, a batch ends with the form feed (reported as not JSON's white space); one pass
    // went on to the refused token and reported yajl's message instead.
    for separator in ["\u{0C}", "\u{0B}"] {
      var changes = ConversionOptions(mode: .push, keepGoing: true)
      changes.documents = .changes
      var list = ConversionOptions(mode: .push, keepGoing: true)
      list.framing = .list
      for (text, options) in [
        (
          "{\"results\":[\n{\"doc\":{\"_id\":\"a\"}}\(separator)\n,,{\"doc\":{\"_id\":\"b\"}}\n]}\n",
          changes
        ),
        ("[\n{\"_id\":\"a\"}\(separator)\n,]\n", list),
      ] {
        let input = Array(text.utf8)
        let single = try run(input, options: options, jobs: 1)
        #expect(
          single.located.last?.contains(separator == "\u{0C}" ? "form feed" : "vertical tab")
            == true, "\(single.located)")
        for batchBytes in 1...40 {
          let parallel = try run(input, options: options, jobs: 2, batchBytes: batchBytes)
          #expect(parallel == single && parallel.located == single.located, "batch \(batchBytes)")
        }
      }
    }
  }

  @Test("--format list broken after its first element: the array is closed validly at any batch")
  func listBrokenAfterFirstElement() throws {
    // A review finding: batches cut after the first element's line wrote `,` before it, as if
    // an element had come before it, and the output was no longer JSON.
    let input = Array("[{\"a\":1},\n{\"b\"\n,1]\n".utf8)
    var options = ConversionOptions(mode: .push, keepGoing: true)
    options.framing = .list
    let single = try run(input, options: options, jobs: 1)
    #expect(String(decoding: single.output, as: UTF8.self) == "[\n{\"a\":1}\n]\n", "\(single)")
    try expectSameAsOneThread(
      single, [input], options: options, batchSizes: Array(1...40), "broken list")
  }

  @Test(
    "an envelope broken at every byte, cut into batches of every size: the same as one thread",
    arguments: ["list", "changes"])
  func envelopeBrokenAtEveryByte(format: String) throws {
    // Each byte in turn is replaced by one that breaks the JSON there, or the input ends there.
    // Elements run over lines, so that batches cut inside them.
    let text =
      format == "list"
      ? "[{\"a\":1},\n{\"b\"\n:{\"@type\":\"blob\",\n\"digest\":\"sha1-b\"}},\n{\"c\":3}\n]\n"
      : "{\"results\":[\n{\"seq\":1,\"doc\":{\"_id\":\"a\"}},\n{\"seq\":2,\n\"doc\":{\"c\"\n:3}}\n],\"last_seq\":2}\n"
    let bytes = Array(text.utf8)
    var options = ConversionOptions(mode: .push, keepGoing: true)
    if format == "list" { options.framing = .list } else { options.documents = .changes }
    for place in 0..<bytes.count {
      var broken = bytes
      broken[place] = bytes[place] == UInt8(ascii: ":") ? UInt8(ascii: ",") : UInt8(ascii: ":")
      for input in [broken, Array(bytes[..<place])] {
        let single = try run(input, options: options, jobs: 1)
        for batchBytes in [1, 2, 3, 5, 8, 9, 13, 16, 21, 40] {
          let parallel = try run(input, options: options, jobs: 2, batchBytes: batchBytes)
          #expect(
            parallel == single && parallel.located == single.located,
            "\(shown(input)) batch \(batchBytes)")
        }
      }
    }
  }

  @Test("a feed where the path finds no document: one report for the input, whatever the batches")
  func feedWithoutDocuments() throws {
    let input = Array((0..<40).map { #"{"last_seq":"\#($0)"}"# + "\n" }.joined().utf8)
    for strict in [false, true] {
      var options = ConversionOptions(mode: .push)
      options.documents = DocumentPath(steps: [.member("doc")])
      options.strict = strict
      let single = try run(input, options: options, jobs: 1)
      #expect(single.output == input)
      #expect(
        single.diagnostics == [
          "cbl-attachments: in:1:1: \(strict ? "error" : "warning"): no document at .doc: no input"
            + #" value has a "doc" member; documents one after another are read in lines framing"#
        ])
      #expect(single.errors == (strict ? 1 : 0))
      for batchBytes in [1, 16, 100] {
        #expect(try run(input, options: options, jobs: 2, batchBytes: batchBytes) == single)
      }
    }
    // Documents in an early batch only: no report at all.
    var options = ConversionOptions(mode: .push)
    options.documents = DocumentPath(steps: [.member("doc")])
    let withOne = Array((#"{"doc":{"_id":"a"}}"# + "\n").utf8) + input
    for batchBytes in [1, 16, 100] {
      let parallel = try run(withOne, options: options, jobs: 2, batchBytes: batchBytes)
      #expect(parallel.diagnostics.isEmpty, "batch \(batchBytes)")
      #expect(parallel.documents == 1)
    }
  }

  @Test(
    "the same output, diagnostics and rejects as one thread, at any batch size",
    arguments: [ConversionMode.push, .pull, .list, .check])
  func sameAsOneThread(mode: ConversionMode) throws {
    let input = stream(count: 400, badEvery: 37)
    let options = ConversionOptions(mode: mode, keepGoing: true)
    let single = try run(input, options: options, jobs: 1)
    #expect(single.documents == 400)
    #expect(!single.output.isEmpty)
    for batchBytes in [40, 97, 256, 1000, 1 << 20] {
      for jobs in [2, 3] {
        let parallel = try run(input, options: options, jobs: jobs, batchBytes: batchBytes)
        #expect(parallel == single, "\(mode) jobs \(jobs) batch \(batchBytes)")
      }
    }
  }

  @Test("invalid UTF-8 in some batches: each is found and located as with one thread")
  func invalidUTF8InBatches() throws {
    // The reader checks each batch and the engines skip the check of those found valid: a batch
    // taken as valid by mistake would let a bad document through.
    let bad: [[UInt8]] = [
      [0x80], [0xC3], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xF5, 0x80, 0x80, 0x80],
    ]
    var input: [UInt8] = []
    for index in 0..<200 {
      input += Array("{\"_id\":\"doc\(index)\",\"t\":\"caf\u{E9} \u{6771}\u{4EAC}".utf8)
      if index % 23 == 7 { input += bad[(index / 23) % bad.count] }
      input += Array("\",\"p\":{\"@type\":\"blob\",\"digest\":\"sha1-\(index)\"}}\n".utf8)
    }
    let options = ConversionOptions(mode: .push, keepGoing: true)
    let single = try run(input, options: options, jobs: 1)
    #expect(single.errors == 9)
    #expect(single.diagnostics.filter { $0.contains("invalid UTF-8") }.count == 9)
    for batchBytes in [40, 150, 333, 4096] {
      for jobs in [2, 3] {
        let parallel = try run(input, options: options, jobs: jobs, batchBytes: batchBytes)
        #expect(parallel == single, "jobs \(jobs) batch \(batchBytes)")
      }
    }
  }

  @Test(
    "fuzz: bad UTF-8 anywhere, in documents over two lines, after a byte-order mark, at the end",
    arguments: [false, true])
  func invalidUTF8Fuzz(keepGoing: Bool) throws {
    var random = SplitMix64(seed: keepGoing ? 11 : 12)
    let bad: [[UInt8]] = [
      [0x80], [0xC3], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xF5], [0xE2, 0x82], [0xF0, 0x9F, 0x98],
    ]
    let options = ConversionOptions(mode: .push, keepGoing: keepGoing)
    var reported = 0
    for round in 0..<40 {
      var input: [UInt8] = random.percent(20) ? [0xEF, 0xBB, 0xBF] : []
      for index in 0..<(1 + random.below(12)) {
        var document = Array("{\"_id\":\"d\(index)\",\"t\":\"\u{E9}\u{6771}\"".utf8)
        if random.percent(30) {
          document += Array(",\n\"p\":{\"@type\":\"blob\",\"digest\":\"sha1-\(index)\"}".utf8)
        }
        if random.percent(25) {
          document.insert(
            contentsOf: bad[random.below(bad.count)], at: 1 + random.below(document.count - 1))
        }
        input += document + Array("}\n".utf8)
      }
      if random.percent(20) { input += bad[random.below(bad.count)] }
      let single = try run(input, options: options, jobs: 1)
      reported += single.diagnostics.filter { $0.contains("invalid UTF-8") }.count
      for batchBytes in [1, 7, 50, 200] {
        let parallel = try run(input, options: options, jobs: 2, batchBytes: batchBytes)
        #expect(parallel == single, "round \(round) batch \(batchBytes)")
      }
    }
    // Not vacuous: the bad sequences were seen as such.
    #expect(reported >= 10, "\(reported)")
  }

  @Test("bad documents are reported at their own lines across batch boundaries")
  func errorsAtTheRightLines() throws {
    let input = stream(count: 100, badEvery: 10)
    let result = try run(
      input, options: ConversionOptions(mode: .push, keepGoing: true), jobs: 2, batchBytes: 64)
    // Bad documents are on lines 10, 20, ..., 100 (one document per line).
    let lines = result.diagnostics.compactMap { diagnostic -> Int? in
      guard diagnostic.contains(": error: ") else { return nil }
      return Int(diagnostic.split(separator: ":")[2])
    }
    #expect(lines == Array(stride(from: 10, through: 100, by: 10)))
    #expect(result.errors == 10)
    // Every good document is there, in order.
    let ids = String(decoding: result.output, as: UTF8.self).split(separator: "\n").map {
      $0.split(separator: "\"")[3]
    }
    let expected = (0..<100).filter { $0 % 10 != 9 }.map { "doc\($0)" }
    #expect(ids.map(String.init) == expected)
    // And every bad one is in the rejects, one per line.
    #expect(String(decoding: result.rejects, as: UTF8.self).split(separator: "\n").count == 10)
  }

  @Test("pretty-printed documents spanning batches come out the same")
  func prettyPrinted() throws {
    let input = stream(count: 120, pretty: true)
    let options = ConversionOptions(mode: .push)
    let single = try run(input, options: options, jobs: 1)
    #expect(single.diagnostics.isEmpty)
    #expect(String(decoding: single.output, as: UTF8.self).split(separator: "\n").count == 120)
    for batchBytes in [30, 200, 5000] {
      let parallel = try run(input, options: options, jobs: 2, batchBytes: batchBytes)
      #expect(parallel.outcome == single.outcome, "batch \(batchBytes)")
      #expect(parallel.diagnostics == single.diagnostics, "batch \(batchBytes)")
      #expect(parallel.output == single.output, "batch \(batchBytes): outputs differ")
    }
  }

  @Test("input with no line starting with { comes out as with one thread (bad documents too)")
  func forcedCutsKeepLineNumbers() throws {
    // Pretty-printed documents with bad ones between them, and the same stream with every line
    // indented by a space, so that no line starts with `{`: one pass skips everything after the
    // first malformed document, looking for a line that does, and so must every -j run.
    let pretty = stream(count: 90, badEvery: 7, pretty: true)
    let indented = Array(
      String(decoding: pretty, as: UTF8.self).split(
        separator: "\n", omittingEmptySubsequences: false
      )
      .map { $0.isEmpty ? "" : " " + $0 }.joined(separator: "\n").utf8)
    for input in [pretty, indented] {
      let options = ConversionOptions(mode: .push, keepGoing: true)
      let single = try run(input, options: options, jobs: 1)
      // Twelve bad documents, each skipped up to the next `{` line; indented, only the first.
      #expect(single.errors == (input == pretty ? 12 : 1))
      for batchBytes in [16, 50, 333] {
        let parallel = try run(input, options: options, jobs: 2, batchBytes: batchBytes)
        #expect(parallel == single, "batch \(batchBytes)")
      }
    }
  }

  @Test("a line starting with { inside a document is carried into the next batch")
  func carriedDocument() throws {
    // The second document's inner lines start with `{` in column 1, so batches are cut inside it.
    let text =
      "{\"a\":1}\n{\"b\":[\n{\"@type\":\"blob\",\"digest\":\"d\"},\n{\"c\":2}\n]}\n{\"e\":3}\n"
    let input = Array(text.utf8)
    let single = try run(input, options: ConversionOptions(mode: .push), jobs: 1)
    #expect(
      String(decoding: single.output, as: UTF8.self)
        == "{\"a\":1}\n{\"b\":[{\"@type\":\"blob\",\"digest\":\"d\"},{\"c\":2}],\"_attachments\":{\"$.b[0]\":{\"digest\":\"d\"}}}\n{\"e\":3}\n"
    )
    for batchBytes in [1, 8, 16, 24] {
      #expect(
        try run(input, options: ConversionOptions(mode: .push), jobs: 2, batchBytes: batchBytes)
          == single)
    }
  }

  @Test("without --keep-going the run stops at the first bad document, as with one thread")
  func stopsAtFirstError() throws {
    let input = stream(count: 300, badEvery: 150)
    let options = ConversionOptions(mode: .push)
    let single = try run(input, options: options, jobs: 1)
    #expect(single.outcome == .stopped)
    #expect(single.diagnostics.count == 1)
    for batchBytes in [50, 700] {
      #expect(try run(input, options: options, jobs: 2, batchBytes: batchBytes) == single)
    }
  }
}

#endif
