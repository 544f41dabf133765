import Glibc

/// What push does when the blob store has no file for a blob (`--missing-blobs`).
public enum MissingBlobs: String, Sendable, CaseIterable {
  /// The document is rejected (the default).
  case error
  /// The entry becomes a stub (`"stub":true,"revpos":N`), with a warning.
  case stub
}

/// A Couchbase Lite blob store to carry attachment bytes to and from (`--blobs DIR`).
public struct BlobStoreOptions: Sendable, Equatable {
  /// The folder of `.blob` files: DIR itself, or `DIR/Attachments` when DIR is a `.cblite2`
  /// database.
  public var directory: String
  /// What push does when the store has no file for a blob (`--missing-blobs`, default `.error`).
  public var missing: MissingBlobs

  /// `path` as given with `--blobs`: a `…/Attachments` folder or a `.cblite2` database folder.
  public init(path: String, missing: MissingBlobs = .error) {
    var trimmed = path
    while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed.removeLast() }
    directory = trimmed.hasSuffix(".cblite2") ? trimmed + "/Attachments" : trimmed
    self.missing = missing
  }
}

extension BlobStoreOptions {
  /// Checks that the store's folder exists and is a directory (with `creating`, making its last
  /// level when it is missing, as pull and upgrade may), before any input is read.
  public static func check(_ options: BlobStoreOptions, creating: Bool) throws(BlobStoreError) {
    _ = try BlobStore.open(options, creating: creating)
  }
}

/// Why the blob store cannot be used; checked before any input is read.
public struct BlobStoreError: Error, Sendable, Equatable, CustomStringConvertible {
  /// The store's folder, as ``BlobStoreOptions/directory`` names it.
  public var directory: String
  /// Why the system refused the folder (`stat(2)`, `mkdir(2)`); nil when it is not a directory,
  /// or when it ``holdsDatabaseStore``.
  public var errno: SystemErrno?
  /// The folder holds a store and no `.blob` file: it is a Couchbase Lite database folder named
  /// without `.cblite2` (its store is `directory/Attachments`), or the folder of one `.cblite2`
  /// database; ``store`` names the store.
  public var holdsDatabaseStore = false
  /// The store the folder holds, when ``holdsDatabaseStore``.
  public var store: String?

  /// Why `directory` cannot be used: `errno`, or not a directory.
  public init(directory: String, errno: SystemErrno?) {
    self.directory = directory
    self.errno = errno
  }

  public var description: String {
    if holdsDatabaseStore {
      let store = self.store ?? directory + "/Attachments"
      let holds =
        store.hasSuffix("/Attachments")
        ? "an Attachments folder and no .blob file, as a Couchbase Lite database folder does"
        : "a Couchbase Lite database (\(store.split(separator: "/").last ?? "")) and no .blob file"
      return "\(directory): error: cannot use as a blob store: it holds \(holds); its store is"
        + " \(store)"
    }
    if let errno { return "\(directory): error: cannot use as a blob store: \(errno)" }
    return "\(directory): error: cannot use as a blob store: Not a directory"
  }
}

/// The store itself: a folder of files named by the SHA-1 of their bytes, read and written as
/// Couchbase Lite does (docs/blobs.md). Shared by the threads of a run; what it
/// remembers (each file's check, for `--check`) is behind a mutex.
final class BlobStore: @unchecked Sendable {
  let options: BlobStoreOptions
  var directory: String { options.directory }
  private let lock = Mutex()
  private var verdicts: [String: FileVerdict] = [:]

  init(options: BlobStoreOptions) {
    self.options = options
  }

  /// Checks that the folder exists and is a directory; with `creating`, makes its last level
  /// when it is missing (pull and upgrade may): for a `.cblite2` folder, the folder and its
  /// `Attachments`.
  static func open(_ options: BlobStoreOptions, creating: Bool) throws(BlobStoreError)
    -> BlobStore
  {
    let path = options.directory
    do {
      let status = try SystemFileDescriptor.status(ofPath: path)
      guard status.isDirectory else { throw BlobStoreError(directory: path, errno: nil) }
    } catch let error as SystemErrno {
      guard creating, error == .noSuchFile else {
        throw BlobStoreError(directory: path, errno: error)
      }
      do {
        let database = String(path.dropLast("/Attachments".count))
        if path.hasSuffix("/Attachments"), database.hasSuffix(".cblite2"),
          (try? SystemFileDescriptor.status(ofPath: database)) == nil
        {
          // A `.cblite2` folder that does not exist yet: it is made too, then its store.
          try Paths.makeDirectory(database)
        }
        try Paths.makeDirectory(path)
      } catch {
        throw BlobStoreError(directory: path, errno: error)
      }
    } catch let error as BlobStoreError {
      throw error
    } catch {
      throw BlobStoreError(directory: path, errno: nil)
    }
    if let store = Self.databaseStore(in: path) {
      var error = BlobStoreError(directory: path, errno: nil)
      error.holdsDatabaseStore = true
      error.store = store
      throw error
    }
    return BlobStore(options: options)
  }

