// Unit tests reach internal types through @testable, which only debug builds allow; the release
// run of `make test` covers the build that ships with ConformanceTests and CLITests.
#if DEBUG

import Testing

@testable import LegacyAttachments

@Suite("Input window: stream offsets survive discarding")
struct InputWindowTests {
  private func append(_ text: String, to window: inout InputWindow) { window.append(text) }

  @Test("a discard moves the start, and every kept offset still reads the same byte")
  func discardKeepsOffsets() {
    var window = InputWindow(capacity: 16)
    append("abcdefgh\nijkl", to: &window)
    let offset = StreamOffset(10)
    #expect(window.view[offset] == UInt8(ascii: "j"))
    window.discard(before: StreamOffset(9))
    #expect(window.start == StreamOffset(9))
    #expect(window.end == StreamOffset(13))
    #expect(window.view[offset] == UInt8(ascii: "j"))
    // Growing past the capacity moves the buffer; offsets still mean the same bytes.
    append(String(repeating: "x", count: 1000), to: &window)
    #expect(window.view[offset] == UInt8(ascii: "j"))
    #expect(window.view[StreamOffset(1012)] == UInt8(ascii: "x"))
    let small = window.isFull(adding: 1)
    let large = window.isFull(adding: 1_000_000)
    #expect(!small && large)
  }

  @Test(
    "a batch's bytes are shown in place, and copied (only what is kept) when the window changes")
  func adoptedBytes() {
    var bytes = ByteBuffer(capacity: 16)
    Array("{\"a\":1}\n{\"b\":2}\n".utf8).withUnsafeBufferPointer { bytes.append($0) }
    let batch = BatchBytes(taking: bytes)
    var window = InputWindow(capacity: 16)
    window.adopt(batch)
    #expect(window.view.pointer(at: .zero) == UnsafePointer(batch.buffer.base))
    #expect(window.end == StreamOffset(16) && window.lastByte == UInt8(ascii: "\n"))
    let full = window.isFull(adding: 1)
    #expect(full)
    // A discard copies what is kept, no more, into the window's own buffer.
    window.discard(before: StreamOffset(8))
    #expect(window.view.pointer(at: StreamOffset(8)) != UnsafePointer(batch.buffer.base + 8))
    #expect(window.start == StreamOffset(8) && window.end == StreamOffset(16))
    #expect(window.view[StreamOffset(10)] == UInt8(ascii: "b"))
    append("{}", to: &window)
    #expect(window.end == StreamOffset(18) && window.view[StreamOffset(17)] == UInt8(ascii: "}"))
    // An append copies all of an adopted batch first.
    var other = InputWindow(capacity: 16)
    other.adopt(batch)
    append("x", to: &other)
    #expect(other.end == StreamOffset(17) && other.view[StreamOffset(5)] == UInt8(ascii: "1"))
    #expect(other.view[StreamOffset(16)] == UInt8(ascii: "x"))
    other.restart()
    #expect(other.end == .zero)
  }

  @Test("the newline search: first, last, and the first line that starts with a byte")
  func newlineSearch() {
    var window = InputWindow(capacity: 16)
    append("ab\n{c\nd\n{e", to: &window)
    let view = window.view
    #expect(view.firstNewline(from: .zero, to: view.end) == StreamOffset(2))
    #expect(view.firstNewline(from: StreamOffset(3), to: view.end) == StreamOffset(5))
    #expect(view.lastNewline(from: .zero, to: view.end) == StreamOffset(7))
    #expect(view.lastNewline(from: .zero, to: StreamOffset(7)) == StreamOffset(5))
    #expect(view.firstNewline(from: StreamOffset(8), to: view.end) == nil)
    #expect(
      view.firstLine(startingWith: UInt8(ascii: "{"), from: .zero, to: view.end) == StreamOffset(3))
    #expect(
      view.firstLine(startingWith: UInt8(ascii: "{"), from: StreamOffset(4), to: view.end)
        == StreamOffset(8))
    // A line start at the limit counts; one past it does not.
    #expect(
      view.firstLine(startingWith: UInt8(ascii: "{"), from: StreamOffset(4), to: StreamOffset(7))
        == nil)
  }

  @Test("an address inside the view maps back to its stream offset")
  func addresses() {
    var window = InputWindow(capacity: 16)
    append("0123456789", to: &window)
    window.discard(before: StreamOffset(4))
    let view = window.view
    let pointer = view.pointer(at: StreamOffset(7))
    #expect(pointer.pointee == UInt8(ascii: "7"))
    #expect(view.offset(of: pointer) == StreamOffset(7))
    #expect(Array(view.bytes(from: StreamOffset(5), to: StreamOffset(8))) == Array("567".utf8))
  }

  @Test("split hands the front over as a buffer of its own; the window keeps the rest")
  func split() {
    var window = InputWindow(capacity: 16)
    append("one\ntwo\nthr", to: &window)
    let front = window.split(at: StreamOffset(8), capacity: 16)
    #expect(Array(front.bytes) == Array("one\ntwo\n".utf8))
    #expect(window.start == StreamOffset(8))
    #expect(window.view[StreamOffset(8)] == UInt8(ascii: "t"))
    append("ee", to: &window)
    #expect(Array(window.view.bytes(from: window.start, to: window.end)) == Array("three".utf8))
  }

  @Test("a byte-order mark is recognised where it is, not elsewhere")
  func byteOrderMark() {
    var window = InputWindow(capacity: 16)
    ([0xEF, 0xBB, 0xBF, 0x7B, 0xEF, 0xBB] as [UInt8]).withUnsafeBytes { window.append($0) }
    #expect(window.view.hasByteOrderMark(at: .zero))
    #expect(!window.view.hasByteOrderMark(at: StreamOffset(4)))
  }
}

#endif
