import Glibc

/// The part of the current input that is still needed, addressed by ``StreamOffset``.
///
/// It owns the bytes, reads into itself, and discards what its users say they no longer need,
/// moving the rest to the front. Because every position is a stream offset, discarding changes
/// no position anyone holds; it only moves ``start``. A position before ``start`` is gone, and
/// asking for it traps rather than reading other bytes.
struct InputWindow: ~Copyable {
  private var storage: ByteBuffer
  /// A batch's input, shown in place instead of copied into ``storage`` (``adopt(_:)``), which
  /// is empty meanwhile. Any change to the window first copies what it still needs of them.
  private var adopted: BatchBytes? = nil
  /// The stream offset of the first byte held.
  private(set) var start = StreamOffset.zero

  /// `capacity` is the buffer's initial size. It grows to hold the longest stretch its users need
  /// at once (the longest line or document); tests make it tiny so that every read compacts it.
  init(capacity: Int) {
    storage = ByteBuffer(capacity: capacity)
  }

  /// The bytes the buffer has room for.
  var capacity: Int { storage.capacity }

  /// The stream offset just past the last byte held.
  var end: StreamOffset { start + (adopted?.buffer.count ?? storage.count) }

  /// The bytes held, as a view that stays valid until the window next changes.
  var view: InputView {
    InputView(base: adopted?.buffer.base ?? storage.base, start: start, end: end)
  }

  /// Whether appending `count` more bytes needs more room than the buffer has: the moment to
  /// discard what is no longer needed (``discard(before:)``) before the buffer grows. (Bytes
  /// shown in place leave no room: they are copied first.)
  func isFull(adding count: Int) -> Bool {
    adopted != nil || storage.count + count > storage.capacity
  }

  /// Shows `bytes` (a batch's input, read-only) as the window's, in place: an empty window
  /// holds them without copying them, until it next changes.
  mutating func adopt(_ bytes: BatchBytes) {
    precondition(adopted == nil && storage.count == 0, "adopting into a window that holds bytes")
    adopted = bytes
    if let last = bytes.buffer.bytes.last { lastByte = last }
  }

  /// Whether every byte the window holds is known to be strictly valid UTF-8: it holds a batch's
  /// bytes as adopted, which the reader checked (``BatchBytes/isValidUTF8``); any change to the
  /// window copies the bytes out and forgets it.
  var holdsValidUTF8: Bool { adopted?.isValidUTF8 ?? false }

  /// Copies the adopted bytes from `offset` on into the window's own buffer (before a change).
  private mutating func ownAdoptedBytes(from offset: StreamOffset) {
    guard adopted != nil else { return }
    let kept = view.bytes(from: offset, to: end)
    storage.count = 0
    storage.append(kept)
    adopted = nil
    start = offset
  }

  /// The last byte of the input so far, held or not (nil before the first).
  private(set) var lastByte: UInt8? = nil

  /// Appends `bytes` (read by someone else).
  mutating func append(_ bytes: UnsafeRawBufferPointer) {
    ownAdoptedBytes(from: start)
    storage.append(bytes)
    if let last = bytes.last { lastByte = last }
  }

  /// Appends one byte (the newline added after an input's last line).
  mutating func append(_ byte: UInt8) {
    ownAdoptedBytes(from: start)
    storage.append(byte)
    lastByte = byte
  }

  /// Reads up to `maximum` bytes from `descriptor` onto the end. Returns the number read, 0 at
  /// the end of the file.
  mutating func read(from descriptor: SystemFileDescriptor, maximum: Int) throws(SystemErrno) -> Int
  {
    ownAdoptedBytes(from: start)
    storage.reserve(maximum)
    let free = UnsafeMutableRawBufferPointer(start: storage.base + storage.count, count: maximum)
    let count = try descriptor.read(into: free)
    storage.count += count
    if count > 0 { lastByte = storage.base[storage.count - 1] }
    return count
  }

  /// Forgets the bytes before `offset`.
  mutating func discard(before offset: StreamOffset) {
    precondition(offset >= start && offset <= end, "discarding bytes the window does not hold")
    if adopted != nil { return ownAdoptedBytes(from: offset) }
    storage.removeFirst(offset - start)
    start = offset
  }

  /// Hands the bytes before `offset` over as a buffer of their own: the window's very storage,
  /// not a copy. The window keeps the rest (a part of a line, normally), in `spare` (a buffer
  /// done with) or a new buffer, of at least `capacity` bytes.
  mutating func split(
    at offset: StreamOffset, capacity: Int, into spare: consuming ByteBuffer? = nil
  )
    -> ByteBuffer
  {
    precondition(offset >= start && offset <= end, "splitting outside the window")
    ownAdoptedBytes(from: start)
    let rest = end - offset
    let size = max(capacity, rest + capacity / 2)
    // A spare too small is freed rather than grown: growing would copy its old bytes.
    var taken: ByteBuffer
    if let kept = spare.take(), kept.capacity >= size {
      taken = kept
    } else {
      taken = ByteBuffer(capacity: size)
    }
    taken.count = 0
    taken.append(view.pointer(at: offset), count: rest)
    swap(&storage, &taken)
    taken.count = offset - start
    start = offset
    return taken
  }

