import Glibc
import LegacyAttachments

/// One run of the program: checks the files it is given, opens the inputs in order, feeds them
/// to the converter, reports.
struct Run {
  let invocation: Invocation

  /// Where a run writes: the output (standard output, or `-o`'s file replaced at the end) and
  /// the rejects file.
  private struct Destinations: ~Copyable {
    /// `-o`'s path, nil for standard output (also when it names the file standard output is).
    var outputPath: String?
    var output: OutputFile?
    var sink: FileDescriptorSink
    var rejects: FileDescriptorSink?
    /// The size of the file `-o` names when an empty standard input must not replace it.
    var guardedSize: Int64?
  }

  /// Runs and returns the exit status.
  func execute() -> Int32 {
    let started = monotonicSeconds()
    let standardOutput = try? SystemFileDescriptor.standardOutput.status()
    guard var destinations = openDestinations(standardOutput: standardOutput),
      checkBlobStore()
    else { return 2 }
    // Raised by the diagnostics as they come, and by the steps below.
    let status = ExitStatus()
    if invocation.options.mode == .pull && invocation.options.bulkDocs != nil {
      // Sync Gateway keeps no attachment that is only a blob: pulled documents lose them there.
      let strict = invocation.options.strict
      printError(CommandMessages.pullIntoBulkDocs(strict: strict))
      if strict { status.raise(to: 1) }
    }
    let converter = makeConverter(destinations)
    let progress = invocation.progress ? ProgressLine() : nil
    converter.diagnosticHandler = { diagnostic, input in
      progress?.clear()
      printError(
        diagnostic.formatted(inputName: input) + CommandMessages.advice(diagnostic.advice))
      if diagnostic.severity == .error { status.raise(to: 1) }
    }
    let incomplete = convertInputs(
      with: converter, progress: progress, writingTo: destinations.outputPath,
      standardOutput: standardOutput, status: status)
    do {
      try converter.finish()
    } catch {
      exitForWriteError(error)
    }
    report(converter.statistics, since: started, status: status)
    guard let output = destinations.output.take() else { return status.value }
    return finish(
      output, status: status.value, incomplete: incomplete, statistics: converter.statistics,
      guardedSize: destinations.guardedSize)
  }

  /// Opens the output and the rejects file, after the checks that must come first; nil (the
  /// message printed) when the run must not go on.
  private func openDestinations(standardOutput: FileStatus?) -> Destinations? {
    // `-o /dev/stdout`, or the very file standard output is (`-o log >> log`): standard output,
    // as `-o -` (replacing the file would lose what the shell put there, or will).
    let outputPath = invocation.outputPath.flatMap { path -> String? in
      if let target = try? SystemFileDescriptor.status(ofPath: path),
        standardOutput?.isSameFile(as: target) == true
      {
        return nil
      }
      return path
    }
    var destinations = Destinations(
      outputPath: outputPath, output: nil, sink: FileDescriptorSink(.standardOutput),
      rejects: nil, guardedSize: outputPath.flatMap { guardedOutputSize($0) })
    // Refused before anything is opened: opening a FIFO given to -o waits for its reader.
    if let path = invocation.rejectsPath,
      let refusal = refusal(ofRejects: path, output: outputPath, standardOutput: standardOutput)
    {
      printError(refusal)
      return nil
    }
    // The slip of the in-place recipe without its input (`-o dump.ndjson` alone): a file with
    // something in it is not replaced by what a terminal gives, nor (at the end) by nothing.
    if let path = outputPath, let size = destinations.guardedSize, isatty(0) == 1 {
      for line in CommandMessages.usage(CommandMessages.outputFromTerminal(path, size: size)) {
        printError(line)
      }
      return nil
    }
    if let path = outputPath {
      do {
        let file = try OutputFile(path, inputs: invocation.files)
        destinations.sink = FileDescriptorSink(file.descriptor, name: path)
        destinations.output = consume file
      } catch {
        printError(CommandMessages.cannotOpenOutput(path, error))
        return nil
      }
      if let input = destinations.output?.replacesInput,
        !invocation.options.mode.writesDocuments || invocation.options.bulkDocs != nil
      {
        printError(CommandMessages.rowsWouldReplaceInput(path, input: input))
        return nil
      }
    }
    if let path = invocation.rejectsPath {
      guard let rejects = openRejects(path, output: &destinations) else { return nil }
      destinations.rejects = rejects
    }
    return destinations
  }

