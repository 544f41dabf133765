import Glibc

/// Writes whole documents to a file descriptor.
///
/// Each ``write(_:)`` holds whole documents only. If the system takes part of one and then
/// fails (a full disk), and the destination is a regular file, the part is cut off again with
/// `ftruncate`, so the file ends after the last whole document.
public struct FileDescriptorSink: Sendable {
  public let descriptor: Int32
  /// How messages name this destination.
  public let name: String
  private let isRegularFile: Bool

  public init(descriptor: Int32, name: String = "<stdout>") {
    self.descriptor = descriptor
    self.name = name
    var info = stat()
    isRegularFile = fstat(descriptor, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
  }

  public func write(_ bytes: UnsafeRawBufferPointer) throws(IOError) {
    guard var next = bytes.baseAddress, bytes.count > 0 else { return }
    var remaining = bytes.count
    var written = 0
    while remaining > 0 {
      let count = Glibc.write(descriptor, next, remaining)
      if count < 0 {
        let code = errno
        if code == EINTR { continue }
        if written > 0 && isRegularFile {
          let end = lseek(descriptor, 0, SEEK_CUR)
          if end >= written { _ = ftruncate(descriptor, end - off_t(written)) }
          _ = lseek(descriptor, end - off_t(written), SEEK_SET)
        }
        throw IOError(operation: .write, code: code, target: name)
      }
      next += count
      remaining -= count
      written += count
    }
  }

  /// Writes the bytes of `array` (whole documents).
  public func write(_ array: [UInt8]) throws(IOError) {
    let failure = array.withUnsafeBytes { bytes -> IOError? in
      do throws(IOError) {
        try write(bytes)
        return nil
      } catch {
        return error
      }
    }
    if let failure { throw failure }
  }
}
