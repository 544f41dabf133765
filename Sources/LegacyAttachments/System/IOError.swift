/// A failed open, read or write, with the system's error and what it was about.
public struct ConversionIOError: Error, Sendable, Equatable, CustomStringConvertible {
  /// What was being done when the system refused.
  public enum Operation: String, Sendable {
    /// Opening, reading or writing an input or an output (a file, a pipe, standard output).
    case open, read, write
    /// Reading an attachment's bytes from the blob store (`--blobs`): the run cannot go on.
    case readBlob
    /// Storing an attachment's bytes in the blob store: the run cannot go on.
    case storeBlob
  }

  /// What failed; `.readBlob` and `.storeBlob` are the blob store's.
  public var operation: Operation
  /// Why the system refused.
  public var errno: SystemErrno
  /// What was being read or written, for messages: a file name or `<stdout>`.
  public var target: String

  /// A failure of `operation` on `target` (a file name or `<stdout>`; empty when not known).
  public init(operation: Operation, errno: SystemErrno, target: String = "") {
    self.operation = operation
    self.errno = errno
    self.target = target
  }

  /// The `errno` value.
  public var code: Int32 { errno.code }

  /// Whether this is a write to a pipe nobody reads any more (`| head -1`).
  public var isBrokenPipe: Bool { operation == .write && errno == .brokenPipe }

  public var description: String { errno.description }
}
