import Glibc

/// The error number of a failed system call, as a value.
public struct Errno: Error, Sendable, Hashable, CustomStringConvertible {
  /// The `errno` value, for example `ENOSPC`.
  public var code: Int32

  public init(code: Int32) { self.code = code }

  /// The calling thread's `errno`, read right after a call failed.
  static var current: Errno { Errno(code: errno) }

  static let interrupted = Errno(code: EINTR)
  static let brokenPipe = Errno(code: EPIPE)
  static let noSuchFile = Errno(code: ENOENT)

  /// The system's wording, for example "No space left on device".
  public var description: String { String(cString: strerror(code)) }
}

/// Runs a system call until it is not interrupted by a signal: the one place where `EINTR` is
/// handled. Returns the call's non-negative result, or throws the `errno` of its failure.
@inline(__always)
func retryingInterrupted<Result: FixedWidthInteger>(_ call: () -> Result) throws(Errno) -> Result {
  while true {
    let result = call()
    if result >= 0 { return result }
    let failure = Errno.current
    if failure != .interrupted { throw failure }
  }
}
