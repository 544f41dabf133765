import Glibc

/// An open file descriptor, with one thin, typed wrapper per system call the tool makes on it.
///
/// Each wrapper makes one call (retried when a signal interrupts it) and reports failure as an
/// ``SystemErrno`` value; nothing here decides what a failure means. The descriptor is not owned:
/// whoever opened it closes it.
public struct SystemFileDescriptor: Sendable, Hashable {
  public let rawValue: Int32

  public init(rawValue: Int32) { self.rawValue = rawValue }

  public static let standardInput = SystemFileDescriptor(rawValue: 0)
  public static let standardOutput = SystemFileDescriptor(rawValue: 1)
  public static let standardError = SystemFileDescriptor(rawValue: 2)

  /// `open(2)`, always with `O_CLOEXEC`.
  public static func open(_ path: String, _ flags: Int32, permissions: mode_t = 0o644)
    throws(SystemErrno) -> SystemFileDescriptor
  {
    let raw = try retryingInterrupted { Glibc.open(path, flags | O_CLOEXEC, permissions) }
    return SystemFileDescriptor(rawValue: raw)
  }

  /// `close(2)`. Errors are ignored: nothing can be done about them once the data is written.
  public func close() { _ = Glibc.close(rawValue) }

  /// `read(2)` into `buffer`: the number of bytes read, 0 at the end of the file.
  public func read(into buffer: UnsafeMutableRawBufferPointer) throws(SystemErrno) -> Int {
    try retryingInterrupted { Glibc.read(rawValue, buffer.baseAddress, buffer.count) }
  }

  /// `write(2)` of `bytes`: the number of bytes the system took, which may be fewer.
  public func write(_ bytes: UnsafeRawBufferPointer) throws(SystemErrno) -> Int {
    try retryingInterrupted { Glibc.write(rawValue, bytes.baseAddress, bytes.count) }
  }

  /// Writes all of `bytes`, with as many `write(2)` calls as it takes. On failure, reports how
  /// many bytes had been written before it.
  public func writeAll(_ bytes: UnsafeRawBufferPointer) -> (written: Int, failure: SystemErrno?) {
    var written = 0
    while written < bytes.count {
      do {
        written += try write(UnsafeRawBufferPointer(rebasing: bytes[written...]))
      } catch {
        return (written, error)
      }
    }
    return (written, nil)
  }

  /// `fstat(2)`.
  public func status() throws(SystemErrno) -> FileStatus {
    var info = stat()
    _ = try retryingInterrupted { fstat(rawValue, &info) }
    return FileStatus(info)
  }

  /// `stat(2)` of a path (symbolic links followed).
  public static func status(ofPath path: String) throws(SystemErrno) -> FileStatus {
    var info = stat()
    _ = try retryingInterrupted { stat(path, &info) }
    return FileStatus(info)
  }

  /// The current offset (`lseek(2)` by 0 from `SEEK_CUR`).
  func currentOffset() throws(SystemErrno) -> Int64 {
    Int64(try retryingInterrupted { lseek(rawValue, 0, SEEK_CUR) })
  }

  /// Cuts the file to `length` bytes and moves the offset there (`ftruncate(2)`, `lseek(2)`).
  func truncate(to length: Int64) throws(SystemErrno) {
    _ = try retryingInterrupted { ftruncate(rawValue, off_t(length)) }
    _ = try retryingInterrupted { lseek(rawValue, off_t(length), SEEK_SET) }
  }

  /// Whether a read would not block now (`poll(2)` with no wait): a pipe with data waiting, or a
  /// file.
  func hasInputReady() -> Bool {
    var request = pollfd(fd: rawValue, events: Int16(POLLIN), revents: 0)
    return ((try? retryingInterrupted { poll(&request, 1, 0) }) ?? 0) > 0
  }

  /// `fsync(2)`: the file's bytes are on the disk.
  func sync() throws(SystemErrno) {
    _ = try retryingInterrupted { fsync(rawValue) }
  }

  /// `fchmod(2)`.
  func setPermissions(_ permissions: mode_t) throws(SystemErrno) {
    _ = try retryingInterrupted { fchmod(rawValue, permissions) }
  }

  /// Whether the descriptor is a terminal (`isatty(3)`).
  public var isTerminal: Bool { isatty(rawValue) == 1 }
}

/// What `stat(2)` says about a file, as far as the tool cares.
public struct FileStatus: Sendable, Equatable {
  public var device: UInt64
  public var inode: UInt64
  public var size: Int64
  private var mode: UInt32

  init(_ info: stat) {
    device = UInt64(info.st_dev)
    inode = UInt64(info.st_ino)
    size = Int64(info.st_size)
    mode = UInt32(info.st_mode)
  }

  public var isRegularFile: Bool { mode & UInt32(S_IFMT) == UInt32(S_IFREG) }
  public var isCharacterDevice: Bool { mode & UInt32(S_IFMT) == UInt32(S_IFCHR) }
  public var isDirectory: Bool { mode & UInt32(S_IFMT) == UInt32(S_IFDIR) }

  /// Whether both describe the same file (the same device and inode).
  public func isSameFile(as other: FileStatus) -> Bool {
    device == other.device && inode == other.inode
  }
}