  /// The store `path` holds when it is not one itself: a Couchbase Lite database folder named
  /// without `.cblite2` (an `Attachments` folder), or the folder of one database (one
  /// `….cblite2` folder), and no `.blob` file of its own. (Its blobs would all be missing, and
  /// pull would store new ones beside the store.)
  private static func databaseStore(in path: String) -> String? {
    guard let names = try? Paths.directoryEntries(path),
      !names.contains(where: { $0.hasSuffix(".blob") })
    else { return nil }
    func isDirectory(_ name: String) -> Bool {
      (try? SystemFileDescriptor.status(ofPath: path + "/" + name))?.isDirectory == true
    }
    if names.contains("Attachments"), isDirectory("Attachments") { return path + "/Attachments" }
    let databases = names.filter { $0.hasSuffix(".cblite2") && isDirectory($0) }
    return databases.count == 1 ? path + "/" + databases[0] : nil
  }

  // MARK: Names

  /// The file a digest names (`sha1-AB/c…=` → `AB_c….blob`), when it names one: `sha1-` and 28
  /// characters of padded base64 that decode to 20 bytes.
  static func fileName(for digest: AttachmentDigest) -> String? {
    guard digest.algorithm == .sha1 else { return nil }
    return String(
      decoding: digest.encoded.map { $0 == UInt8(ascii: "/") ? UInt8(ascii: "_") : $0 },
      as: UTF8.self) + ".blob"
  }

  func path(of name: String) -> String { directory + "/" + name }

  /// Takes files this run stored out of the store again (a document that stored them was
  /// rejected after all). A file that cannot be removed stays: it holds the bytes its name says.
  func remove(_ names: [String]) {
    for name in names { try? Paths.remove(path(of: name)) }
  }

  // MARK: Reading

  /// How reading a file went.
  enum ReadResult {
    /// Every byte was handed over: the file's size and the SHA-1 of its bytes.
    case read(size: Int, sha1: [UInt8])
    /// There is no such file.
    case missing
    /// The system refused.
    case failed(SystemErrno)
  }

  /// Reads the file `name`, handing its bytes over piece by piece (through `buffer`) and hashing
  /// them as they go.
  func read(
    _ name: String, buffer: UnsafeMutableRawBufferPointer,
    _ consume: (UnsafeRawBufferPointer) -> Void
  ) -> ReadResult {
    let descriptor: SystemFileDescriptor
    do {
      // Not blocking on a FIFO put there: only a regular file is a body.
      descriptor = try SystemFileDescriptor.open(path(of: name), O_RDONLY | O_NONBLOCK)
    } catch {
      return error == .noSuchFile ? .missing : .failed(error)
    }
    defer { descriptor.close() }
    do {
      let status = try descriptor.status()
      if status.isDirectory { return .failed(SystemErrno(code: EISDIR)) }
      if !status.isRegularFile { return .failed(SystemErrno(code: EINVAL)) }
    } catch {
      return .failed(error)
    }
    var hasher = Hasher(.sha1)
    var size = 0
    while true {
      let count: Int
      do {
        count = try descriptor.read(into: buffer)
      } catch {
        return .failed(error)
      }
      if count == 0 { break }
      let piece = UnsafeRawBufferPointer(rebasing: buffer[..<count])
      hasher.update(piece)
      consume(piece)
      size += count
    }
    return .read(size: size, sha1: hasher.finish())
  }

  /// Whether the file `name` exists as a regular file (symbolic links followed), without
  /// reading it (`--list`).
  func exists(_ name: String) -> Bool {
    (try? SystemFileDescriptor.status(ofPath: path(of: name)))?.isRegularFile ?? false
  }

  /// What a file is, for `--check`: read once per run, then remembered.
  enum FileVerdict: Equatable {
    case missing
    /// Its bytes' SHA-1 is not its name.
    case corrupt(actual: AttachmentDigest)
    case intact(size: Int)
    case unreadable(SystemErrno)
  }

