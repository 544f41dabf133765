import Glibc
import LegacyAttachments

/// Writes a line to standard error with `write(2)` (Swift 6 rejects Glibc's `stderr` global).
func printError(_ line: String) {
  var text = line + "\n"
  text.withUTF8 { _ = SystemFileDescriptor.standardError.writeAll(UnsafeRawBufferPointer($0)) }
}

/// Writes text to standard output; a closed pipe ends the program as `SIGPIPE` would.
func printOutput(_ text: String) {
  var text = text
  let failure = text.withUTF8 { bytes -> ConversionIOError? in
    do throws(ConversionIOError) {
      try FileDescriptorSink(.standardOutput).write(UnsafeRawBufferPointer(bytes))
      return nil
    } catch {
      return error
    }
  }
  if let failure { exitForWriteError(failure) }
}

/// Ends the program after a failed write: quietly, as `SIGPIPE` would, when the reader of a pipe
/// has gone; otherwise with a message and status 2.
func exitForWriteError(_ error: ConversionIOError) -> Never {
  if error.isBrokenPipe {
    // Delivered even when the parent left it blocked.
    var pipeSignal = sigset_t()
    sigemptyset(&pipeSignal)
    sigaddset(&pipeSignal, SIGPIPE)
    signal(SIGPIPE, SIG_DFL)
    pthread_sigmask(SIG_UNBLOCK, &pipeSignal, nil)
    TerminationCleanup.removeNow()
    raise(SIGPIPE)
  }
  switch error.operation {
  case .readBlob: printError(CommandMessages.blobUnreadable(error))
  case .storeBlob: printError(CommandMessages.blobNotStored(error))
  default: printError(CommandMessages.writeFailed(error))
  }
  TerminationCleanup.failed()
  exit(2)
}
