import Foundation
import Testing

/// The program's standard descriptors, signals and limits as a hostile parent may leave them
/// (SPEC.md, "Nothing lost"; exit status). Each case was a finding of a fresh-eyes audit.
@Suite("CLI: closed descriptors, blocked signals, limits")
struct HostileEnvironmentTests {
  let program = "cbl-attachments"
  let input = "{\"_id\":\"a\"}\n[1]\n{\"_id\":\"b\"}\n"
  let notAnObject = "in.ndjson:2:1: error: document is not a JSON object (it is an array)"

  @Test("a closed standard output is not taken by the rejects file: the write fails, status 2")
  func closedOutput() throws {
    let scratch = try Scratch()
    try scratch.write("in.ndjson", input)
    let result = try CLI.shell(
      "\"$EXE\" --push --rejects r.ndjson in.ndjson >&-", in: scratch.directory)
    #expect(result.status == 2 && !result.signaled, "\(result)")
    #expect(
      result.stderr.hasSuffix(
        "\(program): <stdout>: error: write failed: Bad file descriptor\n"), "\(result)")
    let rejects = try scratch.read("r.ndjson")
    #expect(!rejects.contains("_id"), "no converted document in the rejects: \(rejects)")
  }

  @Test("a closed standard error is not taken by the rejects file")
  func closedError() throws {
    let scratch = try Scratch()
    try scratch.write("in.ndjson", input)
    let result = try CLI.shell(
      "\"$EXE\" --push --rejects r.ndjson in.ndjson 2>&-", in: scratch.directory)
    expectRun(result, stdout: "{\"_id\":\"a\"}\n{\"_id\":\"b\"}\n", stderr: "", status: 1)
    #expect(try scratch.read("r.ndjson") == "[1]\n")
  }

  @Test("a rejects file that is standard error's file is refused before anything is written")
  func rejectsIsStandardError() throws {
    let scratch = try Scratch()
    try scratch.write("in.ndjson", input)
    let result = try CLI.shell(
      "\"$EXE\" --push --rejects e.txt in.ndjson 2>e.txt", in: scratch.directory)
    expectRun(result, stdout: "", stderr: "", status: 2)
    #expect(
      try scratch.read("e.txt")
        == "\(program): e.txt: error: the rejects file is also standard error; refusing to write"
        + " both to one file\n")
  }

  @Test("a file-size limit fails the write (status 2) and leaves whole documents only")
  func fileSizeLimit() throws {
    let scratch = try Scratch()
    let documents = (0..<4000).map {
      "{\"_id\":\"d\($0)\",\"pad\":\"" + String(repeating: "x", count: 60) + "\"}\n"
    }
    try scratch.write("in.ndjson", documents.joined())
    // 400 blocks (200 KiB in dash's 512-byte blocks, 400 KiB in bash's): less than the output.
    let result = try CLI.shell(
      "ulimit -f 400; \"$EXE\" --push -j 1 in.ndjson > out.ndjson", in: scratch.directory)
    expectRun(
      result, stdout: "",
      stderr: "\(program): <stdout>: error: write failed: File too large\n", status: 2)
    let written = try scratch.read("out.ndjson")
    #expect(documents.joined().hasPrefix(written) && (written.isEmpty || written.hasSuffix("\n")))
    #expect(written.count < documents.joined().count)
  }

  @Test("a non-blocking output pipe with a slow reader gets every byte, each document whole")
  func nonBlockingOutput() throws {
    let scratch = try Scratch()
    let documents = (0..<20000).map { "{\"_id\":\"d\($0)\",\"n\":\($0)}\n" }.joined()
    try scratch.write("in.ndjson", documents)
    var ends: [Int32] = [0, 0]
    #expect(pipe(&ends) == 0)
    // The flag belongs to the pipe's open file, which the child shares.
    #expect(fcntl(ends[1], F_SETFL, fcntl(ends[1], F_GETFL) | O_NONBLOCK) == 0)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: try CLI.executable())
    process.arguments = ["--push", "-j", "2", scratch.url("in.ndjson").path]
    process.standardOutput = FileHandle(fileDescriptor: ends[1], closeOnDealloc: false)
    let errors = Pipe()
    process.standardError = errors
    try process.run()
    close(ends[1])
    var received: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
      let count = read(ends[0], &chunk, chunk.count)
      if count <= 0 { break }
      received += chunk[..<count]
      usleep(200)  // slower than the writer, so that the pipe fills
    }
    close(ends[0])
    process.waitUntilExit()
    let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    #expect(process.terminationStatus == 0 && stderr == "", "\(stderr)")
    #expect(received == Array(documents.utf8))
  }

  @Test("a closed pipe ends the program quietly even when the parent blocked SIGPIPE")
  func blockedBrokenPipe() throws {
    let scratch = try Scratch()
    let documents = (0..<50000).map { "{\"_id\":\"d\($0)\"}\n" }.joined()
    try scratch.write("in.ndjson", documents)
    // A child inherits the mask of the thread that starts it.
    var pipeSignal = sigset_t()
    var previous = sigset_t()
    sigemptyset(&pipeSignal)
    sigaddset(&pipeSignal, SIGPIPE)
    pthread_sigmask(SIG_BLOCK, &pipeSignal, &previous)
    let started = Result { try CLI.start(["--push", scratch.url("in.ndjson").path]) }
    pthread_sigmask(SIG_SETMASK, &previous, nil)
    let (process, _, output, errors) = try started.get()
    _ = output.fileHandleForReading.readData(ofLength: 10)
    try output.fileHandleForReading.close()
    process.waitUntilExit()
    let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    #expect(process.terminationReason == .uncaughtSignal, "\(process.terminationStatus) \(stderr)")
    #expect(process.terminationStatus == SIGPIPE)
    #expect(stderr == "")
  }
}
