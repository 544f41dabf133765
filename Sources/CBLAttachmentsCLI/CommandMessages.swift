import Glibc
import LegacyAttachments

/// The messages the command itself writes to standard error (the documents' diagnostics come
/// from the library), each a whole line.
enum CommandMessages {
  static func cannotOpen(_ file: String, _ error: SystemErrno) -> String {
    // `--push push dump.ndjson`: a mode word without its dashes, read as a file.
    let mode = error.code == ENOENT && ConversionMode(rawValue: file) != nil
    return "\(program): \(file): error: cannot open: \(error)"
      + (mode ? " (a mode is --\(file))" : "")
  }

  static func cannotOpenForWriting(_ file: String, _ error: SystemErrno) -> String {
    "\(program): \(file): error: cannot open for writing: \(error)"
  }

  static func cannotOpenOutput(_ file: String, _ error: OutputFileError) -> String {
    switch error {
    case .cannotOpen(let error): cannotOpenForWriting(file, error)
    case .cannotCreateTemporary(let folder, let error):
      // Only a folder that is there gets here: "No such file" then means it makes no new files.
      "\(program): \(file): error: cannot create a temporary file in \(folder) to write it"
        + " (--output renames it over the file at the end): \(error)"
        + (error.code == ENOENT ? " (the folder is there, but takes no new files)" : "")
    }
  }

  static func cannotRead(_ name: String, _ error: ConversionIOError) -> String {
    "\(program): \(name): error: cannot read: \(error)"
  }

  static func writeFailed(_ error: ConversionIOError) -> String {
    "\(program): \(error.target): error: write failed: \(error)"
  }

  static func blobUnreadable(_ error: ConversionIOError) -> String {
    "\(program): \(error.target): error: cannot read from the blob store: \(error); stopping"
  }

  static func blobNotStored(_ error: ConversionIOError) -> String {
    "\(program): \(error.target): error: cannot store in the blob store: \(error); stopping"
  }

  static func rejectsIsInput(_ path: String, input: String) -> String {
    "\(program): \(path): error: the rejects file is also an input (\(input)); refusing to"
      + " overwrite it"
  }

  static func rejectsIsOutput(_ path: String) -> String {
    "\(program): \(path): error: the rejects file is also standard output; refusing to write"
      + " both to one file"
  }

  static func rejectsIsOutputFile(_ path: String) -> String {
    "\(program): \(path): error: the rejects file is also the output file; refusing to write"
      + " both to one file"
  }

  static func rejectsIsStandardError(_ path: String) -> String {
    "\(program): \(path): error: the rejects file is also standard error; refusing to write"
      + " both to one file"
  }

  static func rowsWouldReplaceInput(_ path: String, input: String) -> String {
    "\(program): \(path): error: the output file is also an input (\(input)); --list, --check and"
      + " --bulk-docs do not write its documents back as they were, so it is not replaced"
  }

  static func cannotReplace(_ path: String, _ error: SystemErrno) -> String {
    "\(program): \(path): error: cannot replace: \(error); the file is as it was"
  }

  static func inputNotReplaced(_ path: String, stopped: Bool) -> String {
    "\(program): \(path): error: not replaced: "
      + (stopped
        ? "the input after the error would be lost (keep it with --rejects FILE)"
        : "the rejected documents would be lost (keep them with --rejects FILE)")
      + "; the file is as it was"
  }

  static func outputNotWritten(_ path: String, existed: Bool) -> String {
    "\(program): \(path): error: "
      + (existed
        ? "not replaced, because the run failed; the file is as it was"
        : "not written, because the run failed")
  }

  /// `-o FILE` with no input named, standard input a terminal, FILE a file with something in it.
  static func outputFromTerminal(_ path: String, size: Int64) -> String {
    "-o \(path) would replace a file of \(counted(Int(size), "byte")) with what is typed here:"
      + " standard input is a terminal and no input file is named; name it (in place:"
      + " -o \(path) \(path)), or give - to mean standard input"
  }

  /// `-o FILE` with no input named and nothing on standard input, FILE a file with something
  /// in it: kept.
  static func outputFromNothing(_ path: String, size: Int64) -> String {
    "\(program): \(path): error: not replaced: standard input was empty and no input file is"
      + " named, so the output is empty; the file (\(counted(Int(size), "byte"))) is as it was."
      + " Name the input (in place: -o \(path) \(path)), or give - to mean standard input"
  }

  static func inputIsOutput(_ name: String) -> String {
    "\(program): \(name): error: input file is also standard output; not read (to convert a"
      + " file in place, use -o FILE FILE: a shell's > empties the file before the program runs)"
  }

  static func inputIsStandardError(_ name: String) -> String {
    "\(program): \(name): error: input file is also standard error; not read"
  }

  static func pullIntoBulkDocs(strict: Bool) -> String {
    "\(program): \(strict ? "error" : "warning"): --pull --bulk-docs writes documents without the"
      + " _attachments entries of their blobs; Sync Gateway keeps no attachment that is only a"
      + " blob, so those documents lose their attachments there (push them first)"
  }

  static func argumentNotUTF8(position: Int) -> String {
    "argument \(position) is not valid UTF-8; names, paths and properties must be UTF-8"
  }

  /// What the command line adds to a diagnostic whose library message advises something: the
  /// option that does it.
  static func advice(_ advice: ConversionDiagnostic.Advice?) -> String {
    switch advice {
    case nil: ""
    case .listFraming?: " (--format list)"
    case .blobStore?: " (--blobs DIR)"
    case .updateBlobs?: " (--update-blobs)"
    case .multipart?: " (--format multipart)"
    case .linesFraming?: " (--format lines)"
    }
  }

  static func usage(_ message: String) -> [String] {
    ["\(program): error: \(message)", "Try '\(program) --help' for more information."]
  }

  static func checkSummary(_ statistics: ConversionStatistics) -> String {
    "\(program): checked \(counted(statistics.documents, "document")): "
      + "\(counted(statistics.rows, "finding")) in \(counted(statistics.errors, "document"))"
  }

  /// The `--stats` line.
  static func statistics(_ statistics: ConversionStatistics, seconds: Double) -> String {
    let rate = seconds > 0 ? Double(statistics.bytesIn) / seconds / 1_000_000 : 0
    var line =
      "\(program): \(counted(statistics.documents, "document")), "
      + "\(counted(statistics.blobs, "blob")), "
      + "\(counted(statistics.entriesAdded, "entry", "entries")) added, "
      + "\(statistics.entriesRemoved) removed, "
      + "\(counted(statistics.warnings, "warning")), \(counted(statistics.errors, "error")); "
      + "\(counted(statistics.bytesIn, "byte")) in, \(counted(statistics.bytesOut, "byte")) out; "
      + "\(formatted(seconds, digits: 3)) s (\(formatted(rate, digits: 1)) MB/s)"
    if statistics.bytesSkipped > 0 {
      line += "; \(counted(statistics.bytesSkipped, "byte")) skipped"
    }
    if statistics.unverified > 0 {
      line += "; \(counted(statistics.unverified, "body", "bodies")) unverified"
    }
    return line
  }
}

/// "1 blob", "2 blobs".
func counted(_ count: Int, _ singular: String, _ pluralForm: String? = nil) -> String {
  "\(count) \(count == 1 ? singular : pluralForm ?? singular + "s")"
}

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
