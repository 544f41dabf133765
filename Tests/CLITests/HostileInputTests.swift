import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

// Issue 5, "Hostile inputs" and "--keep-going and --rejects", on the real executable: each case
// ends with the documented message (FILE:LINE:COLUMN where it applies, shared_decisions.md's
// wording) and exit status, and every good document before the problem is written whole.
// Big inputs are generated at test time into a Scratch directory (deleted afterwards), written
// and compared piece by piece so that the test itself stays small in memory.
//
// Cases already covered elsewhere are not repeated here: a directory and an unreadable file as
// operands (BadInputTests), `| head -1`, `> /dev/full` on one thread and --unbuffered with whole
// documents (InputOutputTests).

// MARK: - Helpers

private let program = "cbl-attachments"

/// How much slower than a plain debug build things run: a sanitizer's runtime in this process
/// (`swift test --sanitize=thread` builds the tested executable the same way) stretches every
/// deadline, which exists only to fail instead of hanging or taking minutes.
private let slowdown: Double = {
  // The sanitizer runtimes are linked statically; their entry points are exported.
  let everywhere = UnsafeMutableRawPointer(bitPattern: 0)  // RTLD_DEFAULT
  return dlsym(everywhere, "__tsan_init") != nil || dlsym(everywhere, "__asan_init") != nil ? 10 : 1
}()

/// How long a run may take before it is taken to hang and is killed. Generous on purpose: it
/// guards against a hang, not against a slow machine (CI runs on loaded ones), and no test says
/// anything about speed.
private let hangGuard: Double = 600

/// How one run of the program ended; standard output went to a file.
private struct HostileRun: CustomStringConvertible {
  var status: Int32
  var signaled: Bool
  var stderr: String
  /// The run did not end before its deadline and was killed.
  var timedOut: Bool
  var seconds: Double

  var description: String {
    "status \(signaled ? "signal " : "")\(status)\(timedOut ? " (killed at the deadline)" : "")"
      + " after \(String(format: "%.1f", seconds)) s\n--- stderr:\n\(stderr)---"
  }
}

/// A started run of the program: standard input from a file (or /dev/null), standard output to
/// a file (or a device), standard error to a file.
private final class StartedRun {
  let process = Process()
  let errURL: URL
  let started = Date()
  private var handles: [FileHandle] = []

  init(
    _ arguments: [String], in directory: URL, stdin: String? = nil, stdout: String,
    scratch: Scratch
  ) throws {
    errURL = scratch.url("stderr-\(UUID().uuidString)")
    _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
    let outPath = stdout.hasPrefix("/") ? stdout : directory.appendingPathComponent(stdout).path
    if !outPath.hasPrefix("/dev/") {
      _ = FileManager.default.createFile(atPath: outPath, contents: nil)
    }
    process.executableURL = URL(fileURLWithPath: try CLI.executable())
    process.arguments = arguments
    process.currentDirectoryURL = directory
    var environment = ProcessInfo.processInfo.environment
    environment["LC_ALL"] = "C"
    process.environment = environment
    let input =
      try stdin.map { try FileHandle(forReadingFrom: directory.appendingPathComponent($0)) }
      ?? FileHandle(forReadingAtPath: "/dev/null")!
    let output = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))
    let errors = try FileHandle(forWritingTo: errURL)
    handles = [input, output, errors]
    process.standardInput = input
    process.standardOutput = output
    process.standardError = errors
    try process.run()
  }

  /// Waits for the end of the run, killing it after `deadline` seconds.
  func finish(deadline: Double) throws -> HostileRun {
    let deadline = deadline * slowdown
    var timedOut = false
    while process.isRunning {
      if Date().timeIntervalSince(started) > deadline {
        timedOut = true
        kill(process.processIdentifier, SIGKILL)
        break
      }
      usleep(20_000)
    }
    process.waitUntilExit()
    for handle in handles { try? handle.close() }
    return HostileRun(
      status: process.terminationStatus, signaled: process.terminationReason == .uncaughtSignal,
      stderr: String(decoding: try Data(contentsOf: errURL), as: UTF8.self), timedOut: timedOut,
      seconds: Date().timeIntervalSince(started))
  }
}

/// Runs the program to the end (or `deadline`), standard output to the file `stdout`.
private func runToFile(
  _ arguments: [String], in scratch: Scratch, stdin: String? = nil, stdout: String = "out.txt",
  deadline: Double = hangGuard
) throws -> HostileRun {
  try StartedRun(arguments, in: scratch.directory, stdin: stdin, stdout: stdout, scratch: scratch)
    .finish(deadline: deadline)
}

/// Writes `pieces` (each repeated `times`) to a new file without holding the whole file.
private func writeFile(_ url: URL, _ pieces: [(bytes: [UInt8], times: Int)]) throws {
  _ = FileManager.default.createFile(atPath: url.path, contents: nil)
  let handle = try FileHandle(forWritingTo: url)
  defer { try? handle.close() }
  for piece in pieces {
    let data = Data(piece.bytes)
    for _ in 0..<piece.times { try handle.write(contentsOf: data) }
  }
}

/// Compares a file with the concatenation of `pieces` (each repeated `times`), reading it piece
/// by piece, like cmp(1). Returns nil when equal, else where they first differ.
private func compareFile(_ url: URL, _ pieces: [(bytes: [UInt8], times: Int)]) throws -> String? {
  let handle = try FileHandle(forReadingFrom: url)
  defer { try? handle.close() }
  var offset = 0
  for piece in pieces {
    for _ in 0..<piece.times {
      var read = [UInt8]()
      while read.count < piece.bytes.count {
        guard let data = try handle.read(upToCount: piece.bytes.count - read.count), !data.isEmpty
        else { break }
        read += data
      }
      if read.count != piece.bytes.count || !sameBytes(read, piece.bytes) {
        let index =
          zip(read, piece.bytes).enumerated().first { $0.element.0 != $0.element.1 }?.offset
          ?? min(read.count, piece.bytes.count)
        return "differs at byte \(offset + index)"
          + (read.count < piece.bytes.count ? " (output ends)" : "")
      }
      offset += read.count
    }
  }
  if let extra = try handle.read(upToCount: 64), !extra.isEmpty {
    return
      "output has more than the \(offset) expected bytes: \(String(decoding: extra, as: UTF8.self))…"
  }
  return nil
}

/// Byte equality at memcmp speed (the test is a debug build).
private func sameBytes(_ a: [UInt8], _ b: [UInt8]) -> Bool {
  a.count == b.count
    && (a.isEmpty
      || a.withUnsafeBytes { x in
        b.withUnsafeBytes { y in memcmp(x.baseAddress!, y.baseAddress!, a.count) == 0 }
      })
}

/// A short rendering of bytes for failure messages.
private func preview(_ bytes: [UInt8], _ limit: Int = 300) -> String {
  let text = String(decoding: bytes.prefix(limit), as: UTF8.self)
  return bytes.count > limit ? text + "… (\(bytes.count) bytes)" : text
}

private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

/// `count` NDJSON documents with one blob each, and what --push makes of them.
private func blobDocuments(_ count: Int) -> (input: [UInt8], pushed: [UInt8]) {
  var input = [UInt8]()
  var pushed = [UInt8]()
  input.reserveCapacity(count * 80)
  pushed.reserveCapacity(count * 130)
  for index in 0..<count {
    let blob = "\"p\":{\"@type\":\"blob\",\"digest\":\"sha1-\(index)\",\"length\":\(index)}"
    input += bytes("{\"_id\":\"doc-\(index)\",\(blob)}\n")
    pushed += bytes(
      "{\"_id\":\"doc-\(index)\",\(blob),\"_attachments\":{\"$.p\":{\"digest\":\"sha1-\(index)\",\"length\":\(index)}}}\n"
    )
  }
  return (input, pushed)
}