  /// Empties the window for a new input, whose first byte is stream offset 0.
  mutating func restart() {
    adopted = nil
    storage.count = 0
    lastByte = nil
    storage.shrink(ifAbove: 1 << 22)
    start = .zero
  }
}

/// The bytes of an ``InputWindow`` at one moment: where they are and the stream offsets they
/// span. Valid until the window next changes (a read or a discard); the engine takes a new one
/// before each piece it gives to the parser.
///
/// It keeps the address that stream offset 0 would have, as an integer, so that turning an offset
/// into an address is one addition; a pointer is only ever made for an offset it holds.
struct InputView: BitwiseCopyable {
  /// The address of `start`'s byte, minus `start`: stream offset 0's address, as a number.
  private let origin: Int
  let start: StreamOffset
  let end: StreamOffset

  init(base: UnsafePointer<UInt8>, start: StreamOffset, end: StreamOffset) {
    origin = Int(bitPattern: base) &- start.value
    self.start = start
    self.end = end
  }

  @inline(__always)
  private func address(_ offset: StreamOffset) -> UnsafePointer<UInt8> {
    UnsafePointer(bitPattern: origin &+ offset.value).unsafelyUnwrapped
  }

  /// The byte at `offset`, which must be held. Unchecked in release builds: the per-token path
  /// reads only offsets of the piece being parsed.
  @inline(__always)
  subscript(offset: StreamOffset) -> UInt8 {
    assert(offset >= start && offset < end, "reading \(offset) outside \(start)..<\(end)")
    return address(offset).pointee
  }

  /// The address of the byte at `offset` (or just past the end).
  @inline(__always)
  func pointer(at offset: StreamOffset) -> UnsafePointer<UInt8> {
    precondition(offset >= start && offset <= end, "\(offset) is outside \(start)...\(end)")
    return address(offset)
  }

  /// The stream offset of an address, which need not be inside the view (yajl hands over text
  /// of its own buffer too): compare the result with offsets that are.
  @inline(__always)
  func offset(of pointer: UnsafePointer<UInt8>) -> StreamOffset {
    StreamOffset(Int(bitPattern: pointer) &- origin)
  }

  /// The bytes from `from` up to `to`.
  func bytes(from: StreamOffset, to: StreamOffset) -> UnsafeBufferPointer<UInt8> {
    UnsafeBufferPointer(start: pointer(at: from), count: to - from)
  }

  // MARK: The newline search

  /// The first newline in `from..<to`, or nil.
  func firstNewline(from: StreamOffset, to: StreamOffset) -> StreamOffset? {
    guard from < to, let found = memchr(pointer(at: from), 0x0A, to - from) else { return nil }
    return offset(of: found.assumingMemoryBound(to: UInt8.self))
  }

  /// The last newline in `from..<to`, or nil.
  func lastNewline(from: StreamOffset, to: StreamOffset) -> StreamOffset? {
    guard from < to,
      let index = ByteScan.lastIndex(of: 0x0A, in: pointer(at: from), count: to - from)
    else { return nil }
    return from + index
  }

  /// How many newlines `from..<to` holds.
  func newlineCount(from: StreamOffset, to: StreamOffset) -> Int {
    guard from < to else { return 0 }
    return ByteScan.count(of: 0x0A, in: pointer(at: from), count: to - from)
  }

  /// The start of the first line in `from..<to` (after a newline at or after `from`) whose first
  /// byte is `byte`, or nil. The line's first byte must be held too.
  func firstLine(startingWith byte: UInt8, from: StreamOffset, to: StreamOffset) -> StreamOffset? {
    var position = from
    while let newline = firstNewline(from: position, to: to) {
      let lineStart = newline + 1
      guard lineStart < end else { return nil }
      if lineStart <= to && self[lineStart] == byte { return lineStart }
      position = lineStart
    }
    return nil
  }

  /// Where the line that ends just before the line starting at `lineStart` ends: at its newline,
  /// or at the carriage return before it (not before `floor`).
  func lineEnd(beforeLineAt lineStart: StreamOffset, notBefore floor: StreamOffset) -> StreamOffset
  {
    let newline = lineStart - 1
    return newline > floor && self[newline - 1] == 0x0D ? newline - 1 : newline
  }

  /// The last byte before `end` that is not JSON white space, if the view holds one.
  func lastNonSpaceByte(before end: StreamOffset) -> UInt8? {
    var last = end
    while last > start, JSONText.isWhitespace(self[last - 1]) { last = last - 1 }
    return last > start ? self[last - 1] : nil
  }

  /// Where the character that ends just before `end` starts: `end - 1`, or further back over
  /// UTF-8 continuation bytes (not before `floor`).
  func lastCharacter(before end: StreamOffset, notBefore floor: StreamOffset) -> StreamOffset {
    var start = end - 1
    while start > floor && self[start] & 0xC0 == 0x80 { start = start - 1 }
    return start
  }

  /// Whether the bytes at `offset` are a UTF-8 byte-order mark.
  func hasByteOrderMark(at offset: StreamOffset) -> Bool {
    end - offset >= 3 && self[offset] == 0xEF && self[offset + 1] == 0xBB
      && self[offset + 2] == 0xBF
  }
}
