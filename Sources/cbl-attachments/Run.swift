import Glibc
import LegacyAttachments

/// One run of the program: checks the files it is given, opens the inputs in order, feeds them
/// to the converter, reports.
struct Run {
  let invocation: Invocation

  /// Runs and returns the exit status.
  func execute() -> Int32 {
    var status: Int32 = 0
    let started = monotonicSeconds()
    let standardOutput = try? SystemFileDescriptor.standardOutput.status()
    let standardError = try? SystemFileDescriptor.standardError.status()
    var output: OutputFile? = nil
    var sink = FileDescriptorSink(.standardOutput)
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
    // Refused before anything is opened: opening a FIFO given to -o waits for its reader.
    if let path = invocation.rejectsPath,
      let refusal = refusal(ofRejects: path, output: outputPath, standardOutput: standardOutput)
    {
      printError(refusal)
      return 2
    }
    // The slip of the in-place recipe without its input (`-o dump.ndjson` alone): a file with
    // something in it is not replaced by what a terminal gives, nor (below) by nothing.
    let guardedSize = outputPath.flatMap { guardedOutputSize($0) }
    if let path = outputPath, let size = guardedSize, isatty(0) == 1 {
      CommandMessages.usage(CommandMessages.outputFromTerminal(path, size: size)).forEach {
        printError($0)
      }
      return 2
    }
    if let path = outputPath {
      do {
        let file = try OutputFile(path, inputs: invocation.files)
        sink = FileDescriptorSink(file.descriptor, name: path)
        output = consume file
      } catch {
        printError(CommandMessages.cannotOpenOutput(path, error))
        return 2
      }
      if let input = output?.replacesInput,
        !invocation.options.mode.writesDocuments || invocation.options.bulkDocs != nil
      {
        printError(CommandMessages.rowsWouldReplaceInput(path, input: input))
        return 2
      }
    }
    var rejects: FileDescriptorSink? = nil
    if let path = invocation.rejectsPath {
      let existed = (try? SystemFileDescriptor.status(ofPath: path)) != nil
      let descriptor: SystemFileDescriptor
      do {
        descriptor = try SystemFileDescriptor.open(path, O_WRONLY | O_CREAT | O_TRUNC)
      } catch {
        printError(CommandMessages.cannotOpenForWriting(path, error))
        return 2
      }
      // The file opened, against the output: names the checks above cannot see through
      // (`/proc/self/fd/N` of the output's temporary file, opened since; a folder mounted
      // twice, where the output's name exists only now that the rejects file was made).
      if let outputPath, let opened = try? descriptor.status(), !opened.isCharacterDevice,
        (try? output?.descriptor.status()).flatMap({ $0 }).map(opened.isSameFile(as:)) == true
          || (try? SystemFileDescriptor.status(ofPath: outputPath)).map(opened.isSameFile(as:))
            == true
      {
        descriptor.close()
        if !existed { try? Paths.remove(path) }
        printError(CommandMessages.rejectsIsOutputFile(path))
        return 2
      }
      rejects = FileDescriptorSink(descriptor, name: path)
    }
    if let blobs = invocation.options.blobs {
      // The store is checked before any input is read (pull and upgrade, which store bodies,
      // may make its last level).
      do {
        try BlobStoreOptions.check(
          blobs, creating: invocation.options.mode == .pull || invocation.options.mode == .upgrade)
      } catch {
        let hint =
          error.holdsDatabaseStore
          ? " (--blobs \(error.store ?? error.directory + "/Attachments"))" : ""
        printError("\(program): \(error)" + hint)
        return 2
      }
    }
    if invocation.options.mode == .pull && invocation.options.bulkDocs != nil {
      // Sync Gateway keeps no attachment that is only a blob: pulled documents lose them there.
      let strict = invocation.options.strict
      printError(CommandMessages.pullIntoBulkDocs(strict: strict))
      if strict { status = 1 }
    }
    let converter: any InputConverter
    if let multipart = invocation.multipart {
      converter = MultipartConverter(
        options: invocation.options, multipart: multipart, output: sink, rejects: rejects)
    } else {
      let stream = StreamConverter(options: invocation.options, output: sink, rejects: rejects)
      stream.unbuffered = invocation.unbuffered
      stream.jobs = invocation.jobs ?? defaultJobs()
      converter = stream
    }
    var progress: ProgressLine? = nil
    if invocation.progress { progress = ProgressLine() }
    converter.diagnosticHandler = { diagnostic, input in
      progress?.clear()
      printError(
        diagnostic.formatted(inputName: input) + CommandMessages.advice(diagnostic.advice))
      if diagnostic.severity == .error { status = max(status, 1) }
    }

    // Whether an input stopped or was abandoned: its rest is in no file.
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
          status = 2
          continue
        }
      }
      defer { if file != "-" { descriptor.close() } }
      if outputPath == nil, let output = standardOutput, output.isRegularFile,
        let input = try? descriptor.status(), input.isSameFile(as: output)
      {
        // Reading what is being written could go on for ever (`>>`), or find nothing (`>`).
        printError(CommandMessages.inputIsOutput(name))
        status = 2
        continue
      }
      if let errors = standardError, errors.isRegularFile,
        let input = try? descriptor.status(), input.isSameFile(as: errors)
      {
        // (`2>> dump`): its own messages would be read back as input.
        printError(CommandMessages.inputIsStandardError(name))
        status = 2
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
          status = 2
          continue
        }
        exitForWriteError(error)
      }
      if outcome != .completed { status = max(status, 1) }
      if outcome != .completed { incomplete = true }
      if outcome == .stopped { break }
    }
    progress?.clear()
    do {
      try converter.finish()
    } catch {
      exitForWriteError(error)
    }
    let statistics = converter.statistics
    if invocation.options.mode == .check {
      printError(CommandMessages.checkSummary(statistics))
      if statistics.rows > 0 { status = max(status, 1) }
    }
    if invocation.stats {
      printError(
        CommandMessages.statistics(statistics, seconds: monotonicSeconds() - started))
    }
    if let output = output.take() {
      let path = output.path
      let existed = output.existed
      // In place, the input is replaced only if every byte of it is in the output or the
      // rejects file (docs/guide.md, "Bad input").
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
      if !keep {
        printError(
          fromNothing && status < 2
            ? CommandMessages.outputFromNothing(path, size: guardedSize!)
            : status < 2
              ? CommandMessages.inputNotReplaced(path, stopped: incomplete)
              : CommandMessages.outputNotWritten(path, existed: existed))
        return 2
      }
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