  func verdict(_ name: String, expected: AttachmentDigest, buffer: UnsafeMutableRawBufferPointer)
    -> FileVerdict
  {
    lock.lock()
    if let known = verdicts[name] {
      lock.unlock()
      return known
    }
    lock.unlock()
    let verdict: FileVerdict
    switch read(name, buffer: buffer, { _ in }) {
    case .missing: verdict = .missing
    case .failed(let error): verdict = .unreadable(error)
    case .read(let size, let sha1):
      verdict =
        sha1 == expected.bytes
        ? .intact(size: size) : .corrupt(actual: AttachmentDigest(algorithm: .sha1, hash: sha1))
    }
    lock.lock()
    verdicts[name] = verdict
    lock.unlock()
    return verdict
  }

  // MARK: Storing

  /// Starts storing a body: a file of its own in the store, without a name until it is
  /// committed where the file system allows (`O_TMPFILE`: a signal or a crash leaves nothing
  /// behind), else a temporary file named `.incoming-…`.
  func beginStoring(checking digest: DigestAlgorithm) throws(SystemErrno) -> PendingBody {
    if Paths.canLinkDescriptors, let descriptor = try Paths.makeUnnamedFile(in: directory) {
      return PendingBody(descriptor: descriptor, temporaryPath: nil, checking: digest)
    }
    let (descriptor, path) = try Paths.makeTemporaryFile(in: directory, prefix: ".incoming-")
    return PendingBody(descriptor: descriptor, temporaryPath: path, checking: digest)
  }

  /// How storing ended.
  enum StoreResult: Equatable {
    case stored
    /// A file of that name was there already and is left alone; `size` is its size, nil when
    /// it is not a regular file (a directory, a link to nothing).
    case alreadyThere(size: Int64?)
  }

  /// Puts a finished body in place under `name`: synced, read-only, and never replacing a file
  /// that is there (Couchbase Lite never overwrites one).
  func commit(_ body: consuming PendingBody, as name: String) throws(SystemErrno) -> StoreResult {
    try body.seal(permissions: 0o444)
    let target = path(of: name)
    do {
      try body.link(as: target)
    } catch {
      guard error.code == EEXIST else {
        body.discard()
        throw error
      }
      let existing = try? SystemFileDescriptor.status(ofPath: target)
      let size = existing?.isRegularFile == true ? existing?.size : nil
      body.discard()
      return .alreadyThere(size: size)
    }
    body.discard()
    return .stored
  }
}

/// A body being stored: a file without a name (or a temporary one), and the hashes of what was
/// written to it. Dropped without being committed, it removes its file: nothing half-written
/// is left behind.
struct PendingBody: ~Copyable {
  private var descriptor: SystemFileDescriptor?
  /// The temporary file's name; nil for a file that has none (`O_TMPFILE`).
  let temporaryPath: String?
  private var sha1 = Hasher(.sha1)
  /// The body's own digest algorithm when it is not SHA-1 (`md5-` from CouchDB).
  private var other: Hasher?
  private(set) var size = 0
  private var removed = false

  init(
    descriptor: SystemFileDescriptor, temporaryPath: String?, checking algorithm: DigestAlgorithm
  ) {
    self.descriptor = descriptor
    self.temporaryPath = temporaryPath
    other = algorithm == .sha1 ? nil : Hasher(algorithm)
  }

  deinit {
    descriptor?.close()
    if !removed, let temporaryPath { try? Paths.remove(temporaryPath) }
  }

  mutating func append(_ bytes: UnsafeRawBufferPointer) throws(SystemErrno) {
    guard let descriptor else { return }
    sha1.update(bytes)
    other?.update(bytes)
    size += bytes.count
    let (_, failure) = descriptor.writeAll(bytes)
    if let failure { throw failure }
  }

  /// The SHA-1 of the bytes, and their hash in the checked algorithm.
  mutating func hashes() -> (sha1: [UInt8], checked: [UInt8]) {
    var finished = Hasher(.sha1)
    swap(&finished, &sha1)
    let sha1Hash = finished.finish()
    guard let checked = other.take() else { return (sha1Hash, sha1Hash) }
    return (sha1Hash, checked.finish())
  }

  /// Syncs the file and makes it `permissions`.
  mutating func seal(permissions: mode_t) throws(SystemErrno) {
    guard let descriptor else { return }
    try descriptor.sync()
    try descriptor.setPermissions(permissions)
  }

  /// Gives the file `name` (`link(2)`; never replacing a file: `EEXIST`).
  func link(as name: String) throws(SystemErrno) {
    if let temporaryPath {
      try Paths.link(temporaryPath, as: name)
    } else if let descriptor {
      try Paths.link(descriptor, as: name)
    }
  }

  /// Closes the file and removes its temporary name (a file without one goes with its
  /// descriptor, unless it was linked).
  consuming func discard() {
    descriptor?.close()
    descriptor = nil
    if let temporaryPath { try? Paths.remove(temporaryPath) }
    removed = true
  }
}
