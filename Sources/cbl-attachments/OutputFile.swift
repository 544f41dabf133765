import Glibc
import LegacyAttachments

/// Where `--output FILE` writes: a regular file (or a new one) is written under a temporary name
/// beside it and renamed over it at the end (``ReplacementFile``); anything else (`/dev/null`, a
/// FIFO, a terminal) is written directly, as the shell's `>` would.
struct OutputFile: ~Copyable {
  /// The path as given, for messages.
  let path: String
  /// The input (as named in messages) that is this very file, when the run converts in place.
  let replacesInput: String?
  /// Where the converter writes.
  let descriptor: SystemFileDescriptor
  private var replacement: ReplacementFile?

  /// Opens `path` for the run's output. `inputs` are the files the run reads (`-` is standard
  /// input); standard input counts when it is one of them.
  init(_ path: String, inputs: [String]) throws(SystemErrno) {
    self.path = path
    let existing = try? SystemFileDescriptor.status(ofPath: path)
    var replacesInput: String? = nil
    if let existing, existing.isRegularFile {
      for file in inputs {
        let input =
          file == "-"
          ? try? SystemFileDescriptor.standardInput.status()
          : try? SystemFileDescriptor.status(ofPath: file)
        if let input, input.isSameFile(as: existing) {
          replacesInput = file == "-" ? "<stdin>" : file
          break
        }
      }
    }
    self.replacesInput = replacesInput
    if let existing, !existing.isRegularFile, !existing.isDirectory {
      descriptor = try SystemFileDescriptor.open(path, O_WRONLY | O_TRUNC)
      replacement = nil
    } else {
      let file = try ReplacementFile(replacing: path)
      TerminationCleanup.remove(file.temporaryPath)
      descriptor = file.descriptor
      replacement = consume file
    }
  }

  /// Ends the run's output: the new file takes the old one's place (`keep`), or is removed and
  /// the old one stays as it was.
  consuming func finish(keep: Bool) throws(SystemErrno) {
    TerminationCleanup.forget()
    guard let file = replacement.take() else {
      descriptor.close()
      return
    }
    if keep {
      try file.commit()
    } else {
      file.abandon()
    }
  }
}

/// The one temporary file a signal or a failed write must not leave behind: removed when
/// `SIGINT`, `SIGTERM` or `SIGHUP` ends the program, or when it exits after a failed write.
enum TerminationCleanup {
  nonisolated(unsafe) private static var pending: UnsafeMutablePointer<CChar>? = nil

  /// Removes `path` if the program is ended before ``forget()``.
  static func remove(_ path: String) {
    pending = strdup(path)
    for signalNumber in [SIGINT, SIGTERM, SIGHUP] {
      signal(signalNumber) { signalNumber in
        TerminationCleanup.removeNow()
        signal(signalNumber, SIG_DFL)
        raise(signalNumber)
      }
    }
  }

  /// The file is settled (renamed or removed): nothing to remove any more.
  static func forget() {
    let path = pending
    pending = nil
    free(path)
  }

  /// Removes the file now (from a signal handler too: `unlink(2)` only).
  static func removeNow() {
    if let path = pending { unlink(path) }
  }
}

extension ConversionMode {
  /// Whether the mode writes the documents (converted), not rows about them: only such output
  /// may replace an input.
  var writesDocuments: Bool { self == .push || self == .pull || self == .upgrade }
}
