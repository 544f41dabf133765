import Glibc

/// A growable byte buffer that owns its memory.
///
/// The engine keeps its input, its output and its scratch text in `ByteBuffer`s so that the
/// per-token path never touches reference counting or copy-on-write checks. It cannot be copied,
/// so exactly one owner frees the memory, when it goes.
///
/// `base` moves when the buffer grows: read it again after every append.
struct ByteBuffer: ~Copyable {
  private(set) var base: UnsafeMutablePointer<UInt8>
  /// Number of bytes in use.
  var count: Int
  private(set) var capacity: Int

  init(capacity: Int = 4096) {
    let size = max(capacity, 16)
    base = malloc(size)!.assumingMemoryBound(to: UInt8.self)
    count = 0
    self.capacity = size
  }

  deinit { free(base) }

  /// Makes room for at least `extra` more bytes. Growth is by half again, not doubling, so that a
  /// single huge document costs little more than its own size.
  @inline(__always)
  mutating func reserve(_ extra: Int) {
    if count + extra > capacity { grow(to: count + extra) }
  }

  /// Grows with `realloc`, which for large buffers moves pages (`mremap`) instead of copying
  /// them: a huge document never has its old and new buffer in memory at once.
  @inline(never)
  private mutating func grow(to needed: Int) {
    var newCapacity = capacity + capacity / 2
    if newCapacity < needed { newCapacity = needed + needed / 4 }
    guard let moved = realloc(base, newCapacity) else { fatalError("out of memory") }
    base = moved.assumingMemoryBound(to: UInt8.self)
    capacity = newCapacity
  }

  /// Releases memory above `limit` bytes of capacity when the buffer is empty enough to allow it,
  /// so that one huge document does not pin its memory for the rest of the stream.
  mutating func shrink(ifAbove limit: Int) {
    guard capacity > limit, count <= limit, let moved = realloc(base, limit) else { return }
    base = moved.assumingMemoryBound(to: UInt8.self)
    capacity = limit
  }

  @inline(__always)
  mutating func append(_ byte: UInt8) {
    reserve(1)
    base[count] = byte
    count += 1
  }

  @inline(__always)
  mutating func append(_ bytes: UnsafePointer<UInt8>, count length: Int) {
    guard length > 0 else { return }
    reserve(length)
    if length <= 16 {
      Self.copyShort(from: bytes, to: base + count, count: length)
    } else {
      (base + count).update(from: bytes, count: length)
    }
    count += length
  }

  /// Copies 1...16 bytes with two overlapping loads and stores, where a `memmove` call would cost
  /// more than the copy (names, keys, separators, short runs of a document).
  @inline(__always)
  private static func copyShort(
    from source: UnsafePointer<UInt8>, to target: UnsafeMutablePointer<UInt8>, count: Int
  ) {
    let from = UnsafeRawPointer(source)
    let to = UnsafeMutableRawPointer(target)
    if count >= 8 {
      let head = from.loadUnaligned(as: UInt64.self)
      let tail = from.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
      to.storeBytes(of: head, as: UInt64.self)
      to.storeBytes(of: tail, toByteOffset: count - 8, as: UInt64.self)
    } else if count >= 4 {
      let head = from.loadUnaligned(as: UInt32.self)
      let tail = from.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self)
      to.storeBytes(of: head, as: UInt32.self)
      to.storeBytes(of: tail, toByteOffset: count - 4, as: UInt32.self)
    } else {
      for index in 0..<count { target[index] = source[index] }
    }
  }

  @inline(__always)
  mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
    guard let start = bytes.baseAddress, bytes.count > 0 else { return }
    append(start, count: bytes.count)
  }

  mutating func append(_ bytes: UnsafeRawBufferPointer) {
    guard let start = bytes.baseAddress, bytes.count > 0 else { return }
    append(start.assumingMemoryBound(to: UInt8.self), count: bytes.count)
  }

  /// Appends a literal's UTF-8 bytes (literals resolve here, never through `String`).
  @inline(__always)
  mutating func append(_ text: StaticString) {
    append(text.utf8Start, count: text.utf8CodeUnitCount)
  }

  /// Appends a non-negative or negative integer in decimal.
  mutating func appendDecimal(_ value: Int) {
    if value >= 0 && value < 10 { return append(UInt8(truncatingIfNeeded: 48 + value)) }
    var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)
    withUnsafeMutableBytes(of: &digits) { scratch in
      var magnitude = value.magnitude
      var position = scratch.count
      repeat {
        position -= 1
        scratch[position] = UInt8(truncatingIfNeeded: 48 + magnitude % 10)
        magnitude /= 10
      } while magnitude > 0
      if value < 0 {
        position -= 1
        scratch[position] = UInt8(ascii: "-")
      }
      append(UnsafeRawBufferPointer(rebasing: scratch[position...]))
    }
  }

  /// Removes the first `prefix` bytes, moving the rest to the front.
  mutating func removeFirst(_ prefix: Int) {
    guard prefix > 0 else { return }
    let rest = count - prefix
    if rest > 0 { base.update(from: base + prefix, count: rest) }
    count = rest
  }

  /// The bytes in use; valid until the buffer next changes.
  var bytes: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: base, count: count) }

  func copyToArray() -> [UInt8] { Array(bytes) }
}
