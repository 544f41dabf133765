/// A growable stack of trivial values that owns its memory, for the engine's per-token
/// bookkeeping (open containers, spans, attachment records).
struct RawStack<Element: BitwiseCopyable>: ~Copyable {
  private(set) var base: UnsafeMutablePointer<Element>
  private(set) var count: Int
  private var capacity: Int

  init(capacity: Int = 64) {
    self.capacity = max(capacity, 4)
    base = .allocate(capacity: self.capacity)
    count = 0
  }

  deinit { base.deallocate() }

  @inline(__always)
  mutating func push(_ element: Element) {
    if count == capacity { grow() }
    (base + count).initialize(to: element)
    count += 1
  }

  /// Whether one more element fits without growing.
  @inline(__always)
  var hasRoom: Bool { count < capacity }

  /// ``push(_:)`` when ``hasRoom`` is known to be true: it can never call out to grow.
  @inline(__always)
  mutating func pushWithinCapacity(_ element: Element) {
    assert(count < capacity, "no room left")
    (base + count).initialize(to: element)
    count &+= 1
  }

  @inline(never)
  private mutating func grow() {
    let newCapacity = capacity * 2
    let newBase = UnsafeMutablePointer<Element>.allocate(capacity: newCapacity)
    newBase.update(from: base, count: count)
    base.deallocate()
    base = newBase
    capacity = newCapacity
  }

  @inline(__always)
  mutating func pop() -> Element {
    count -= 1
    return base[count]
  }

  @inline(__always)
  mutating func removeAll() { count = 0 }

  @inline(__always)
  mutating func truncate(to newCount: Int) { count = newCount }

  @inline(__always)
  subscript(index: Int) -> Element {
    get { base[index] }
    nonmutating set { base[index] = newValue }
  }

  var isEmpty: Bool { count == 0 }

  /// The elements; valid until the stack next changes.
  var elements: UnsafeBufferPointer<Element> { UnsafeBufferPointer(start: base, count: count) }
}
