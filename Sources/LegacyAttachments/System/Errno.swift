import Glibc

/// The error number of a failed system call, as a value.
public struct SystemErrno: Error, Sendable, Hashable, CustomStringConvertible {
  /// The `errno` value, for example `ENOSPC`.
  public var code: Int32

  /// The error of that `errno` value: `SystemErrno(code: ENOSPC)`.
  public init(code: Int32) { self.code = code }

  /// The calling thread's `errno`, read right after a call failed.
  static var current: SystemErrno { SystemErrno(code: errno) }

  static let interrupted = SystemErrno(code: EINTR)
  static let brokenPipe = SystemErrno(code: EPIPE)
  static let noSuchFile = SystemErrno(code: ENOENT)

  /// `EAGAIN` (`EWOULDBLOCK`): a non-blocking descriptor is not ready.
  var wouldBlock: Bool { code == EAGAIN || code == EWOULDBLOCK }

  /// The system's wording, for example "No space left on device".
  public var description: String { String(cString: strerror(code)) }
}

/// Runs a system call until it is not interrupted by a signal: the one place where `EINTR` is
/// handled. Returns the call's non-negative result, or throws the `errno` of its failure.
@inline(__always)
func retryingInterrupted<Result: FixedWidthInteger>(_ call: () -> Result) throws(SystemErrno)
  -> Result
{
  while true {
    let result = call()
    if result >= 0 { return result }
    let failure = SystemErrno.current
    if failure != .interrupted { throw failure }
  }
}
