/// Edits of a document's compact text, applied in one pass: spans replaced by new bytes, and
/// at most one member per object removed with its comma (several members of one object are
/// left out by rebuilding it, with ``MemberSplicer``). For writers that change a few places (an
/// upgrade, updated blobs); the spans must not overlap.
struct TextEdits {
  private struct Edit {
    var span: Span
    var replacement: [UInt8]
  }

  private var edits: [Edit] = []

  var isEmpty: Bool { edits.isEmpty }

  mutating func replace(_ span: Span, with replacement: [UInt8]) {
    edits.append(Edit(span: span, replacement: replacement))
  }

  mutating func insert(_ bytes: [UInt8], at offset: Int) {
    edits.append(Edit(span: Span(start: offset, end: offset), replacement: bytes))
  }

  /// Removes the member `member` (key through value) of an object, with the comma that
  /// separates it from its neighbour.
  mutating func removeMember(_ member: Span, in text: UnsafeBufferPointer<UInt8>) {
    if text[member.end] == UInt8(ascii: ",") {
      replace(Span(start: member.start, end: member.end + 1), with: [])
    } else if text[member.start - 1] == UInt8(ascii: ",") {
      replace(Span(start: member.start - 1, end: member.end), with: [])
    } else {
      replace(member, with: [])
    }
  }

  /// Appends `text` with the edits made.
  func apply(to text: UnsafeBufferPointer<UInt8>, into output: inout ByteBuffer) {
    var cursor = 0
    for edit in edits.sorted(by: { ($0.span.start, $0.span.end) < ($1.span.start, $1.span.end) }) {
      precondition(edit.span.start >= cursor, "overlapping edits")
      output.append(UnsafeBufferPointer(rebasing: text[cursor..<edit.span.start]))
      edit.replacement.withUnsafeBufferPointer { output.append($0) }
      cursor = edit.span.end
    }
    output.append(UnsafeBufferPointer(rebasing: text[cursor...]))
  }
}
