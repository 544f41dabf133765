internal import CZlib

/// A gzip stream being written (zlib's deflate with a gzip wrapper), fed piece by piece; what it
/// makes goes to a closure. It owns its zlib state and frees it when it goes away.
///
/// The parameters are the ones CouchDB's `couch_stream` gives Erlang's zlib (window bits
/// 16 + 15, memory level 8, default strategy), and deflate's output does not depend on how its
/// input is cut into pieces, so the same bytes give CouchDB's stream, byte for byte, with the
/// same zlib.
struct GzipCompressor: ~Copyable {
  private let stream: UnsafeMutablePointer<z_stream>
  private var output: UnsafeMutablePointer<UInt8>
  private static let outputSize = 1 << 16

  /// A compressor at `level` (1 fastest to 9 smallest).
  init(level: Int32) {
    stream = .allocate(capacity: 1)
    stream.initialize(to: z_stream())
    output = .allocate(capacity: Self.outputSize)
    // Only a level out of range or no memory can fail; the first is the caller's bug.
    guard czlib_deflate_init_gzip(stream, level) == Z_OK else {
      fatalError("deflateInit2 failed (level \(level))")
    }
  }

  deinit {
    deflateEnd(stream)
    stream.deallocate()
    output.deallocate()
  }

  /// Compresses `bytes`, handing each piece of the stream made so far to `sink`.
  mutating func append(
    _ bytes: UnsafeRawBufferPointer, to sink: (UnsafeRawBufferPointer) -> Void
  ) {
    guard let base = bytes.baseAddress, bytes.count > 0 else { return }
    stream.pointee.next_in = UnsafeMutablePointer(
      mutating: base.assumingMemoryBound(to: UInt8.self))
    stream.pointee.avail_in = UInt32(bytes.count)
    run(Z_NO_FLUSH, to: sink)
  }

  /// Ends the stream (the last deflate block and gzip's trailer) into `sink`.
  consuming func finish(to sink: (UnsafeRawBufferPointer) -> Void) {
    stream.pointee.next_in = nil
    stream.pointee.avail_in = 0
    run(Z_FINISH, to: sink)
  }

  private func run(_ flush: Int32, to sink: (UnsafeRawBufferPointer) -> Void) {
    repeat {
      stream.pointee.next_out = output
      stream.pointee.avail_out = UInt32(Self.outputSize)
      let status = deflate(stream, flush)
      precondition(status == Z_OK || status == Z_STREAM_END || status == Z_BUF_ERROR)
      let made = Self.outputSize - Int(stream.pointee.avail_out)
      if made > 0 { sink(UnsafeRawBufferPointer(start: output, count: made)) }
      if flush == Z_FINISH && status == Z_STREAM_END { return }
    } while stream.pointee.avail_out == 0 || (flush == Z_FINISH)
  }
}

/// A gzip stream being read (zlib's inflate), fed piece by piece; the bytes it holds go to a
/// closure. It owns its zlib state and frees it when it goes away.
struct GzipDecompressor: ~Copyable {
  private let stream: UnsafeMutablePointer<z_stream>
  private var output: UnsafeMutablePointer<UInt8>
  private static let outputSize = 1 << 16
  /// Whether the gzip stream has ended (its trailer read and checked).
  private(set) var ended = false
  /// How many members (RFC 1952: whole gzip streams, one after another) have ended.
  private var membersEnded = 0

  /// Why a stream cannot be read: zlib's message for it ("incorrect header check", "invalid
  /// block type", "incorrect data check"), after which member when it is not the first.
  struct Invalid: Error, Equatable {
    var reason: String
  }

  init() {
    stream = .allocate(capacity: 1)
    stream.initialize(to: z_stream())
    output = .allocate(capacity: Self.outputSize)
    guard czlib_inflate_init_gzip(stream) == Z_OK else { fatalError("inflateInit2 failed") }
  }

  deinit {
    inflateEnd(stream)
    stream.deallocate()
    output.deallocate()
  }

  /// Reads `bytes` of the stream, handing what they decode to to `sink`.
  mutating func append<E: Error>(
    _ bytes: UnsafeRawBufferPointer, to sink: (UnsafeRawBufferPointer) throws(E) -> Void
  ) throws(DecompressionFailure<E>) {
    guard let base = bytes.baseAddress, bytes.count > 0 else { return }
    if ended { startNextMember() }
    stream.pointee.next_in = UnsafeMutablePointer(
      mutating: base.assumingMemoryBound(to: UInt8.self))
    stream.pointee.avail_in = UInt32(bytes.count)
    while stream.pointee.avail_in > 0 || stream.pointee.avail_out == 0 {
      stream.pointee.next_out = output
      stream.pointee.avail_out = UInt32(Self.outputSize)
      let status = inflate(stream, Z_NO_FLUSH)
      let made = Self.outputSize - Int(stream.pointee.avail_out)
      if made > 0 {
        do throws(E) {
          try sink(UnsafeRawBufferPointer(start: output, count: made))
        } catch {
          throw .sink(error)
        }
      }
      switch status {
      case Z_OK, Z_BUF_ERROR:
        if status == Z_BUF_ERROR && stream.pointee.avail_in == 0 { return }
      case Z_STREAM_END:
        ended = true
        membersEnded += 1
        guard stream.pointee.avail_in > 0 else { return }
        startNextMember()
      default:
        let reason = stream.pointee.msg.map { String(cString: $0) } ?? "zlib error \(status)"
        throw .invalid(
          Invalid(reason: membersEnded == 0 ? reason : "after member \(membersEnded): \(reason)"))
      }
    }
  }

  /// Bytes after a member's end: another member begins (RFC 1952 2.2; gzip(1) and Go's
  /// compress/gzip, which Sync Gateway uses, read them all as one stream).
  private mutating func startNextMember() {
    ended = false
    guard inflateReset(stream) == Z_OK else { fatalError("inflateReset failed") }
  }

  /// Checks that the stream has ended; a stream cut short is invalid.
  func finish() throws(Invalid) {
    guard ended else { throw Invalid(reason: "the gzip stream is cut short") }
  }
}

/// Why decompressing stopped: the stream is not valid gzip, or the sink failed.
enum DecompressionFailure<E: Error>: Error {
  case invalid(GzipDecompressor.Invalid)
  case sink(E)
}