/// The one-line error report.
private func errorLine(_ file: String, _ line: Int, _ column: Int, _ message: String) -> String {
  "\(program): \(file):\(line):\(column): error: \(message)\n"
}

// MARK: - Tests

@Suite("CLI: hostile input")
struct HostileInputTests {
  // MARK: Deep nesting

  @Test("nesting 100,000 levels deep inside a document: kept exactly, documents around it too")
  func deepNesting() throws {
    let depth = 100_000
    let scratch = try Scratch()
    let deep =
      "{\"_id\":\"deep\",\"a\":" + String(repeating: "[", count: depth)
      + String(repeating: "]", count: depth) + "}\n"
    let deepObjects =
      "{\"o\":" + String(repeating: "{\"k\":", count: depth) + "true"
      + String(repeating: "}", count: depth) + "}\n"
    let input = "{\"first\":1}\n" + deep + deepObjects + "{\"last\":2}\n"
    try scratch.write("deep.json", input)
    for mode in ["--push", "--pull"] {
      let result = try CLI.run([mode, "deep.json"], in: scratch.directory)
      #expect(result.stdout == bytes(input), "\(mode): \(preview(result.stdout))")
      #expect(
        result.stderr == "" && result.status == 0 && !result.signaled, "\(mode): \(result.stderr)")
    }
  }

  @Test(
    "a blob 100,000 levels deep: push names it $.a[0][0]…, litecore blob_/a/0/0/…, pull undoes it")
  func deepBlob() throws {
    let depth = 100_000
    let scratch = try Scratch()
    let blob = "{\"@type\":\"blob\",\"digest\":\"sha1-deep\"}"
    let arrays =
      "{\"_id\":\"arrays\",\"a\":" + String(repeating: "[", count: depth) + blob
      + String(repeating: "]", count: depth) + "}"
    // Objects all the way down, with keys that need escaping in both namings.
    let objects =
      "{\"_id\":\"objects\"," + String(repeating: "\"k.\":{", count: depth) + "\"x/~\":" + blob
      + String(repeating: "}", count: depth) + "}"
    let input = "{\"first\":1}\n" + arrays + "\n" + objects + "\n{\"last\":2}\n"
    try scratch.write("deep.json", input)

    let arrayName = "$.a" + String(repeating: "[0]", count: depth)
    let objectName = "$" + String(repeating: ".k\\\\.", count: depth) + ".x/~"  // `\.` JSON-escaped
    let entry = "{\"digest\":\"sha1-deep\"}"
    let pushed =
      "{\"first\":1}\n" + arrays.dropLast() + ",\"_attachments\":{\"\(arrayName)\":\(entry)}}\n"
      + objects.dropLast() + ",\"_attachments\":{\"\(objectName)\":\(entry)}}\n{\"last\":2}\n"
    let push = try CLI.run(["--push", "deep.json"], in: scratch.directory)
    #expect(push.out == pushed, "jsonpath names: \(preview(push.stdout))")
    #expect(push.stderr == "" && push.status == 0, "\(push.stderr)")

    let litecoreEntry = "{\"digest\":\"sha1-deep\",\"stub\":true,\"revpos\":1}"
    let arrayPointer = "blob_/a" + String(repeating: "/0", count: depth)
    let objectPointer = "blob_" + String(repeating: "/k.", count: depth) + "/x~1~0"
    let litecore = try CLI.run(
      ["--push", "--naming", "litecore", "deep.json"], in: scratch.directory)
    #expect(
      litecore.out
        == "{\"first\":1}\n" + arrays.dropLast()
        + ",\"_attachments\":{\"\(arrayPointer)\":\(litecoreEntry)}}\n"
        + objects.dropLast()
        + ",\"_attachments\":{\"\(objectPointer)\":\(litecoreEntry)}}\n{\"last\":2}\n",
      "litecore names: \(preview(litecore.stdout))")
    #expect(litecore.stderr == "" && litecore.status == 0, "\(litecore.stderr)")

    try scratch.write("pushed.json", push.stdout)
    let pull = try CLI.run(["--pull", "pushed.json"], in: scratch.directory)
    #expect(pull.out == input, "pull(push(d)) == d: \(preview(pull.stdout))")
    #expect(pull.stderr == "" && pull.status == 0, "\(pull.stderr)")
  }

  @Test(
    "malformed and truncated 100,000 levels deep: located, the documents before written, -k resumes"
  )
  func deepMalformed() throws {
    let depth = 100_000
    let scratch = try Scratch()
    // `{"a":` is 5 characters; the `x` after the brackets is at column 5 + depth + 1.
    let bad =
      "{\"a\":" + String(repeating: "[", count: depth) + "x" + String(repeating: "]", count: depth)
      + "}"
    try scratch.write("bad.json", "{\"first\":1}\n" + bad + "\n{\"after\":2}\n")
    let stop = try CLI.run(["--push", "bad.json"], in: scratch.directory)
    expectRun(
      stop, stdout: "{\"first\":1}\n",
      stderr: errorLine("bad.json", 2, depth + 6, "malformed JSON: invalid character"), status: 1)
    let keepGoing = try CLI.run(
      ["--push", "--rejects", "rejects.txt", "bad.json"], in: scratch.directory)
    expectRun(
      keepGoing, stdout: "{\"first\":1}\n{\"after\":2}\n",
      stderr: errorLine("bad.json", 2, depth + 6, "malformed JSON: invalid character"), status: 1)
    #expect(try scratch.read("rejects.txt") == bad + "\n")

    // Cut off 100,000 levels down, at the end of the input (no final newline): the end of line 2.
    try scratch.write(
      "cut.json", "{\"first\":1}\n{\"_id\":\"cut\",\"a\":" + String(repeating: "[", count: depth))
    let cut = try CLI.run(["--pull", "cut.json"], in: scratch.directory)
    expectRun(
      cut, stdout: "{\"first\":1}\n",
      stderr: errorLine(
        "cut.json", 2, 18 + depth,
        "document \"cut\": malformed JSON: truncated document (the input ends inside it)"),
      status: 1)
  }

  // MARK: Big values

  /// A string value of about 200 MB, with escapes and multi-byte UTF-8 that must come out as
  /// they went in, between two small documents. (Under a sanitizer, 20 MB: that run looks for
  /// races and memory errors, not size limits, and is ten times slower.)
  @Test("a 200 MB string value: push works, the output is exact (with 1 and with 2 threads)")
  func hugeString() throws {
    let megabytes = slowdown > 1 ? 20 : 200
    let scratch = try Scratch()
    let pattern = bytes("abcdefghij \\u00e9\\/\\\"\\\\\\n\\ud83d\\ude00 é€😀 xyz ")
    let chunk = Array([[UInt8]](repeating: pattern, count: 1_000_000 / pattern.count).joined())
    let chunks = megabytes * 1_000_000 / chunk.count + 1
    let head = bytes("{\"_id\":\"first\"}\n{\"_id\":\"big\",\"s\":\"")
    let tail = bytes("\",\"p\":{\"@type\":\"blob\",\"digest\":\"sha1-big\"}}\n{\"_id\":\"last\"}\n")
    try writeFile(scratch.url("big.json"), [(head, 1), (chunk, chunks), (tail, 1)])
    let pushedTail = bytes(
      "\",\"p\":{\"@type\":\"blob\",\"digest\":\"sha1-big\"},\"_attachments\":{\"$.p\":{\"digest\":\"sha1-big\"}}}\n{\"_id\":\"last\"}\n"
    )
    // The two runs go side by side (about 7 s each in a debug build).
    let one = try StartedRun(
      ["--push", "-j", "1", "big.json"], in: scratch.directory, stdout: "out1.txt", scratch: scratch
    )
    let two = try StartedRun(
      ["--push", "-j", "2", "big.json"], in: scratch.directory, stdout: "out2.txt", scratch: scratch
    )
    for (run, output, threads) in [(one, "out1.txt", 1), (two, "out2.txt", 2)] {
      let result = try run.finish(deadline: hangGuard)
      #expect(!result.timedOut, "-j \(threads): a \(megabytes) MB string: \(result)")
      guard !result.timedOut else { continue }
      #expect(
        result.status == 0 && !result.signaled && result.stderr == "", "-j \(threads): \(result)")
      let difference = try compareFile(
        scratch.url(output), [(head, 1), (chunk, chunks), (pushedTail, 1)])
      #expect(difference == nil, "-j \(threads): output \(difference ?? "")")
    }
  }

  @Test(
    "a document of a million keys (duplicates kept), compact and pretty-printed, 1 and 2 threads")
  func millionKeys() throws {
    let scratch = try Scratch()
    var members = [UInt8]()
    var pretty = [UInt8]()
    members.reserveCapacity(17_000_000)
    pretty.reserveCapacity(21_000_000)
    var all = ["\"_id\":\"many\""]
    all.reserveCapacity(1_000_004)
    for index in 0..<1_000_000 { all.append("\"k\(index)\":\(index)") }
    // Duplicate keys, including a second "k0" and a second "_id", stay where they are.
    all += [
      "\"k0\":\"again\"", "\"b\":{\"@type\":\"blob\",\"digest\":\"d\"}", "\"_id\":\"dup\"",
      "\"k1\":null",
    ]
    for (index, member) in all.enumerated() {
      if index > 0 {
        members.append(UInt8(ascii: ","))
        pretty += bytes(",\n")
      }
      members += bytes(member)
      pretty += bytes("  ") + bytes(member)
    }
    let compactDocument = bytes("{") + members + bytes("}\n")
    try writeFile(
      scratch.url("compact.json"),
      [(bytes("{\"first\":1}\n"), 1), (compactDocument, 1), (bytes("{\"last\":2}\n"), 1)])
    try writeFile(
      scratch.url("pretty.json"),
      [(bytes("{\"first\":1}\n{\n"), 1), (pretty, 1), (bytes("\n}\n{\"last\":2}\n"), 1)])
    let pushed = [
      (bytes("{\"first\":1}\n{"), 1), (members, 1),
      (bytes(",\"_attachments\":{\"$.b\":{\"digest\":\"d\"}}}\n{\"last\":2}\n"), 1),
    ]
    for file in ["compact.json", "pretty.json"] {
      for threads in ["1", "2"] {
        let result = try runToFile(["--push", "-j", threads, file], in: scratch)
        #expect(
          result.status == 0 && !result.signaled && result.stderr == "",
          "\(file) -j \(threads): \(result)")
        let difference = try compareFile(scratch.url("out.txt"), pushed)
        #expect(difference == nil, "\(file) -j \(threads): output \(difference ?? "")")
      }
    }
  }

  @Test(
    "a number literal of 100,000 digits (and a huge exponent) is kept verbatim, also as a length")
  func hugeNumber() throws {
    let scratch = try Scratch()
    let digits = "1" + String(repeating: "234567890", count: 11_111)
    let number = "-\(digits).\(digits)e-\(digits)"
    let blob = "{\"@type\":\"blob\",\"digest\":\"d\",\"length\":\(digits)}"
    try scratch.write(
      "n.json", "{\"first\":1}\n{\"n\":\(number),\"p\":\(blob)}\n[\(digits)]\n{\"m\":\(digits)}\n")
    let result = try CLI.run(["--push", "-k", "n.json"], in: scratch.directory)
    expectRun(
      result,
      stdout:
        "{\"first\":1}\n{\"n\":\(number),\"p\":\(blob),\"_attachments\":{\"$.p\":{\"digest\":\"d\",\"length\":\(digits)}}}\n"
        + "{\"m\":\(digits)}\n",
      stderr: errorLine(
        "n.json", 3, 1,
        "document is not a JSON object (it is an array); a file holding one array of documents is read in list framing (skipped 3:1 to 3:100002) (--format list)"
      ),
      status: 1)
  }

  // MARK: Encoding

  /// Each kind of bad UTF-8 the strict check refuses. yajl's own check would let overlong forms
  /// and raw-encoded surrogates through; SPEC.md counts invalid UTF-8 as malformed JSON (RFC 8259
  /// §8.1 requires UTF-8, and those are not UTF-8), so they must be refused too.
  @Test(
    "invalid UTF-8 of every kind: malformed JSON at the first bad byte, the documents before written",
    arguments: [
      ("lone continuation byte", [0x80], 0x80),
      ("truncated 2-byte sequence", [0xC3], 0xC3),
      ("truncated 3-byte sequence", [0xE2, 0x82], 0xE2),
      ("truncated 4-byte sequence", [0xF0, 0x9F, 0x98], 0xF0),
      ("overlong 2-byte '/'", [0xC0, 0xAF], 0xC0),
      ("overlong 2-byte NUL", [0xC1, 0x80], 0xC1),
      ("overlong 3-byte '/'", [0xE0, 0x80, 0xAF], 0xE0),
      ("overlong 4-byte '/'", [0xF0, 0x80, 0x80, 0xAF], 0xF0),
      ("raw-encoded high surrogate U+D800", [0xED, 0xA0, 0x80], 0xED),
      ("raw-encoded low surrogate U+DFFF", [0xED, 0xBF, 0xBF], 0xED),
      ("above U+10FFFF", [0xF4, 0x90, 0x80, 0x80], 0xF4),
      ("byte 0xF5", [0xF5, 0x80, 0x80, 0x80], 0xF5),
      ("byte 0xFF", [0xFF], 0xFF),
    ] as [(String, [UInt8], UInt8)])
  func invalidUTF8(kind: String, sequence: [UInt8], reported: UInt8) throws {
    let hex = String(reported, radix: 16, uppercase: true)
    // In a value (named by the document's _id), in a key, and between tokens.
    let cases: [(prefix: String, suffix: String, id: String?)] = [
      ("{\"_id\":\"v\",\"s\":\"é", "x\"}", "v"),
      ("{\"k", "\":1}", nil),
      ("{\"a\":1,", "\"b\":2}", nil),
    ]
    for (prefix, suffix, id) in cases {
      let input =
        bytes("{\"ok\":\"é\"}\n") + bytes(prefix) + sequence + bytes(suffix)
        + bytes("\n{\"after\":1}\n")
      let column = prefix.unicodeScalars.count + 1
      let named = id.map { "document \"\($0)\": " } ?? ""
      let message = errorLine(
        "<stdin>", 2, column, "\(named)malformed JSON: invalid UTF-8 (byte 0x\(hex))")
      let stop = try CLI.run(["--push"], stdin: input)
      expectRun(stop, stdout: "{\"ok\":\"é\"}\n", stderr: message, status: 1)
      let scratch = try Scratch()
      let keepGoing = try CLI.run(
        ["--pull", "--rejects", "r.txt"], stdin: input, in: scratch.directory)
      expectRun(keepGoing, stdout: "{\"ok\":\"é\"}\n{\"after\":1}\n", stderr: message, status: 1)
      #expect(
        Array(try Data(contentsOf: scratch.url("r.txt"))) == bytes(prefix) + sequence
          + bytes(suffix) + [0x0A],
        "\(kind): the rejected line, byte for byte")
    }
  }

  @Test("valid but unusual UTF-8 passes: U+FFFF, U+10FFFF, U+FEFF inside a string, 4-byte emoji")
  func unusualValidUTF8() throws {
    let document =
      "{\"s\":\"\u{FFFF}\u{10FFFF}\u{FEFF}😀\",\"\u{10FFFF}\":{\"@type\":\"blob\",\"digest\":\"d\"}}"
    let result = try CLI.run(["--push"], stdin: bytes(document + "\n"))
    expectRun(
      result,
      stdout: String(document.dropLast())
        + ",\"_attachments\":{\"$.\u{10FFFF}\":{\"digest\":\"d\"}}}\n",
      stderr: "", status: 0)
  }

  @Test(
    "lone surrogate escapes in keys and values are kept byte-exact; a key with one names its blob")
  func loneSurrogateEscapes() throws {
    let input = """
      {"s":"\\ud800","t":"x\\udc00y","u":"\\udbff\\udbff","pair":"\\ud83d\\ude00"}
      {"\\ud800":{"@type":"blob","digest":"d1"},"a\\udfff.b":[{"@type":"blob","digest":"d2"}]}

      """
    let push = try CLI.run(["--push"], stdin: bytes(input))
    let pushedSecond =
      "{\"\\ud800\":{\"@type\":\"blob\",\"digest\":\"d1\"},\"a\\udfff.b\":[{\"@type\":\"blob\",\"digest\":\"d2\"}],"
      + "\"_attachments\":{\"$.\\ud800\":{\"digest\":\"d1\"},\"$.a\\udfff\\\\.b[0]\":{\"digest\":\"d2\"}}}\n"
    let first =
      "{\"s\":\"\\ud800\",\"t\":\"x\\udc00y\",\"u\":\"\\udbff\\udbff\",\"pair\":\"\\ud83d\\ude00\"}\n"
    expectRun(push, stdout: first + pushedSecond, stderr: "", status: 0)
    let litecore = try CLI.run(["--push", "--naming", "litecore"], stdin: bytes(input))
    #expect(
      litecore.out.contains(
        "\"_attachments\":{\"blob_/\\ud800\":{\"digest\":\"d1\",\"stub\":true,\"revpos\":1},"
          + "\"blob_/a\\udfff.b/0\":{\"digest\":\"d2\",\"stub\":true,\"revpos\":1}}}"),
      "\(litecore)")
    let pull = try CLI.run(["--pull"], stdin: bytes(first + pushedSecond))
    expectRun(pull, stdout: input, stderr: "", status: 0)
    // Escapes of surrogates that are not four hex digits are malformed.
    let badEscape = try CLI.run(["--push"], stdin: bytes("{\"ok\":1}\n{\"s\":\"\\ud8\"}\n"))
    #expect(badEscape.out == "{\"ok\":1}\n" && badEscape.status == 1, "\(badEscape)")
    #expect(
      badEscape.stderr.hasPrefix("\(program): <stdin>:2:")
        && badEscape.stderr.contains(": error: malformed JSON: "), "\(badEscape)")
  }

  @Test("NUL: \\u0000 escaped is kept (also in a key naming a blob); a raw NUL byte is malformed")
  func nulBytes() throws {
    let escaped =
      "{\"a\\u0000\":\"\\u0000\",\"b\\u0000c\":{\"@type\":\"blob\",\"digest\":\"\\u0000\"}}"
    let push = try CLI.run(["--push"], stdin: bytes(escaped + "\n"))
    expectRun(
      push,
      stdout: String(escaped.dropLast())
        + ",\"_attachments\":{\"$.b\\u0000c\":{\"digest\":\"\\u0000\"}}}\n",
      stderr: "", status: 0)

    // A raw NUL inside a string, and one between documents.
    let nulPrefix = "{\"_id\":\"z\",\"s\":\"a"
    let nulColumn = nulPrefix.count + 1
    let inString = bytes("{\"ok\":1}\n" + nulPrefix) + [0] + bytes("b\"}\n{\"after\":1}\n")
    expectRun(
      try CLI.run(["--push"], stdin: inString), stdout: "{\"ok\":1}\n",
      stderr: errorLine(
        "<stdin>", 2, nulColumn, "document \"z\": malformed JSON: invalid character inside string"),
      status: 1)
    let scratch = try Scratch()
    expectRun(
      try CLI.run(["--push", "--rejects", "r.txt"], stdin: inString, in: scratch.directory),
      stdout: "{\"ok\":1}\n{\"after\":1}\n",
      stderr: errorLine(
        "<stdin>", 2, nulColumn, "document \"z\": malformed JSON: invalid character inside string"),
      status: 1)
    #expect(
      Array(try Data(contentsOf: scratch.url("r.txt"))) == bytes("{\"_id\":\"z\",\"s\":\"a") + [0]
        + bytes("b\"}\n"))

    let between = bytes("{\"ok\":1}\n{\"b\":2}") + [0] + bytes("\n{\"c\":3}\n")
    expectRun(
      try CLI.run(["--push"], stdin: between), stdout: "{\"ok\":1}\n{\"b\":2}\n",
      stderr: errorLine("<stdin>", 2, 8, "malformed JSON: invalid character"), status: 1)
    let lineStart = bytes("{\"ok\":1}\n") + [0] + bytes("{\"b\":2}\n{\"c\":3}\n")
    expectRun(
      try CLI.run(["--push", "-k"], stdin: lineStart), stdout: "{\"ok\":1}\n{\"c\":3}\n",
      stderr: errorLine("<stdin>", 2, 1, "malformed JSON: invalid character (skipped 2:1 to 2:8)"),
      status: 1)
  }

  @Test(
    "a byte-order mark: skipped at the start (of each input); in the middle, malformed with its own message"
  )
  func byteOrderMark() throws {
    let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
    let bomMessage =
      "malformed JSON: a byte-order mark (U+FEFF) inside the input; only its very start may have one"
    let scratch = try Scratch()
    try scratch.write("a.json", bom + bytes("{\"a\":1}\n"))
    try scratch.write("b.json", bom + bytes("\n{\"b\":2}"))
    try scratch.write("only.json", bom)
    expectRun(
      try CLI.run(["--push", "a.json", "only.json", "b.json"], in: scratch.directory),
      stdout: "{\"a\":1}\n{\"b\":2}\n", stderr: "", status: 0)
    expectRun(
      try CLI.run(["--push", "--format", "list"], stdin: bom + bytes("[{\"a\":1}]")),
      stdout: "[\n{\"a\":1}\n]\n", stderr: "", status: 0)

    // At the start of a line between documents, after a document on the same line, inside a
    // document, and a second one right after the first.
    let middle = bom + bytes("{\"a\":1}\n") + bom + bytes("{\"b\":2}\n{\"c\":3}\n")
    expectRun(
      try CLI.run(["--push"], stdin: middle), stdout: "{\"a\":1}\n",
      stderr: errorLine("<stdin>", 2, 1, bomMessage), status: 1)
    expectRun(
      try CLI.run(["--push", "--rejects", "r.txt"], stdin: middle, in: scratch.directory),
      stdout: "{\"a\":1}\n{\"c\":3}\n", stderr: errorLine("<stdin>", 2, 1, bomMessage), status: 1)
    #expect(Array(try Data(contentsOf: scratch.url("r.txt"))) == bom + bytes("{\"b\":2}\n"))
    expectRun(
      try CLI.run(["--push"], stdin: bytes("{\"a\":1}") + bom + bytes("\n")), stdout: "{\"a\":1}\n",
      stderr: errorLine("<stdin>", 1, 8, bomMessage), status: 1)
    expectRun(
      try CLI.run(["--push"], stdin: bytes("{\"a\":1}\n{\"b\":") + bom + bytes("2}\n")),
      stdout: "{\"a\":1}\n",
      stderr: errorLine("<stdin>", 2, 6, bomMessage), status: 1)
    // The skipped mark is not a character of line 1: the second one is at column 1.
    expectRun(
      try CLI.run(["--push"], stdin: bom + bom + bytes("{\"a\":1}\n")), stdout: "",
      stderr: errorLine("<stdin>", 1, 1, bomMessage), status: 1)
    // Inside a string it is just a character.
    expectRun(
      try CLI.run(["--push"], stdin: bytes("{\"s\":\"") + bom + bytes("\"}\n")),
      stdout: "{\"s\":\"\u{FEFF}\"}\n", stderr: "", status: 0)
  }

  // MARK: Truncation

  @Test(
    "a truncated last document, cut in several places: reported at the end, the others written, rejected whole"
  )
  func truncatedLastDocument() throws {
    let good = "{\"_id\":\"g\",\"p\":{\"@type\":\"blob\",\"digest\":\"d\"}}\n"
    let goodPushed =
      "{\"_id\":\"g\",\"p\":{\"@type\":\"blob\",\"digest\":\"d\"},\"_attachments\":{\"$.p\":{\"digest\":\"d\"}}}\n"
    let message = "malformed JSON: truncated document (the input ends inside it)"
    // (the cut document, whether its _id is known); the location is the end of the input.
    let cuts: [(String, Bool)] = [
      ("{", false),
      ("{\"_id\":\"t\"", true),
      ("{\"_id\":\"t\",", true),
      ("{\"_id\":\"t\",\"a\":", true),
      ("{\"_id\":\"t\",\"a\":\"in a str", true),
      ("{\"_id\":\"t\",\"a\":\"esc\\", true),
      ("{\"_id\":\"t\",\"a\":\"\\u00", true),
      ("{\"_id\":\"t\",\"a\":\"é", true),
      ("{\"_id\":\"t\",\"a\":12", true),
      ("{\"_id\":\"t\",\"a\":-1.5e", true),
      ("{\"_id\":\"t\",\"a\":tru", true),
      ("{\"_id\":\"t\",\"a\":[1,\n  {\"b\":", true),
      ("{\"_id\":\"t\",\"a\":[1,\n", true),
    ]
    for (cut, named) in cuts {
      let lines = cut.split(separator: "\n", omittingEmptySubsequences: false)
      let (line, column) = (lines.count, lines.last!.unicodeScalars.count + 1)
      let scratch = try Scratch()
      try scratch.write("in.json", good + cut)
      let expected = errorLine(
        "in.json", 1 + line, column, (named ? "document \"t\": " : "") + message)
      expectRun(
        try CLI.run(["--push", "in.json"], in: scratch.directory), stdout: goodPushed,
        stderr: expected, status: 1)
      let keepGoing = try CLI.run(
        ["--push", "--rejects", "r.txt", "in.json", "-"], stdin: bytes(good), in: scratch.directory)
      expectRun(keepGoing, stdout: goodPushed + goodPushed, stderr: expected, status: 1)
      let trimmed = String(cut.reversed().drop { $0 == "\n" || $0 == " " }.reversed())
      #expect(try scratch.read("r.txt") == trimmed + "\n", "rejects for \(cut.debugDescription)")
    }
    // In --format list: the array itself is cut.
    let list = try CLI.run(
      ["--pull", "--format", "list"], stdin: bytes("[{\"a\":1},\n{\"b\":2},\n{\"c\":"))
    #expect(list.out == "[\n{\"a\":1},\n{\"b\":2}\n]\n", "\(list)")
    #expect(list.stderr == errorLine("<stdin>", 3, 6, message), "\(list)")
    #expect(list.status == 1 && !list.signaled)
  }

  // MARK: Inputs that are not files

  @Test("a directory on standard input: cannot read, status 2; the other inputs still converted")
  func directoryOnStdin() throws {
    let scratch = try Scratch()
    try FileManager.default.createDirectory(
      at: scratch.url("dir"), withIntermediateDirectories: false)
    try scratch.write("a.json", "{\"a\":1}\n")
    let result = try CLI.shell("\"$EXE\" --push a.json - a.json < dir", in: scratch.directory)
    expectRun(
      result, stdout: "{\"a\":1}\n{\"a\":1}\n",
      stderr: "\(program): <stdin>: error: cannot read: Is a directory\n", status: 2)
  }

  @Test(
    "a directory and an unreadable file among good files (-k): status 2, every good document written"
  )
  func directoryAndUnreadableWithKeepGoing() throws {
    let scratch = try Scratch()
    try FileManager.default.createDirectory(
      at: scratch.url("dir"), withIntermediateDirectories: false)
    try scratch.write("a.json", "{\"a\":{\"@type\":\"blob\",\"digest\":\"x\"}}\n[1]\n{\"a2\":1}\n")
    try scratch.write("secret.json", "{\"s\":1}\n")
    try scratch.write("b.json", "{\"b\":2}\n")
    try FileManager.default.setAttributes(
      [.posixPermissions: 0o000], ofItemAtPath: scratch.url("secret.json").path)
    let root = getuid() == 0  // root reads every file: then secret.json is just a good file
    let result = try CLI.run(
      ["--push", "-k", "a.json", "dir", "secret.json", "b.json"], in: scratch.directory)
    expectRun(
      result,
      stdout:
        "{\"a\":{\"@type\":\"blob\",\"digest\":\"x\"},\"_attachments\":{\"$.a\":{\"digest\":\"x\"}}}\n{\"a2\":1}\n"
        + (root ? "{\"s\":1}\n" : "") + "{\"b\":2}\n",
      stderr: errorLine(
        "a.json", 2, 1,
        "document is not a JSON object (it is an array); a file holding one array of documents is read in list framing (skipped 2:1 to 2:3) (--format list)"
      )
        + "\(program): dir: error: cannot read: Is a directory\n"
        + (root ? "" : "\(program): secret.json: error: cannot open: Permission denied\n"),
      status: 2)
  }

  @Test("a FIFO as input: read like a pipe, to its end; a truncated last document in it reported")
  func fifoInput() throws {
    let scratch = try Scratch()
    let fifo = scratch.url("fifo").path
    #expect(mkfifo(fifo, 0o600) == 0)
    // The writer is a shell in the background; the program opens the FIFO and reads to its end.
    let result = try CLI.shell(
      """
      printf '{"a":{"@type":"blob","digest":"x"}}\\n{"b":2}\\n{"_id":"cut","c":' > fifo &
      "$EXE" --push fifo; status=$?; wait; exit $status
      """, in: scratch.directory)
    expectRun(
      result,
      stdout:
        "{\"a\":{\"@type\":\"blob\",\"digest\":\"x\"},\"_attachments\":{\"$.a\":{\"digest\":\"x\"}}}\n{\"b\":2}\n",
      stderr: errorLine(
        "fifo", 3, 18,
        "document \"cut\": malformed JSON: truncated document (the input ends inside it)"),
      status: 1)
  }

  // MARK: Slow input

  /// Good and bad documents, pretty-printed and CRLF ones among them.
  private static let slowInput = """
    {"_id":"1","p":{"@type":"blob","digest":"sha1-1","length":1}}
    {
      "_id": "2",
      "list": [ {"@type":"blob","digest":"sha1-2"}, 1.50, "\\u00e9" ]
    }
    {"_id":"3","x":\r
    {"_id":"4","_attachments":{"$.a":{"digest":"d"}},"a":{"@type":"blob","digest":"d"}}\r
      "not an object"
    {"_id":"5","_attachments":{},"_attachments":{}}
    {"_id":"6"}

    """

  /// Feeds `input` to the program one byte per write(2), pausing `pause` microseconds between
  /// writes; standard output goes to a file.
  private func runSlowly(_ arguments: [String], _ input: [UInt8], pause: UInt32, scratch: Scratch)
    throws
    -> (CLIResult, seconds: Double)
  {
    _ = signal(SIGPIPE, SIG_IGN)  // a failed write must not kill the test
    let outURL = scratch.url("slow-out-\(UUID().uuidString)")
    let errURL = scratch.url("slow-err-\(UUID().uuidString)")
    _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
    _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: try CLI.executable())
    process.arguments = arguments
    process.currentDirectoryURL = scratch.directory
    let pipe = Pipe()
    let output = try FileHandle(forWritingTo: outURL)
    let errors = try FileHandle(forWritingTo: errURL)
    defer {
      try? output.close()
      try? errors.close()
    }
    process.standardInput = pipe
    process.standardOutput = output
    process.standardError = errors
    let started = Date()
    try process.run()
    let writer = pipe.fileHandleForWriting.fileDescriptor
    for var byte in input {
      guard Glibc.write(writer, &byte, 1) == 1 else { break }
      usleep(pause)
    }
    try pipe.fileHandleForWriting.close()
    process.waitUntilExit()
    let result = CLIResult(
      stdout: Array(try Data(contentsOf: outURL)),
      stderr: String(decoding: try Data(contentsOf: errURL), as: UTF8.self),
      status: process.terminationStatus, signaled: process.terminationReason == .uncaughtSignal)
    return (result, Date().timeIntervalSince(started))
  }

  @Test(
    "input arriving one byte per write through a slow pipe: the same output, errors and status as fast"
  )
  func slowPipe() throws {
    let scratch = try Scratch()
    let input = bytes(Self.slowInput)
    for arguments in [
      ["--push", "-k"], ["--push", "-k", "-j", "1"], ["--push", "-k", "-j", "4"], ["--pull", "-k"],
    ] {
      let fast = try CLI.run(arguments, stdin: input)
      #expect(
        fast.status == 1 && fast.stderr.split(separator: "\n").count == 3,
        "\(arguments) fast: \(fast)")
      let (slow, _) = try runSlowly(arguments, input, pause: 300, scratch: scratch)
      expectRun(slow, stdout: fast.out, stderr: fast.stderr, status: fast.status)
    }
  }

  @Test(
    "--unbuffered through a slow pipe: each document is written as soon as its last byte arrives")
  func slowPipeUnbuffered() throws {
    _ = signal(SIGPIPE, SIG_IGN)
    let documents = [
      "{\"_id\":\"1\",\"p\":{\"@type\":\"blob\",\"digest\":\"sha1-1\"}}\n",
      "{\n  \"_id\": \"2\",\r\n  \"n\": [1.50, \"\\u00e9\"]\n}\n",
      "{\"_id\":\"3\",\"_attachments\":{\"$.a\":{\"digest\":\"d\"}},\"a\":{\"@type\":\"blob\",\"digest\":\"d\"}}\n",
      "{\"_id\":\"4\"}\n",
    ]
    let expected = [
      "{\"_id\":\"1\",\"p\":{\"@type\":\"blob\",\"digest\":\"sha1-1\"},\"_attachments\":{\"$.p\":{\"digest\":\"sha1-1\"}}}\n",
      "{\"_id\":\"2\",\"n\":[1.50,\"\\u00e9\"]}\n",
      "{\"_id\":\"3\",\"_attachments\":{\"$.a\":{\"digest\":\"d\"}},\"a\":{\"@type\":\"blob\",\"digest\":\"d\"}}\n",
      "{\"_id\":\"4\"}\n",
    ]
    let (process, input, output, errors) = try CLI.start(["--push", "--unbuffered"])
    defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
    let writer = input.fileHandleForWriting.fileDescriptor
    let reader = output.fileHandleForReading.fileDescriptor

    /// Bytes available on standard output within `milliseconds`.
    func available(waiting milliseconds: Int32) -> [UInt8] {
      var descriptor = pollfd(fd: reader, events: Int16(POLLIN), revents: 0)
      guard poll(&descriptor, 1, milliseconds) > 0 else { return [] }
      var buffer = [UInt8](repeating: 0, count: 4096)
      let count = Glibc.read(reader, &buffer, buffer.count)
      return count > 0 ? Array(buffer[..<count]) : []
    }

    for (document, line) in zip(documents, expected) {
      let closing = bytes(document).lastIndex(of: UInt8(ascii: "}"))!
      for (index, var byte) in bytes(document).enumerated() {
        #expect(Glibc.write(writer, &byte, 1) == 1)
        usleep(200)
        if index < closing {
          // Nothing may come out before the document is complete.
          let early = available(waiting: 0)
          #expect(early.isEmpty, "output before the document ended: \(preview(early))")
        }
      }
      var received = [UInt8]()
      let deadline = Date().addingTimeInterval(hangGuard * slowdown)
      while received.count < line.utf8.count && Date() < deadline {
        received += available(waiting: 100)
      }
      #expect(received == bytes(line), "document \(line)")
    }
    try input.fileHandleForWriting.close()
    process.waitUntilExit()
    #expect(process.terminationReason == .exit && process.terminationStatus == 0)
    #expect(output.fileHandleForReading.readDataToEndOfFile().isEmpty)
    #expect(errors.fileHandleForReading.readDataToEndOfFile().isEmpty)
  }

  // MARK: Closed output

  @Test(
    "stdout closed after 10 bytes (| head -c 10): silent, killed by SIGPIPE, the bytes a prefix of the output",
    arguments: ["1", "4"])
  func headBytes(threads: String) throws {
    let scratch = try Scratch()
    let (input, pushed) = blobDocuments(40_000)
    try scratch.write("big.json", input)
    let result = try CLI.shell(
      "(\"$EXE\" --push -j \(threads) big.json 2>err.txt; echo $? >status.txt) | head -c 10",
      in: scratch.directory)
    #expect(result.stdout == Array(pushed.prefix(10)), "\(result)")
    #expect(try scratch.read("status.txt") == "141\n", "killed by SIGPIPE (128+13)")
    #expect(try scratch.read("err.txt") == "", "nothing on standard error")
  }

  @Test(
    "a reader that closes the pipe after the first line: killed by SIGPIPE, silent, what it read uncorrupted",
    arguments: [["-j", "1"], ["-j", "4"], ["--unbuffered"], ["-k", "--rejects", "r.txt"]])
  func readerClosesAfterFirstLine(options: [String]) throws {
    _ = signal(SIGPIPE, SIG_IGN)
    let scratch = try Scratch()
    let (input, pushed) = blobDocuments(40_000)
    try scratch.write("big.json", input)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: try CLI.executable())
    process.arguments = ["--push"] + options + ["big.json"]
    process.currentDirectoryURL = scratch.directory
    let output = Pipe()
    let errURL = scratch.url("err.txt")
    _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
    let errors = try FileHandle(forWritingTo: errURL)
    defer { try? errors.close() }
    process.standardInput = FileHandle(forReadingAtPath: "/dev/null")
    process.standardOutput = output
    process.standardError = errors
    try process.run()
    defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
    var received = [UInt8]()
    var buffer = [UInt8](repeating: 0, count: 4096)
    let reader = output.fileHandleForReading.fileDescriptor
    while !received.contains(0x0A) {
      let count = Glibc.read(reader, &buffer, buffer.count)
      guard count > 0 else { break }
      received += buffer[..<count]
    }
    try output.fileHandleForReading.close()
    let deadline = Date().addingTimeInterval(hangGuard * slowdown)
    while process.isRunning && Date() < deadline { usleep(20_000) }
    #expect(!process.isRunning, "the program should end when its reader has gone")
    guard !process.isRunning else { return }
    #expect(
      process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGPIPE,
      "killed by SIGPIPE, not status \(process.terminationStatus)")
    #expect(try scratch.read("err.txt") == "", "nothing on standard error")
    #expect(
      received.count > 0 && sameBytes(received, Array(pushed.prefix(received.count))),
      "\(preview(received))")
  }

  // MARK: Full disk

  @Test(
    "a full disk (> /dev/full) with several threads, --unbuffered, --format list: status 2, the message",
    arguments: [["-j", "4"], ["--unbuffered"], ["--format", "list", "-j", "2"]])
  func fullDiskOptions(options: [String]) throws {
    let scratch = try Scratch()
    var input = blobDocuments(5_000).input
    if options.contains("list") {
      input =
        bytes("[") + Array(input.dropLast()).map { $0 == 0x0A ? UInt8(ascii: ",") : $0 }
        + bytes("]")
    }
    try scratch.write("big.json", input)
    let result = try runToFile(
      ["--push"] + options + ["big.json"], in: scratch, stdout: "/dev/full")
    #expect(
      result.stderr == "\(program): <stdout>: error: write failed: No space left on device\n",
      "\(result)")
    #expect(result.status == 2 && !result.signaled, "\(result)")
  }

  @Test(
    "a full disk before a bad document: the failed write ends the run, nothing after it is reported, status 2"
  )
  func fullDiskAndBadDocument() throws {
    let scratch = try Scratch()
    try scratch.write("in.json", "{\"a\":1}\n[2]\n{\"c\":3}\n")
    let result = try runToFile(
      ["--pull", "-k", "in.json"], in: scratch, stdout: "/dev/full")
    #expect(
      result.stderr == "\(program): <stdout>: error: write failed: No space left on device\n",
      "\(result)")
    #expect(result.status == 2 && !result.signaled, "\(result)")
    // A bad document before the first write is reported; the write failure follows.
    try scratch.write("bad-first.json", "[2]\n{\"c\":3}\n")
    let first = try runToFile(
      ["--pull", "-k", "bad-first.json"], in: scratch, stdout: "/dev/full")
    #expect(
      first.stderr
        == errorLine(
          "bad-first.json", 1, 1,
          "document is not a JSON object (it is an array); a file holding one array of documents is read in list framing (skipped 1:1 to 1:3) (--format list)"
        )
        + "\(program): <stdout>: error: write failed: No space left on device\n", "\(first)")
    #expect(first.status == 2 && !first.signaled, "\(first)")
  }

  @Test(
    "the rejects file on a full disk: status 2, the message; the good documents before it still written"
  )
  func rejectsOnFullDisk() throws {
    let scratch = try Scratch()
    try scratch.write("in.json", "{\"a\":1}\n{\"b\":2}\n[3]\n{\"d\":4}\n")
    let notAnObject = errorLine(
      "in.json", 3, 1,
      "document is not a JSON object (it is an array); a file holding one array of documents is read in list framing (--format list)"
    )
    let writeFailed = "\(program): /dev/full: error: write failed: No space left on device\n"
    for threads in ["1", "2"] {
      let result = try CLI.run(
        ["--pull", "-j", threads, "--rejects", "/dev/full", "in.json"], in: scratch.directory)
      expectRun(
        result, stdout: "{\"a\":1}\n{\"b\":2}\n", stderr: notAnObject + writeFailed, status: 2)
    }
    // Nothing to reject: the rejects file is never written to, and all is well.
    try scratch.write("good.json", "{\"a\":1}\n")
    expectRun(
      try CLI.run(["--pull", "--rejects", "/dev/full", "good.json"], in: scratch.directory),
      stdout: "{\"a\":1}\n",
      stderr: "", status: 0)
  }

  // MARK: --keep-going and --rejects at scale

  @Test(
    "--keep-going --rejects on 2,000 good and 100 bad documents of every kind: nothing lost, -j 1/2/4 identical"
  )
  func keepGoingAtScale() throws {
    let corpus = KeepGoingCorpus.make()
    let scratch = try Scratch()
    try writeFile(scratch.url("in.json"), [(corpus.input, 1)])
    #expect(
      corpus.bad == 100 && corpus.good == 2_000 && corpus.atBoundaries >= 8,
      "\(corpus.atBoundaries) at boundaries")
    #expect(corpus.input.count > 8 << 20, "large enough for several batches of the parallel reader")

    var runs: [(threads: String, stdout: [UInt8], errors: [String], rejects: [UInt8])] = []
    for threads in ["1", "2", "4"] {
      let result = try runToFile(
        ["--push", "--stats", "-j", threads, "--rejects", "rejects-\(threads).txt", "in.json"],
        in: scratch,
        stdout: "out-\(threads).txt")
      #expect(
        result.status == 1 && !result.signaled, "-j \(threads): \(result.description.prefix(2000))")
      let stdout = Array(try Data(contentsOf: scratch.url("out-\(threads).txt")))
      let rejects = Array(try Data(contentsOf: scratch.url("rejects-\(threads).txt")))
      var lines = result.stderr.split(separator: "\n", omittingEmptySubsequences: false).map(
        String.init)
      #expect(lines.last == "", "stderr ends with a newline")
      lines.removeLast()
      let stats = lines.popLast() ?? ""
      #expect(
        stats.hasPrefix("\(program): \(corpus.good + corpus.strayGood + corpus.bad) documents, ")
          && stats.contains(", \(corpus.bad) errors; "),
        "-j \(threads): --stats documents = good + bad, errors = bad: \(stats)")

      #expect(
        sameBytes(stdout, corpus.expectedOutput),
        "-j \(threads): stdout \(firstDifference(stdout, corpus.expectedOutput))")
      #expect(
        sameBytes(rejects, corpus.expectedRejects),
        "-j \(threads): rejects \(firstDifference(rejects, corpus.expectedRejects))")
      #expect(lines.count == corpus.bad, "-j \(threads): one error per bad document")
      for (index, (actual, expected)) in zip(lines, corpus.expectedErrors).enumerated()
      where actual + "\n" != expected {
        Issue.record(
          "-j \(threads): error \(index + 1):\n  actual:   \(actual)\n  expected: \(expected)")
        break
      }
      runs.append((threads, stdout, lines, rejects))
    }
    for run in runs.dropFirst() {
      #expect(sameBytes(run.stdout, runs[0].stdout), "-j \(run.threads) stdout differs from -j 1")
      #expect(run.errors == runs[0].errors, "-j \(run.threads) stderr differs from -j 1")
      #expect(sameBytes(run.rejects, runs[0].rejects), "-j \(run.threads) rejects differ from -j 1")
    }
  }
}

