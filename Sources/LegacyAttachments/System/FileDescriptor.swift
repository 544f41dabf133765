import Glibc

/// An open file descriptor, with one thin, typed wrapper per system call the tool makes on it.
///
/// Each wrapper makes one call (retried when a signal interrupts it) and reports failure as an
/// ``SystemErrno`` value; nothing here decides what a failure means. The descriptor is not owned:
/// whoever opened it closes it.
public struct SystemFileDescriptor: Sendable, Hashable {
  /// The descriptor's number, as system calls take it.
  public let rawValue: Int32

  /// Wraps the descriptor numbered `rawValue`, which is neither checked nor owned.
  public init(rawValue: Int32) { self.rawValue = rawValue }

  /// Standard input, descriptor 0.
  public static let standardInput = SystemFileDescriptor(rawValue: 0)
  /// Standard output, descriptor 1.
  public static let standardOutput = SystemFileDescriptor(rawValue: 1)
  /// Standard error, descriptor 2.
  public static let standardError = SystemFileDescriptor(rawValue: 2)

  /// `open(2)`, always with `O_CLOEXEC`.
  public static func open(_ path: String, _ flags: Int32, permissions: mode_t = 0o644)
    throws(SystemErrno) -> SystemFileDescriptor
  {
    let raw = try retryingInterrupted { Glibc.open(path, flags | O_CLOEXEC, permissions) }
    return SystemFileDescriptor(rawValue: raw)
  }

  /// ``open(_:_:permissions:)`` of an existing file, for reading.
  public static func openForReading(_ path: String) throws(SystemErrno) -> SystemFileDescriptor {
    try open(path, O_RDONLY)
  }

  /// ``open(_:_:permissions:)`` of a file to write, made if it is not there (`permissions`) and
  /// emptied if it is.
  public static func openForWriting(_ path: String, permissions: mode_t = 0o644)
    throws(SystemErrno) -> SystemFileDescriptor
  {
    try open(path, O_WRONLY | O_CREAT | O_TRUNC, permissions: permissions)
  }

  /// `close(2)`. Errors are ignored: nothing can be done about them once the data is written.
  public func close() { _ = Glibc.close(rawValue) }

  /// `read(2)` into `buffer`: the number of bytes read, 0 at the end of the file. A descriptor
  /// left non-blocking by whoever opened it (`EAGAIN`) is waited on (`poll(2)`) and read again.
  public func read(into buffer: UnsafeMutableRawBufferPointer) throws(SystemErrno) -> Int {
    while true {
      do {
        return try retryingInterrupted { Glibc.read(rawValue, buffer.baseAddress, buffer.count) }
      } catch  where error.wouldBlock {
        wait(for: POLLIN)
      }
    }
  }

  /// `write(2)` of `bytes`: the number of bytes the system took, which may be fewer. A
  /// non-blocking descriptor that is full (`EAGAIN`: a pipe whose reader is slow) is waited on
  /// (`poll(2)`) and written again, so that a document never goes out in part.
  public func write(_ bytes: UnsafeRawBufferPointer) throws(SystemErrno) -> Int {
    while true {
      do {
        return try retryingInterrupted {
          Glibc.write(rawValue, bytes.baseAddress, bytes.count)
        }
      } catch  where error.wouldBlock {
        wait(for: POLLOUT)
      }
    }
  }

  /// `poll(2)` until the descriptor is ready for `events` (or has failed: the next call says how).
  private func wait(for events: Int32) {
    var request = pollfd(fd: rawValue, events: Int16(events), revents: 0)
    _ = try? retryingInterrupted { poll(&request, 1, -1) }
  }

  /// Makes sure descriptors 0, 1 and 2 are open, so that no file opened later gets one of their
  /// numbers: a rejects file opened as descriptor 1, with standard output closed, would receive
  /// the output. A closed one gets `/dev/null` opened the other way round (standard input for
  /// writing, standard output and error for reading), so that using it fails as before
  /// (`EBADF`). For a program's start, before it opens anything.
  public static func reserveStandardDescriptors() {
    for (raw, flags) in [(Int32(0), O_WRONLY), (1, O_RDONLY), (2, O_RDONLY)]
    where fcntl(raw, F_GETFD) == -1 {
      // open(2) takes the lowest free number, which is this one.
      let opened = Glibc.open("/dev/null", flags)
      if opened >= 0 && opened != raw {
        _ = dup2(opened, raw)
        _ = Glibc.close(opened)
      }
    }
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

  /// `fchown(2)`.
  func setOwner(_ owner: uid_t, group: gid_t) throws(SystemErrno) {
    _ = try retryingInterrupted { fchown(rawValue, owner, group) }
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
  /// `st_dev`: the device that holds the file.
  public var device: UInt64
  /// `st_ino`: the file's inode number on that device.
  public var inode: UInt64
  /// `st_size`: the file's size in bytes.
  public var size: Int64
  /// `st_uid`: the user who owns the file.
  public var owner: uid_t
  /// `st_gid`: the file's group.
  public var group: gid_t
  private var mode: UInt32

  init(_ info: stat) {
    device = UInt64(info.st_dev)
    inode = UInt64(info.st_ino)
    size = Int64(info.st_size)
    owner = info.st_uid
    group = info.st_gid
    mode = UInt32(info.st_mode)
  }

  /// The permission bits (and set-id and sticky bits) of `st_mode`.
  public var permissions: mode_t { mode_t(mode & 0o7777) }
  /// Whether it is a regular file (`S_IFREG`).
  public var isRegularFile: Bool { mode & UInt32(S_IFMT) == UInt32(S_IFREG) }
  /// Whether it is a character device (`S_IFCHR`), such as `/dev/null` or a terminal.
  public var isCharacterDevice: Bool { mode & UInt32(S_IFMT) == UInt32(S_IFCHR) }
  /// Whether it is a directory (`S_IFDIR`).
  public var isDirectory: Bool { mode & UInt32(S_IFMT) == UInt32(S_IFDIR) }

  /// Whether both describe the same file (the same device and inode).
  public func isSameFile(as other: FileStatus) -> Bool {
    device == other.device && inode == other.inode
  }
}
