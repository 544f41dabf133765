/// Where converted documents (or rejected text) go: a file descriptor (``FileDescriptorSink``),
/// or anything a caller implements, such as a socket, a compressor or an array.
///
/// A write holds whole documents, except that a long rejected document may come in pieces;
/// `unfinished` is how many bytes of the document at hand earlier writes held.
public protocol ByteSink {
  /// Writes all of `bytes`, or throws.
  func write(_ bytes: UnsafeRawBufferPointer, after unfinished: Int) throws(ConversionIOError)
}

/// Where input bytes come from: a file descriptor, or anything a caller implements, such as a
/// socket or a decompressor.
public protocol ByteSource {
  /// Fills the start of `buffer` with the next bytes and returns how many; 0 at the end.
  mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws(ConversionIOError) -> Int
}

/// A ``ByteSink`` made of a closure.
///
/// ```swift
/// var collected: [UInt8] = []
/// let sink = ClosureSink { bytes in collected.append(contentsOf: bytes) }
/// ```
public final class ClosureSink: ByteSink {
  private let body: (UnsafeRawBufferPointer) throws(ConversionIOError) -> Void

  /// Calls `body` with each write's bytes, valid during the call only (a long rejected document
  /// may come in pieces); what it throws is a failed write.
  public init(_ body: @escaping (UnsafeRawBufferPointer) throws(ConversionIOError) -> Void) {
    self.body = body
  }

  public func write(_ bytes: UnsafeRawBufferPointer, after unfinished: Int)
    throws(ConversionIOError)
  {
    try body(bytes)
  }
}

/// A ``ByteSource`` made of a closure that fills a buffer and returns the count (0 at the end).
public struct ClosureSource: ByteSource {
  private let body: (UnsafeMutableRawBufferPointer) throws(ConversionIOError) -> Int

  /// Calls `body` for each read: it fills the start of the buffer and returns how many bytes it
  /// put there, 0 at the end of the input.
  public init(_ body: @escaping (UnsafeMutableRawBufferPointer) throws(ConversionIOError) -> Int) {
    self.body = body
  }

  public mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws(ConversionIOError)
    -> Int
  {
    try body(buffer)
  }
}

extension FileDescriptorSink: ByteSink {}