/// Where two byte strings first differ, with some context.
private func firstDifference(_ actual: [UInt8], _ expected: [UInt8]) -> String {
  let index =
    zip(actual, expected).enumerated().first { $0.element.0 != $0.element.1 }?.offset
    ?? min(actual.count, expected.count)
  let lineStart = expected[..<min(index, expected.count)].lastIndex(of: 0x0A).map { $0 + 1 } ?? 0
  let line = expected[..<min(index, expected.count)].filter { $0 == 0x0A }.count + 1
  return
    "differ at byte \(index) (expected line \(line)), actual \(actual.count) bytes, expected \(expected.count):\n"
    + "  actual:   \(preview(Array(actual[min(lineStart, actual.count)..<min(index + 80, actual.count)]), 200))\n"
    + "  expected: \(preview(Array(expected[lineStart..<min(index + 80, expected.count)]), 200))"
}

/// A stream of 2,000 good documents (about 5 KB each, some pretty-printed) and 100 bad ones of
/// every kind, never two bad ones in a row, with what the program must make of it.
private struct KeepGoingCorpus {
  var input: [UInt8] = []
  var expectedOutput: [UInt8] = []
  var expectedRejects: [UInt8] = []
  var expectedErrors: [String] = []
  var good = 0
  /// Good documents followed by a stray `]` on their line (the `]` is the bad one).
  var strayGood = 0
  var bad = 0
  /// Bad documents placed at a batch boundary of the parallel reader.
  var atBoundaries = 0
  private var line = 1

