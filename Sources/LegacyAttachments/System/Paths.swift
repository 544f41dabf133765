import Glibc

/// System calls on paths rather than descriptors, one thin wrapper each (EINTR handled by
/// `retryingInterrupted(_:)`, failures as ``SystemErrno`` values).
public enum Paths {
  /// The absolute path of the file `path` names, symbolic links followed (also a link to a
  /// file not made yet, see `following(_:)`): for comparing a path not made yet with others.
  /// The unresolved path when not even its folder exists.
  public static func canonical(_ path: String) -> String {
    let followed = following(path)
    if let resolved = try? resolved(followed) { return resolved }
    let (folder, name) = split(followed)
    guard let resolvedFolder = try? resolved(folder) else { return followed }
    return (resolvedFolder == "/" ? "" : resolvedFolder) + "/" + name
  }

  /// A path's folder (`.` when it names none; `/` for the root) and its last name.
  static func split(_ path: String) -> (folder: String, name: String) {
    guard let slash = path.lastIndex(of: "/") else { return (".", path) }
    let folder = String(path[..<slash])
    return (folder.isEmpty ? "/" : folder, String(path[path.index(after: slash)...]))
  }

  /// `mkdir(2)`.
  static func makeDirectory(_ path: String, permissions: mode_t = 0o755) throws(SystemErrno) {
    _ = try retryingInterrupted { mkdir(path, permissions) }
  }

  /// `opendir(3)` and `readdir(3)`: the names in a folder (`.` and `..` left out).
  static func directoryEntries(_ path: String) throws(SystemErrno) -> [String] {
    guard let directory = opendir(path) else { throw SystemErrno.current }
    defer { closedir(directory) }
    var names: [String] = []
    while let entry = readdir(directory) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) {
        String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
      }
      if name != "." && name != ".." { names.append(name) }
    }
    return names
  }

  /// `link(2)`: a second name for a file; fails with `EEXIST` rather than replace one.
  static func link(_ existing: String, as name: String) throws(SystemErrno) {
    _ = try retryingInterrupted { Glibc.link(existing, name) }
  }

  /// `rename(2)`: `name` now names the file `existing` named, replacing what it named before.
  static func rename(_ existing: String, to name: String) throws(SystemErrno) {
    _ = try retryingInterrupted { Glibc.rename(existing, name) }
  }

  /// `realpath(3)`: the absolute path of an existing file, every symbolic link followed.
  static func resolved(_ path: String) throws(SystemErrno) -> String {
    guard let resolved = realpath(path, nil) else { throw SystemErrno.current }
    defer { free(resolved) }
    return String(cString: resolved)
  }

  /// `open(2)` with `O_TMPFILE` in `directory`: a new file with no name, open for writing, that
  /// disappears with its descriptor unless ``link(_:as:)`` names it, so that nothing is left
  /// behind whatever ends the program. Nil when the file system cannot make one (then a named
  /// temporary file must do).
  static func makeUnnamedFile(in directory: String) throws(SystemErrno) -> SystemFileDescriptor? {
    // O_TMPFILE is __O_TMPFILE | O_DIRECTORY, a macro Swift does not import.
    let unnamed: Int32 = 0o20000000 | O_DIRECTORY
    do {
      return try SystemFileDescriptor.open(directory, unnamed | O_WRONLY, permissions: 0o600)
    } catch  where [EOPNOTSUPP, EISDIR, EINVAL].contains(error.code) {
      return nil
    }
  }

  /// `linkat(2)` of an unnamed file (``makeUnnamedFile(in:)``) through `/proc/self/fd`: it gets
  /// `name`; fails with `EEXIST` rather than replace a file.
  static func link(_ descriptor: SystemFileDescriptor, as name: String) throws(SystemErrno) {
    let own = "/proc/self/fd/\(descriptor.rawValue)"
    _ = try retryingInterrupted { linkat(AT_FDCWD, own, AT_FDCWD, name, AT_SYMLINK_FOLLOW) }
  }

  /// Whether ``link(_:as:)`` can work: `/proc` is mounted.
  static var canLinkDescriptors: Bool { access("/proc/self/fd", F_OK) == 0 }

  /// `readlink(2)`: what a symbolic link points to; nil when `path` is not one.
  static func linkTarget(_ path: String) -> String? {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let count = readlink(path, &buffer, buffer.count - 1)
    guard count >= 0 else { return nil }
    return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }

  /// The file `path` ends at, following symbolic links even to a name that does not exist yet
  /// (as `open(2)` with `O_CREAT` does): the resolved path when it exists, else the last link's
  /// target.
  static func following(_ path: String) -> String {
    if let resolved = try? resolved(path) { return resolved }
    var current = path
    for _ in 0..<40 {
      guard let target = linkTarget(current) else { break }
      current = target.hasPrefix("/") ? target : split(current).folder + "/" + target
    }
    return current
  }

  /// `unlink(2)`: removes the name `path` (a file, a link; not a folder).
  public static func remove(_ path: String) throws(SystemErrno) {
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
