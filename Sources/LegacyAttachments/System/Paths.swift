import Glibc

/// System calls on paths rather than descriptors, one thin wrapper each (EINTR handled by
/// ``retryingInterrupted(_:)``, failures as ``SystemErrno`` values).
enum Paths {
  /// `mkdir(2)`.
  static func makeDirectory(_ path: String, permissions: mode_t = 0o755) throws(SystemErrno) {
    _ = try retryingInterrupted { mkdir(path, permissions) }
  }

  /// `link(2)`: a second name for a file; fails with `EEXIST` rather than replace one.
  static func link(_ existing: String, as name: String) throws(SystemErrno) {
    _ = try retryingInterrupted { Glibc.link(existing, name) }
  }

  /// `unlink(2)`.
  static func remove(_ path: String) throws(SystemErrno) {
    _ = try retryingInterrupted { unlink(path) }
  }

  /// `mkstemp(3)` in `directory` (close-on-exec): a new file of its own, open for writing, and its path. The
  /// name is `PREFIX` plus six random characters, never ending in `.blob`.
  static func makeTemporaryFile(in directory: String, prefix: String) throws(SystemErrno)
    -> (SystemFileDescriptor, String)
  {
    var template = Array((directory + "/" + prefix + "XXXXXX").utf8CString)
    let raw = try retryingInterrupted {
      template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
    }
    _ = fcntl(raw, F_SETFD, FD_CLOEXEC)
    let path = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    return (SystemFileDescriptor(rawValue: raw), path)
  }
}
