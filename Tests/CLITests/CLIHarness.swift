import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

// A small shell-test harness in the spirit of jq's `tests/shtest`: run the real `cbl-attachments`
// executable as a subprocess and compare standard output, standard error and the exit status
// exactly.

/// What one run of the program produced.
struct CLIResult: CustomStringConvertible {
  var stdout: [UInt8]
  var stderr: String
  /// The exit status, or the signal number when `signaled`.
  var status: Int32
  var signaled: Bool

  var out: String { String(decoding: stdout, as: UTF8.self) }

  var description: String {
    "status \(signaled ? "signal " : "")\(status)\n--- stdout:\n\(out)--- stderr:\n\(stderr)---"
  }
}

enum CLIError: Error, CustomStringConvertible {
  case executableNotFound([String])
  var description: String {
    switch self {
    case .executableNotFound(let tried):
      "cbl-attachments executable not found; tried:\n" + tried.joined(separator: "\n")
    }
  }
}

/// Finds and runs the `cbl-attachments` executable.
enum CLI {
  static let name = "cbl-attachments"

  /// The executable's path. SwiftPM builds the executable target into the same products
  /// directory as the test bundle (`<build-path>/<triple>/<configuration>/`), whatever
  /// `--build-path` was; `CBL_ATTACHMENTS` overrides the search.
  static let executablePath: Result<String, CLIError> = {
    var candidates: [String] = []
    if let path = ProcessInfo.processInfo.environment["CBL_ATTACHMENTS"], !path.isEmpty {
      candidates.append(path)
    }
    var directories: [URL] = []
    // On Linux the test bundle (`*.xctest`) is itself the running executable.
    if let running = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
      directories.append(URL(fileURLWithPath: running).deletingLastPathComponent())
    }
    if let first = CommandLine.arguments.first, first.contains("/") {
      directories.append(
        URL(fileURLWithPath: first).resolvingSymlinksInPath().deletingLastPathComponent())
    }
    directories.append(Bundle.main.bundleURL)
    directories.append(Bundle.main.bundleURL.deletingLastPathComponent())
    for bundle in Bundle.allBundles where bundle.bundleURL.pathExtension == "xctest" {
      directories.append(bundle.bundleURL.deletingLastPathComponent())
      directories.append(bundle.bundleURL.appendingPathComponent("Contents/MacOS"))
    }
    // Last resort: the package's default build directories.
    let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
      .deletingLastPathComponent().deletingLastPathComponent()
    for configuration in ["debug", "release"] {
      directories.append(package.appendingPathComponent(".build/\(configuration)"))
    }
    candidates += directories.map { $0.appendingPathComponent(name).path }
    for candidate in candidates {
      var isDirectory: ObjCBool = false
      if FileManager.default.fileExists(atPath: candidate, isDirectory: &isDirectory),
        !isDirectory.boolValue, FileManager.default.isExecutableFile(atPath: candidate)
      {
        return .success(candidate)
      }
    }
    return .failure(.executableNotFound(candidates))
  }()

  static func executable() throws -> String { try executablePath.get() }

  /// Starts the program with `arguments`, its standard input, output and error on pipes, for
  /// tests that talk to it while it runs. The caller kills it when done.
  static func start(_ arguments: [String]) throws -> (
    process: Process, input: Pipe, output: Pipe, errors: Pipe
  ) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: try executable())
    process.arguments = arguments
    let input = Pipe()
    let output = Pipe()
    let errors = Pipe()
    process.standardInput = input
    process.standardOutput = output
    process.standardError = errors
    try process.run()
    return (process, input, output, errors)
  }

  /// Runs the program with `arguments`, `stdin` as standard input (a regular file), in
  /// `directory`. Standard output goes to `stdoutPath` when given (e.g. `/dev/full`).
  static func run(
    _ arguments: [String], stdin: [UInt8] = [], in directory: URL? = nil,
    stdoutPath: String? = nil
  ) throws -> CLIResult {
    try launch(
      URL(fileURLWithPath: executable()), arguments, stdin: stdin, in: directory,
      stdoutPath: stdoutPath)
  }

  /// Runs `script` with `/bin/sh -c`, with `$EXE` set to the program's path.
  static func shell(_ script: String, stdin: [UInt8] = [], in directory: URL? = nil) throws
    -> CLIResult
  {
    var environment = ProcessInfo.processInfo.environment
    environment["EXE"] = try executable()
    return try launch(
      URL(fileURLWithPath: "/bin/sh"), ["-c", script], stdin: stdin, in: directory,
      environment: environment)
  }

  private static func launch(
    _ executable: URL, _ arguments: [String], stdin: [UInt8], in directory: URL?,
    stdoutPath: String? = nil, environment: [String: String]? = nil
  ) throws -> CLIResult {
    let scratch = try Scratch()
    let inputURL = try scratch.write("stdin", stdin)
    let outURL = scratch.url("stdout")
    let errURL = scratch.url("stderr")
    _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
    _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)

    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    if let directory { process.currentDirectoryURL = directory }
    var env = environment ?? ProcessInfo.processInfo.environment
    env["LC_ALL"] = "C"
    process.environment = env
    let input = try FileHandle(forReadingFrom: inputURL)
    let output = try FileHandle(forWritingTo: stdoutPath.map { URL(fileURLWithPath: $0) } ?? outURL)
    let errors = try FileHandle(forWritingTo: errURL)
    defer {
      try? input.close()
      try? output.close()
      try? errors.close()
    }
    process.standardInput = input
    process.standardOutput = output
    process.standardError = errors
    try process.run()
    process.waitUntilExit()
    return CLIResult(
      stdout: stdoutPath == nil ? [UInt8](try Data(contentsOf: outURL)) : [],
      stderr: String(decoding: try Data(contentsOf: errURL), as: UTF8.self),
      status: process.terminationStatus,
      signaled: process.terminationReason == .uncaughtSignal)
  }
}

/// A temporary directory, removed when the last reference goes away.
final class Scratch {
  let directory: URL

  init() throws {
    directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("cbl-attachments-cli-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
  }

  deinit { try? FileManager.default.removeItem(at: directory) }

  func url(_ name: String) -> URL { directory.appendingPathComponent(name) }

  @discardableResult
  func write(_ name: String, _ bytes: [UInt8]) throws -> URL {
    let target = url(name)
    try Data(bytes).write(to: target)
    return target
  }

  @discardableResult
  func write(_ name: String, _ text: String) throws -> URL {
    try write(name, Array(text.utf8))
  }

  func read(_ name: String) throws -> String {
    String(decoding: try Data(contentsOf: url(name)), as: UTF8.self)
  }
}

/// The two lines of every usage error.
func usageError(_ message: String) -> String {
  "cbl-attachments: error: \(message)\nTry 'cbl-attachments --help' for more information.\n"
}

/// Asserts one run's exact standard output, standard error and exit status.
func expectRun(
  _ result: CLIResult, stdout: String, stderr: String, status: Int32,
  sourceLocation: SourceLocation = #_sourceLocation
) {
  #expect(result.out == stdout, "standard output\n\(result)", sourceLocation: sourceLocation)
  #expect(result.stderr == stderr, "standard error\n\(result)", sourceLocation: sourceLocation)
  #expect(
    result.status == status && !result.signaled, "exit status\n\(result)",
    sourceLocation: sourceLocation)
}
