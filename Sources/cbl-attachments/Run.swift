import Glibc
import LegacyAttachments

/// One run of the program: opens the inputs in order, feeds them to the converter, reports.
struct Run {
  let invocation: Invocation

  /// Runs and returns the exit status.
  func execute() -> Int32 {
    var status: Int32 = 0
    let started = monotonicSeconds()
    let converter = StreamConverter(
      options: invocation.options, output: FileDescriptorSink(descriptor: 1))
    converter.unbuffered = invocation.unbuffered
    converter.jobs = invocation.jobs ?? defaultJobs()
    if let path = invocation.rejectsPath {
      let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
      guard descriptor >= 0 else {
        printError(
          "\(program): \(path): error: cannot open for writing: \(String(cString: strerror(errno)))"
        )
        return 2
      }
      converter.rejects = FileDescriptorSink(descriptor: descriptor, name: path)
    }
    let isCheck = invocation.options.mode == .check
    var progress: ProgressLine? = nil
    if invocation.progress { progress = ProgressLine() }
    converter.diagnosticHandler = { diagnostic, input in
      progress?.clear()
      printError(diagnostic.formatted(inputName: input))
      if diagnostic.severity == .error { status = max(status, 1) }
    }

    for file in invocation.files {
      let name = file == "-" ? "<stdin>" : file
      let descriptor = file == "-" ? 0 : open(file, O_RDONLY | O_CLOEXEC)
      guard descriptor >= 0 else {
        printError("\(program): \(file): error: cannot open: \(String(cString: strerror(errno)))")
        status = 2
        continue
      }
      defer { if descriptor != 0 { close(descriptor) } }
      progress?.begin(input: name, descriptor: descriptor)
      if let line = progress {
        converter.progressHandler = { bytes, statistics in
          line.update(bytes: bytes, statistics: statistics)
        }
      }
      let outcome: InputOutcome
      do {
        outcome = try converter.convert(descriptor: descriptor, name: name)
      } catch {
        progress?.clear()
        if error.operation == .read {
          printError("\(program): \(name): error: cannot read: \(error)")
          status = 2
          continue
        }
        exitForWriteError(error)
      }
      if outcome != .completed { status = max(status, 1) }
      if outcome == .stopped { break }
    }
    progress?.clear()
    do {
      try converter.finish()
    } catch {
      exitForWriteError(error)
    }
    let statistics = converter.statistics
    if isCheck {
      printError(
        "\(program): checked \(statistics.documents) document\(plural(statistics.documents)): "
          + "\(statistics.rows) finding\(plural(statistics.rows)) in \(statistics.errors) document\(plural(statistics.errors))"
      )
      if statistics.rows > 0 { status = max(status, 1) }
    }
    if invocation.stats {
      printError(summary(statistics, seconds: monotonicSeconds() - started))
    }
    return status
  }

  private func summary(_ statistics: Statistics, seconds: Double) -> String {
    let rate = seconds > 0 ? Double(statistics.bytesIn) / seconds / 1_000_000 : 0
    return "\(program): \(counted(statistics.documents, "document")), "
      + "\(counted(statistics.blobs, "blob")), "
      + "\(counted(statistics.entriesAdded, "entry", "entries")) added, "
      + "\(statistics.entriesRemoved) removed, "
      + "\(counted(statistics.warnings, "warning")), \(counted(statistics.errors, "error")); "
      + "\(counted(statistics.bytesIn, "byte")) in, \(counted(statistics.bytesOut, "byte")) out; "
      + "\(formatted(seconds, digits: 3)) s (\(formatted(rate, digits: 1)) MB/s)"
  }
}

/// "1 blob", "2 blobs".
func counted(_ count: Int, _ singular: String, _ pluralForm: String? = nil) -> String {
  "\(count) \(count == 1 ? singular : pluralForm ?? singular + "s")"
}

func plural(_ count: Int) -> String { count == 1 ? "" : "s" }

/// `value` with a fixed number of decimals, without Foundation.
func formatted(_ value: Double, digits: Int) -> String {
  var scale = 1.0
  for _ in 0..<digits { scale *= 10 }
  let scaled = Int((value * scale).rounded())
  let whole = scaled / Int(scale)
  var fraction = String(scaled % Int(scale))
  while fraction.count < digits { fraction = "0" + fraction }
  return digits == 0 ? "\(whole)" : "\(whole).\(fraction)"
}

func monotonicSeconds() -> Double {
  var now = timespec()
  clock_gettime(CLOCK_MONOTONIC, &now)
  return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}

/// The default for `--jobs`: one thread per processor, at most 8 (beyond that yajl's share of the
/// work no longer dominates and output writing does).
func defaultJobs() -> Int {
  let processors = Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
  return min(max(processors, 1), 8)
}
