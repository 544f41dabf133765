import Glibc

/// A failed read or write, with the system's error code.
public struct IOError: Error, Sendable, Equatable, CustomStringConvertible {
  public enum Operation: String, Sendable {
    case open, read, write
  }

  public var operation: Operation
  public var code: Int32
  /// What was being read or written, for messages: a file name or `<stdout>`.
  public var target: String

  public init(operation: Operation, code: Int32, target: String = "") {
    self.operation = operation
    self.code = code
    self.target = target
  }

  /// Whether this is a write to a pipe nobody reads any more (`| head -1`).
  public var isBrokenPipe: Bool { operation == .write && code == EPIPE }

  public var description: String { String(cString: strerror(code)) }
}
