import Glibc

/// A file written under a temporary name beside the file it is to replace, and renamed over it
/// only once it is complete (`sort -o`, `sed -i`): whoever reads the destination sees the old
/// file or the whole new one, never part of one, and a run that fails leaves the old file as it
/// was.
///
/// The owner of the temporary file: dropped without ``commit()``, it removes it.
///
/// ```swift
/// var file = try ReplacementFile(replacing: "dump.ndjson")
/// try convert(into: file.descriptor)
/// try file.commit()
/// ```
public struct ReplacementFile: ~Copyable {
  /// The file that is replaced: the path given, with every symbolic link followed, so that a
  /// link stays a link to the new file.
  public let destination: String
  /// Where the new contents are written until ``commit()``.
  public let temporaryPath: String
  /// Open for writing, on the file at ``temporaryPath``.
  public let descriptor: SystemFileDescriptor
  private var settled = false

  /// Makes an empty temporary file in the destination's folder (`.NAME.` plus six random
  /// characters, NAME cut short when the whole would not fit in a file name). It has the destination's permission bits when the destination exists, and
  /// otherwise those a new file gets (0666 less the umask).
  public init(replacing path: String) throws(SystemErrno) {
    let existing = try? SystemFileDescriptor.status(ofPath: path)
    if existing?.isDirectory == true { throw SystemErrno(code: EISDIR) }
    let destination = Paths.following(path)
    let (folder, name) = Paths.split(destination)
    let (descriptor, temporaryPath) = try Paths.makeTemporaryFile(
      in: folder, prefix: "." + Self.shortened(name) + ".")
    do {
      if let existing {
        // The owner and group first (root may give them; others keep their own), then the
        // mode, which fchown(2) may have cleared set-id bits of.
        try? descriptor.setOwner(existing.owner, group: existing.group)
      }
      try descriptor.setPermissions(existing?.permissions ?? Self.newFilePermissions())
    } catch {
      descriptor.close()
      try? Paths.remove(temporaryPath)
      throw error
    }
    self.destination = destination
    self.temporaryPath = temporaryPath
    self.descriptor = descriptor
  }

  /// The folder in which the temporary file for `path` is made: that of the file it replaces,
  /// with every symbolic link followed.
  public static func temporaryFolder(replacing path: String) -> String {
    Paths.split(Paths.following(path)).folder
  }

  /// Puts the new file in the destination's place: its bytes are synced to the disk first
  /// (`fsync(2)`), then it is renamed over the destination. On failure the temporary file is
  /// removed and the destination is as it was.
  public consuming func commit() throws(SystemErrno) {
    settled = true
    do {
      try descriptor.sync()
    } catch {
      descriptor.close()
      try? Paths.remove(temporaryPath)
      throw error
    }
    descriptor.close()
    do {
      try Paths.rename(temporaryPath, to: destination)
    } catch {
      try? Paths.remove(temporaryPath)
      throw error
    }
  }

  /// Removes the temporary file; the destination stays as it was.
  public consuming func abandon() {
    settled = true
    descriptor.close()
    try? Paths.remove(temporaryPath)
  }

  deinit {
    if !settled {
      descriptor.close()
      try? Paths.remove(temporaryPath)
    }
  }

  /// `name`, cut at a character so that `.NAME.XXXXXX` fits in a file name (`NAME_MAX`, 255
  /// bytes): a destination whose name is 248 bytes or more still gets a temporary file.
  static func shortened(_ name: String) -> String {
    let room = Int(NAME_MAX) - ".".utf8.count - ".XXXXXX".utf8.count
    guard name.utf8.count > room else { return name }
    var kept = ""
    var length = 0
    for character in name {
      length += character.utf8.count
      if length > room { break }
      kept.append(character)
    }
    return kept
  }

  /// 0666 less the process's umask (read by setting it and putting it back).
  private static func newFilePermissions() -> mode_t {
    let mask = umask(0o022)
    umask(mask)
    return 0o666 & ~mask
  }
}
