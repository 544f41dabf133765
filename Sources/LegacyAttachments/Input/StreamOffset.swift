/// A position in one input: the number of bytes of that input before it.
///
/// Every position the engine keeps in its input is one of these, counted from the input's first
/// byte and never from the start of a buffer, so that the input window discarding consumed bytes
/// never changes what a kept position means. Only an ``InputView`` turns one into an address.
/// (Positions in a document's compact text, the other coordinate system, are plain `Int`s in
/// ``Span``s.)
struct StreamOffset: Comparable, Hashable, BitwiseCopyable, CustomStringConvertible {
  var value: Int

  init(_ value: Int) { self.value = value }

  static let zero = StreamOffset(0)

  static func < (a: StreamOffset, b: StreamOffset) -> Bool { a.value < b.value }

  /// The position `count` bytes further on. Offsets count bytes read, so they stay far from
  /// overflow; the per-token path relies on that and adds without a check.
  @inline(__always)
  static func + (position: StreamOffset, count: Int) -> StreamOffset {
    StreamOffset(position.value &+ count)
  }

  @inline(__always)
  static func - (position: StreamOffset, count: Int) -> StreamOffset {
    StreamOffset(position.value &- count)
  }

  /// The number of bytes from `b` to `a`.
  @inline(__always)
  static func - (a: StreamOffset, b: StreamOffset) -> Int { a.value &- b.value }

  @inline(__always)
  static func += (position: inout StreamOffset, count: Int) { position.value &+= count }

  var description: String { "@\(value)" }
}
