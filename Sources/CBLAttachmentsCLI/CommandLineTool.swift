import Glibc
import LegacyAttachments

let program = "cbl-attachments"

/// The `cbl-attachments` command: parses the command line (``Invocation``), then runs it
/// (``Run``) and exits with its status.
public enum CommandLineTool {
  /// Runs the command with the process's arguments and exits.
  public static func main() -> Never {
    SystemFileDescriptor.reserveStandardDescriptors()
    signal(SIGPIPE, SIG_DFL)
    // A file-size limit (`ulimit -f`) makes a write fail (EFBIG), which cuts the output back to
    // its last whole document, rather than kill the program half-way into one.
    signal(SIGXFSZ, SIG_IGN)

    let invocation: Invocation
    do {
      invocation = try Invocation.parse(Invocation.commandLineArguments())
    } catch {
      for line in CommandMessages.usage(error.message) { printError(line) }
      exit(2)
    }
    if invocation.help {
      printOutput(helpText + "\n")
      exit(0)
    }
    if invocation.version {
      printOutput(
        "\(program) \(LegacyAttachmentsVersion.current) (yajl \(LegacyAttachmentsVersion.yajl))\n")
      exit(0)
    }
    exit(Run(invocation: invocation).execute())
  }
}