  /// The bad documents: (text of its line, column of the error, message after `error: `).
  /// Each gets a unique `_id` from `id`.
  static func badDocument(kind: Int, id: String) -> (
    text: [UInt8], column: Int, message: String, extraGood: [UInt8]?
  ) {
    let cutShort =
      "malformed JSON: the document is cut short at the end of its line (a truncated record?); the next line starts a new document"
    let hint = "; a file holding one array of documents is read in list framing (--format list)"
    switch kind % 14 {
    case 0:  // cut after a comma
      let text = "{\"_id\":\"\(id)\",\"a\":1,"
      return (bytes(text), text.count + 1, "document \"\(id)\": \(cutShort)", nil)
    case 1:  // cut after a colon
      let text = "{\"_id\":\"\(id)\",\"a\":{\"b\":"
      return (bytes(text), text.count + 1, "document \"\(id)\": \(cutShort)", nil)
    case 2:  // cut inside a string: the newline is a raw control character in it
      let text = "{\"_id\":\"\(id)\",\"a\":\"half a str"
      return (
        bytes(text), text.count + 1,
        "document \"\(id)\": malformed JSON: invalid character inside string", nil
      )
    case 3:  // a garbage line
      return (bytes("garbage \(id) here"), 1, "malformed JSON: invalid character", nil)
    case 4:  // an extra `]` inside a document
      let text = "{\"_id\":\"\(id)\",\"a\":[1]]}"
      return (
        bytes(text), text.count - 1,
        "document \"\(id)\": malformed JSON: after key and value, inside map, I expect ',' or '}'",
        nil
      )
    case 5:  // a stray `]` after a good document on the same line: the document is good
      let document = "{\"_id\":\"\(id)\",\"ok\":true}"
      return (
        bytes(document + "]"), document.count + 1,
        "malformed JSON: unallowed token at this point in JSON text",
        bytes(document + "\n")
      )
    case 6:
      return (
        bytes("[\"\(id)\",{\"a\":1}]"), 1, "document is not a JSON object (it is an array)" + hint,
        nil
      )
    case 7:
      return (bytes("\"\(id)\""), 1, "document is not a JSON object (it is a string)", nil)
    case 8:
      return (bytes("42"), 1, "document is not a JSON object (it is a number)", nil)
    case 9:
      return (
        bytes(kind % 28 == 9 ? "null" : "true"), 1,
        "document is not a JSON object (it is \(kind % 28 == 9 ? "null" : "a boolean"))", nil
      )
    case 10:  // duplicate _attachments
      let prefix = "{\"_id\":\"\(id)\",\"_attachments\":{\"x\":{\"digest\":\"d\"}},"
      return (
        bytes(prefix + "\"_attachments\":{}}"), prefix.count + 1,
        "document \"\(id)\": more than one top-level \"_attachments\" member; refusing to guess which one is meant",
        nil
      )
    case 11:  // non-object _attachments with blobs
      let prefix = "{\"_id\":\"\(id)\",\"p\":{\"@type\":\"blob\",\"digest\":\"d\"},"
      let (value, what) = kind % 28 == 11 ? ("\"oops\"", "a string") : ("[1]", "an array")
      return (
        bytes(prefix + "\"_attachments\":\(value)}"), prefix.count + 1,
        "document \"\(id)\": \"_attachments\" is \(what), not an object, and the document has blobs: push cannot add their entries without losing data",
        nil
      )
    case 12:  // invalid UTF-8 (Latin-1 é)
      let prefix = "{\"_id\":\"\(id)\",\"s\":\"caf"
      return (
        bytes(prefix) + [0xE9] + bytes("\"}"), prefix.count + 1,
        "document \"\(id)\": malformed JSON: invalid UTF-8 (byte 0xE9)", nil
      )
    default:  // a byte-order mark at the start of a line
      return (
        [0xEF, 0xBB, 0xBF] + bytes("{\"_id\":\"\(id)\"}"), 1,
        "malformed JSON: a byte-order mark (U+FEFF) inside the input; only its very start may have one",
        nil
      )
    }
  }