  /// Opens (truncates) the rejects file, unless it turns out to be the output; nil (the message
  /// printed) when it cannot be used.
  private func openRejects(_ path: String, output destinations: inout Destinations)
    -> FileDescriptorSink?
  {
    let existed = (try? SystemFileDescriptor.status(ofPath: path)) != nil
    let descriptor: SystemFileDescriptor
    do {
      descriptor = try SystemFileDescriptor.open(path, O_WRONLY | O_CREAT | O_TRUNC)
    } catch {
      printError(CommandMessages.cannotOpenForWriting(path, error))
      return nil
    }
    // The file opened, against the output: names the checks before cannot see through
    // (`/proc/self/fd/N` of the output's temporary file, opened since; a folder mounted
    // twice, where the output's name exists only now that the rejects file was made).
    if let outputPath = destinations.outputPath, let opened = try? descriptor.status(),
      !opened.isCharacterDevice,
      (try? destinations.output?.descriptor.status()).flatMap({ $0 }).map(opened.isSameFile(as:))
        == true
        || (try? SystemFileDescriptor.status(ofPath: outputPath)).map(opened.isSameFile(as:))
          == true
    {
      descriptor.close()
      if !existed { try? Paths.remove(path) }
      printError(CommandMessages.rejectsIsOutputFile(path))
      return nil
    }
    return FileDescriptorSink(descriptor, name: path)
  }

  /// With `--blobs`: the store is checked before any input is read (pull and upgrade, which
  /// store bodies, may make its last level). False (the message printed) when it is unusable.
  private func checkBlobStore() -> Bool {
    guard let blobs = invocation.options.blobs else { return true }
    do {
      try BlobStoreOptions.check(
        blobs, creating: invocation.options.mode == .pull || invocation.options.mode == .upgrade)
      return true
    } catch {
      let hint =
        error.holdsDatabaseStore
        ? " (--blobs \(error.store ?? error.directory + "/Attachments"))" : ""
      printError("\(program): \(error)" + hint)
      return false
    }
  }

  private func makeConverter(_ destinations: borrowing Destinations) -> any InputConverter {
    if let multipart = invocation.multipart {
      return MultipartConverter(
        options: invocation.options, multipart: multipart, output: destinations.sink,
        rejects: destinations.rejects)
    }
    let stream = StreamConverter(
      options: invocation.options, output: destinations.sink, rejects: destinations.rejects)
    stream.unbuffered = invocation.unbuffered
    stream.jobs = invocation.jobs ?? defaultJobs()
    return stream
  }

  /// Converts each input in order. Returns whether one stopped or was abandoned (its rest is in
  /// no file).
  private func convertInputs(
    with converter: any InputConverter, progress: ProgressLine?, writingTo outputPath: String?,
    standardOutput: FileStatus?, status: ExitStatus
  ) -> Bool {
    let standardError = try? SystemFileDescriptor.standardError.status()
    var incomplete = false
    for file in invocation.files {
      let name = file == "-" ? "<stdin>" : file
      let descriptor: SystemFileDescriptor
      if file == "-" {
        descriptor = .standardInput
      } else {
        do {
          descriptor = try SystemFileDescriptor.open(file, O_RDONLY)
        } catch {
          printError(CommandMessages.cannotOpen(file, error))
          status.raise(to: 2)
          continue
        }
      }
      defer { if file != "-" { descriptor.close() } }
      if let input = try? descriptor.status(),
        let refusal = refusal(
          ofInput: input, name: name, standardOutput: outputPath == nil ? standardOutput : nil,
          standardError: standardError)
      {
        printError(refusal)
        status.raise(to: 2)
        continue
      }
      progress?.begin(input: name, descriptor: descriptor)
      if let line = progress {
        converter.progressHandler = { bytes, statistics in
          line.update(bytes: bytes, statistics: statistics)
        }
      }
      let outcome: InputOutcome
      do {
        outcome = try converter.convert(descriptor, name: name)
      } catch {
        progress?.clear()
        if error.operation == .read {
          printError(CommandMessages.cannotRead(name, error))
          status.raise(to: 2)
          continue
        }
        exitForWriteError(error)
      }
      if outcome != .completed {
        status.raise(to: 1)
        incomplete = true
      }
      if outcome == .stopped { break }
    }
    progress?.clear()
    return incomplete
  }

  /// Why an input must not be read, if it must not: it is the file standard output writes
  /// (reading what is being written could go on for ever, `>>`, or find nothing, `>`), or the
  /// one standard error writes (`2>> dump`: the run's own messages would be read back).
  private func refusal(
    ofInput input: FileStatus, name: String, standardOutput: FileStatus?,
    standardError: FileStatus?
  ) -> String? {
    if let output = standardOutput, output.isRegularFile, input.isSameFile(as: output) {
      return CommandMessages.inputIsOutput(name)
    }
    if let errors = standardError, errors.isRegularFile, input.isSameFile(as: errors) {
      return CommandMessages.inputIsStandardError(name)
    }
    return nil
  }

