/// Writes whole documents to a file descriptor.
///
/// Each ``write(_:)`` holds whole documents only. If the system takes part of one and then
/// fails (a full disk), and the destination is a regular file, the part is cut off again, so the
/// file ends after the last whole document.
public struct FileDescriptorSink: Sendable {
  public let descriptor: FileDescriptor
  /// How messages name this destination.
  public let name: String
  private let isRegularFile: Bool

  public init(_ descriptor: FileDescriptor, name: String = "<stdout>") {
    self.descriptor = descriptor
    self.name = name
    isRegularFile = (try? descriptor.status().isRegularFile) ?? false
  }

  public init(descriptor: Int32, name: String = "<stdout>") {
    self.init(FileDescriptor(rawValue: descriptor), name: name)
  }

  public func write(_ bytes: UnsafeRawBufferPointer) throws(IOError) {
    let (written, failure) = descriptor.writeAll(bytes)
    guard let failure else { return }
    if written > 0 && isRegularFile, let end = try? descriptor.currentOffset(),
      end >= Int64(written)
    {
      try? descriptor.truncate(to: end - Int64(written))
    }
    throw IOError(operation: .write, errno: failure, target: name)
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
