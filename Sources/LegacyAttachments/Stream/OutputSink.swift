/// Writes whole documents to a file descriptor.
///
/// Each ``write(_:)`` holds whole documents only. If the system takes part of one and then
/// fails (a full disk), and the destination is a regular file, the part is cut off again, so the
/// file ends after the last whole document.
public struct FileDescriptorSink: Sendable {
  /// The descriptor written to; the sink does not own it or close it.
  public let descriptor: SystemFileDescriptor
  /// How messages name this destination.
  public let name: String
  private let isRegularFile: Bool

  /// Writes to `descriptor`, named `name` in messages. Whether it is a regular file (cut back
  /// after a failed write) is asked once, here.
  public init(_ descriptor: SystemFileDescriptor, name: String = "<stdout>") {
    self.descriptor = descriptor
    self.name = name
    isRegularFile = (try? descriptor.status().isRegularFile) ?? false
  }

  /// ``init(_:name:)`` with the descriptor's number (`1` for standard output). (Every other
  /// call takes the descriptor itself; this one stays for the code written against 2.x.)
  @available(*, deprecated, message: "use FileDescriptorSink(SystemFileDescriptor(rawValue: n))")
  public init(descriptor: Int32, name: String = "<stdout>") {
    self.init(SystemFileDescriptor(rawValue: descriptor), name: name)
  }

  /// Writes `bytes`, whole documents; if the write fails, a regular file is cut back to where
  /// they began.
  public func write(_ bytes: UnsafeRawBufferPointer) throws(ConversionIOError) {
    try write(bytes, after: 0)
  }

  /// Writes `bytes`, which continue a document of which `unfinished` bytes were written before
  /// (a long rejected document is written in pieces). If the write fails, the file is cut back
  /// to where that document began.
  public func write(_ bytes: UnsafeRawBufferPointer, after unfinished: Int)
    throws(ConversionIOError)
  {
    let (written, failure) = descriptor.writeAll(bytes)
    guard let failure else { return }
    let cut = Int64(written + unfinished)
    if cut > 0 && isRegularFile, let end = try? descriptor.currentOffset(), end >= cut {
      try? descriptor.truncate(to: end - cut)
    }
    throw ConversionIOError(operation: .write, errno: failure, target: name)
  }
}
