import Glibc
import LegacyAttachments

/// Why `--output FILE` cannot be written.
enum OutputFileError: Error {
  /// FILE itself (a directory, a FIFO or device that cannot be opened).
  case cannotOpen(SystemErrno)
  /// The temporary file beside FILE (a folder the user cannot write in, a full disk).
  case cannotCreateTemporary(in: String, SystemErrno)
}

/// Where `--output FILE` writes: a regular file (or a new one) is written under a temporary name
/// beside it and renamed over it at the end (``ReplacementFile``); anything else (`/dev/null`, a
/// FIFO, a terminal) is written directly, as the shell's `>` would.
struct OutputFile: ~Copyable {
  /// The path as given, for messages.
  let path: String
  /// The input (as named in messages) that is this very file, when the run converts in place.
  let replacesInput: String?
  /// Whether the file was there before the run (what a failed run leaves is then that file).
  let existed: Bool
  /// Where the converter writes.
  let descriptor: SystemFileDescriptor
  private var replacement: ReplacementFile?

  /// Opens `path` for the run's output. `inputs` are the files the run reads (`-` is standard
  /// input); standard input counts when it is one of them.
  init(_ path: String, inputs: [String]) throws(OutputFileError) {
    self.path = path
    let existing = try? SystemFileDescriptor.status(ofPath: path)
    existed = existing != nil
    replacesInput = existing.flatMap { $0.isRegularFile ? input(sameAs: $0, among: inputs) : nil }
    if let existing, !existing.isRegularFile, !existing.isDirectory {
      do {
        descriptor = try SystemFileDescriptor.open(path, O_WRONLY | O_TRUNC)
      } catch {
        throw .cannotOpen(error)
      }
      replacement = nil
    } else {
      let file: ReplacementFile
      do {
        file = try ReplacementFile(replacing: path)
      } catch {
        // A directory, or a folder that is not there: as the shell's `>` would say it.
        let folder = ReplacementFile.temporaryFolder(replacing: path)
        let folderIsThere = (try? SystemFileDescriptor.status(ofPath: folder))?.isDirectory == true
        if error.code == EISDIR || ([ENOENT, ENOTDIR].contains(error.code) && !folderIsThere) {
          throw .cannotOpen(error)
        }
        throw .cannotCreateTemporary(in: folder, error)
      }
      TerminationCleanup.remove(
        file.temporaryPath,
        notice: CommandMessages.outputNotWritten(path, existed: existed))
      descriptor = file.descriptor
      replacement = consume file
    }
  }

  /// Ends the run's output: the new file takes the old one's place (`keep`), or is removed and
  /// the old one stays as it was.
  consuming func finish(keep: Bool) throws(SystemErrno) {
    // The temporary file stays registered until it is renamed or removed (the sync may be
    // long, and a signal then must still remove it).
    defer { TerminationCleanup.forget() }
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
/// `SIGINT`, `SIGTERM`, `SIGHUP` or `SIGPIPE` ends the program, or when it exits after a failed
/// write.
enum TerminationCleanup {
  nonisolated(unsafe) private static var pending: UnsafeMutablePointer<CChar>? = nil
  nonisolated(unsafe) private static var notice: String? = nil

  /// Removes `path` if the program is ended before ``forget()``; `notice` is said when a failed
  /// write ends it. A signal the program was started ignoring (`nohup`, a background job's
  /// `SIGINT`) stays ignored.
  static func remove(_ path: String, notice: String) {
    pending = strdup(path)
    Self.notice = notice
    // SIGPIPE too: a `--rejects` pipe whose reader has gone ends the run as it would without
    // `-o`, and the temporary file must not stay.
    for signalNumber in [SIGINT, SIGTERM, SIGHUP, SIGPIPE] {
      let previous = signal(signalNumber) { signalNumber in
        TerminationCleanup.removeNow()
        signal(signalNumber, SIG_DFL)
        raise(signalNumber)
      }
      if let previous, unsafeBitCast(previous, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self)
      {
        signal(signalNumber, SIG_IGN)
      }
    }
  }

  /// The file is settled (renamed or removed): nothing to remove any more. (The path's copy is
  /// kept: a handler on another thread may be reading it.)
  static func forget() {
    pending = nil
    notice = nil
  }

  /// Removes the file now (from a signal handler too: `unlink(2)` only).
  static func removeNow() {
    if let path = pending { unlink(path) }
  }

  /// After a failed write: removes the file and says that the output was not written.
  static func failed() {
    guard let path = pending else { return }
    unlink(path)
    if let notice { printError(notice) }
    forget()
  }
}

/// The input (as messages name it: `<stdin>` for `-`) that is the file `target` describes, if
/// one is.
func input(sameAs target: FileStatus, among inputs: [String]) -> String? {
  for file in inputs {
    let input =
      file == "-"
      ? try? SystemFileDescriptor.standardInput.status()
      : try? SystemFileDescriptor.status(ofPath: file)
    if let input, input.isSameFile(as: target) { return file == "-" ? "<stdin>" : file }
  }
  return nil
}

extension ConversionMode {
  /// Whether the mode writes the documents (converted), not rows about them: only such output
  /// may replace an input.
  var writesDocuments: Bool { self == .push || self == .pull || self == .upgrade }
}
