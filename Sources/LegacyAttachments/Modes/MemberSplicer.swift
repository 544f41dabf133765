/// Writes the members of a compact JSON object's inner text with some members left out.
///
/// Spans name whole members (key through value) in the same compact text, sorted and disjoint.
/// What lies between two left-out members is a run of whole members with a separating comma at
/// either end; those commas are dropped and the runs joined with single commas again.
struct MemberSplicer {
  /// Whether a member has been written, so the next one needs a comma.
  private(set) var wroteAny = false

  /// Appends the members of `text[start..<end]` except those in `excluded`.
  mutating func append<Spans: Sequence<Span>>(
    _ text: UnsafePointer<UInt8>, from start: Int, to end: Int, excluding excluded: Spans,
    to output: inout ByteBuffer
  ) {
    var cursor = start
    for span in excluded {
      appendRun(text, from: cursor, to: span.start, to: &output)
      cursor = span.end
    }
    appendRun(text, from: cursor, to: end, to: &output)
  }

  /// Appends one separately built member (its text already in `output` order): writes the comma
  /// it needs and marks that a member was written. Call before appending the member itself.
  mutating func beginMember(in output: inout ByteBuffer) {
    if wroteAny { output.append(UInt8(ascii: ",")) }
    wroteAny = true
  }

  private mutating func appendRun(
    _ text: UnsafePointer<UInt8>, from start: Int, to end: Int, to output: inout ByteBuffer
  ) {
    var first = start
    var last = end
    if first < last && text[first] == UInt8(ascii: ",") { first += 1 }
    if last > first && text[last - 1] == UInt8(ascii: ",") { last -= 1 }
    guard first < last else { return }
    beginMember(in: &output)
    output.append(text + first, count: last - first)
  }
}