  private static let alphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789")

  /// A good document's input text, its number of lines, and its --push output.
  static func goodDocument(_ index: Int, padding: Int) -> (
    text: [UInt8], lines: Int, pushed: [UInt8]
  ) {
    let pad = String(repeating: alphabet[index % alphabet.count], count: padding)
    let blob = "{\"@type\":\"blob\",\"digest\":\"sha1-\(index)\"}"
    let pushed = bytes(
      "{\"_id\":\"doc-\(index)\",\"pad\":\"\(pad)\",\"p\":\(blob),\"_attachments\":{\"$.p\":{\"digest\":\"sha1-\(index)\"}}}\n"
    )
    if index % 37 == 5 {
      // Pretty-printed over four lines; the inner lines do not start with `{`.
      return (
        bytes("{\n  \"_id\": \"doc-\(index)\",\n  \"pad\": \"\(pad)\", \"p\": \(blob)\n}\n"), 4,
        pushed
      )
    }
    return (bytes("{\"_id\":\"doc-\(index)\",\"pad\":\"\(pad)\",\"p\":\(blob)}\n"), 1, pushed)
  }

  private mutating func addGood(_ document: (text: [UInt8], lines: Int, pushed: [UInt8])) {
    input += document.text
    expectedOutput += document.pushed
    line += document.lines
    good += 1
  }

