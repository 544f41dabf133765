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
  /// characters). It has the destination's permission bits when the destination exists, and
  /// otherwise those a new file gets (0666 less the umask).
  public init(replacing path: String) throws(SystemErrno) {
    let existing = try? SystemFileDescriptor.status(ofPath: path)
    if existing?.isDirectory == true { throw SystemErrno(code: EISDIR) }
    let destination = Paths.following(path)
    let (folder, name) = Paths.split(destination)
    let (descriptor, temporaryPath) = try Paths.makeTemporaryFile(
      in: folder, prefix: "." + name + ".")
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

  /// 0666 less the process's umask (read by setting it and putting it back).
  private static func newFilePermissions() -> mode_t {
    let mask = umask(0o022)
    umask(mask)
    return 0o666 & ~mask
  }
}
