// The command: everything it does is in CBLAttachmentsCLI (the command line) and
// LegacyAttachments (the conversion).
import CBLAttachmentsCLI

CommandLineTool.main()