  private mutating func addBad(kind: Int) {
    let (text, column, message, extraGood) = Self.badDocument(kind: kind, id: "bad-\(bad)")
    input += text + [0x0A]
    if let extraGood {
      expectedOutput += extraGood
      expectedRejects += bytes("]\n")
      strayGood += 1
    } else {
      expectedRejects += text + [0x0A]
    }
    expectedErrors.append(errorLine("in.json", line, column, message))
    line += 1
    bad += 1
  }

  /// 2,000 good documents and 100 bad ones. Most bad ones are at pseudo-random places; about
  /// ten sit where the parallel reader cuts its 1 MiB batches (before the last line starting
  /// with `{` before each MiB): alternately the last document of a batch and the first of the
  /// next. (The test is valid whatever the batch size; these places only make it sharper.)
  static func make() -> KeepGoingCorpus {
    var corpus = KeepGoingCorpus()
    var random: UInt64 = 0x9E37_79B9_7F4A_7C15
    func next(_ bound: Int) -> Int {
      random = random &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      return Int((random >> 33) % UInt64(bound))
    }
    let goodCount = 2_000
    let badCount = 100
    var boundary = 1 << 20
    var boundaries = 0
    var kind = 0
    var previousWasBad = true  // no bad document first
    var index = 0
    while index < goodCount {
      var document = goodDocument(index, padding: 1_000 + next(8_000))
      if corpus.input.count + document.text.count > boundary {
        if !previousWasBad && corpus.bad < badCount {
          if boundaries % 2 == 0 {
            // The bad document ends a batch: it comes just before the document that crosses.
            corpus.addBad(kind: kind)
          } else {
            // The bad document begins a batch: a good one ends a few bytes before the
            // boundary, the bad one crosses it.
            let overhead = goodDocument(index, padding: 0).text.count
            corpus.addGood(
              goodDocument(index, padding: max(0, boundary - corpus.input.count - overhead - 5)))
            index += 1
            corpus.addBad(kind: kind)
            document = goodDocument(index, padding: 1_000 + next(8_000))
          }
          kind += 1
          boundaries += 1
          corpus.atBoundaries += 1
        }
        boundary += 1 << 20
      }
      corpus.addGood(document)
      index += 1
      previousWasBad = false
      // The other bad documents: scattered (selection sampling), never right before a boundary.
      let remainingBad = badCount - corpus.bad
      let remainingGood = goodCount - index
      if remainingBad > 0 && remainingGood > 0 && next(remainingGood) < remainingBad
        && corpus.input.count + 10_000 < boundary
      {
        corpus.addBad(kind: kind)
        kind += 1
        previousWasBad = true
      }
    }
    return corpus
  }
}
