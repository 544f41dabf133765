/// A failed open, read or write, with the system's error and what it was about.
public struct ConversionIOError: Error, Sendable, Equatable, CustomStringConvertible {
  public enum Operation: String, Sendable {
    case open, read, write
    /// Reading an attachment's bytes from the blob store (`--blobs`): the run cannot go on.
    case readBlob
    /// Storing an attachment's bytes in the blob store: the run cannot go on.
    case storeBlob
  }

  public var operation: Operation
  /// Why the system refused.
  public var errno: SystemErrno
  /// What was being read or written, for messages: a file name or `<stdout>`.
  public var target: String

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