  /// `--check`'s summary and `--stats`, on standard error.
  private func report(_ statistics: ConversionStatistics, since started: Double, status: ExitStatus)
  {
    if invocation.options.mode == .check {
      printError(CommandMessages.checkSummary(statistics))
      if statistics.rows > 0 { status.raise(to: 1) }
    }
    if invocation.stats {
      printError(CommandMessages.statistics(statistics, seconds: monotonicSeconds() - started))
    }
  }

  /// Replaces `-o`'s file with the output, or keeps it as it was; returns the exit status.
  private func finish(
    _ output: consuming OutputFile, status: Int32, incomplete: Bool,
    statistics: ConversionStatistics, guardedSize: Int64?
  ) -> Int32 {
    let path = output.path
    let existed = output.existed
    // In place, the input is replaced only if every byte of it is in the output or the rejects
    // file (docs/guide.md, "Bad input").
    // (With --rejects, -k is implied: nothing stops, and what is abandoned is in the rejects.)
    let lost =
      invocation.rejectsPath == nil
      && (incomplete || statistics.errors > 0 || statistics.bytesSkipped > 0)
    let inPlace = output.replacesInput != nil
    let fromNothing = guardedSize != nil && statistics.bytesIn == 0
    let keep = status < 2 && !(inPlace && lost) && !fromNothing
    do {
      try output.finish(keep: keep)
    } catch {
      printError(CommandMessages.cannotReplace(path, error))
      return 2
    }
    guard keep else {
      printError(
        fromNothing && status < 2
          ? CommandMessages.outputFromNothing(path, size: guardedSize!)
          : status < 2
            ? CommandMessages.inputNotReplaced(path, stopped: incomplete)
            : CommandMessages.outputNotWritten(path, existed: existed))
      return 2
    }
    return status
  }

  /// The size of the regular file `-o` names, when the run reads standard input only because
  /// no input was named and the file has something in it: the file the in-place recipe's slip
  /// would empty.
  private func guardedOutputSize(_ path: String) -> Int64? {
    guard invocation.readsImpliedStandardInput,
      let target = try? SystemFileDescriptor.status(ofPath: path), target.isRegularFile,
      target.size > 0
    else { return nil }
    return target.size
  }

  /// Whether `path` names the existing file `status` describes (a hard link, say).
  private func sameFile(_ path: String, _ status: FileStatus?) -> Bool {
    guard let status, let other = try? SystemFileDescriptor.status(ofPath: path) else {
      return false
    }
    return other.isSameFile(as: status)
  }

  /// Why the rejects file at `path` must not be opened (truncated), if it must not: it is one of
  /// the inputs, standard output or error, or the output file. A character device (`/dev/null`)
  /// is never refused.
  private func refusal(ofRejects path: String, output: String?, standardOutput: FileStatus?)
    -> String?
  {
    let existing = try? SystemFileDescriptor.status(ofPath: path)
    if let output, existing?.isCharacterDevice != true,
      Paths.canonical(output) == Paths.canonical(path)
        || sameFile(output, existing)
    {
      return CommandMessages.rejectsIsOutputFile(path)
    }
    guard let target = existing, !target.isCharacterDevice else { return nil }
    if let input = input(sameAs: target, among: invocation.files) {
      return CommandMessages.rejectsIsInput(path, input: input)
    }
    if output == nil, let standardOutput, standardOutput.isSameFile(as: target) {
      return CommandMessages.rejectsIsOutput(path)
    }
    if let standardError = try? SystemFileDescriptor.standardError.status(),
      standardError.isSameFile(as: target)
    {
      return CommandMessages.rejectsIsStandardError(path)
    }
    return nil
  }
}

/// A run's exit status so far: 0, raised to 1 by a rejected document or finding, to 2 by an
/// input that cannot be read. A reference, since diagnostics raise it from the converter's
/// handler while a step is running.
final class ExitStatus {
  private(set) var value: Int32 = 0

  func raise(to level: Int32) { value = max(value, level) }
}

/// The default for `--jobs`: one thread per processor, at most 8 (beyond that yajl's share of the
/// work no longer dominates and output writing does).
func defaultJobs() -> Int {
  let processors = Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
  return min(max(processors, 1), 8)
}

func monotonicSeconds() -> Double {
  var now = timespec()
  clock_gettime(CLOCK_MONOTONIC, &now)
  return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}

/// What a run needs of a converter: ``StreamConverter`` for JSON, ``MultipartConverter`` for
/// MIME bodies (`--format multipart`).
protocol InputConverter: AnyObject {
  var diagnosticHandler: (ConversionDiagnostic, String) -> Void { get set }
  var progressHandler: ((Int, ConversionStatistics) -> Void)? { get set }
  var statistics: ConversionStatistics { get }
  func convert(_ descriptor: SystemFileDescriptor, name: String) throws(ConversionIOError)
    -> InputOutcome
  func finish() throws(ConversionIOError)
}

extension StreamConverter: InputConverter {}
extension MultipartConverter: InputConverter {}
