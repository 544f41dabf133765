/// Writes one flat JSON object (an NDJSON row) field by field.
struct RowWriter {
  private var fields = 0

  mutating func field(_ name: StaticString, into output: inout ByteBuffer) {
    output.append(fields == 0 ? UInt8(ascii: "{") : UInt8(ascii: ","))
    output.append(UInt8(ascii: "\""))
    output.append(name)
    output.append("\":")
    fields += 1
  }

  /// A field whose value is a JSON token copied as it is, or `null` when absent.
  mutating func raw(
    _ name: StaticString, _ span: Span, from text: UnsafeBufferPointer<UInt8>,
    into output: inout ByteBuffer
  ) {
    field(name, into: &output)
    if span.isPresent {
      output.append(UnsafeBufferPointer(rebasing: text[span.start..<span.end]))
    } else {
      output.append("null")
    }
  }

  /// A string field from decoded (WTF-8) bytes.
  mutating func string(
    _ name: StaticString, _ bytes: UnsafeBufferPointer<UInt8>, into output: inout ByteBuffer
  ) {
    field(name, into: &output)
    JSONText.appendQuoted(bytes, to: &output)
  }

  mutating func string(_ name: StaticString, _ text: String, into output: inout ByteBuffer) {
    var text = text
    text.withUTF8 { string(name, $0, into: &output) }
  }

  mutating func number(_ name: StaticString, _ value: Int, into output: inout ByteBuffer) {
    field(name, into: &output)
    output.appendDecimal(value)
  }

  mutating func end(into output: inout ByteBuffer) {
    output.append("}\n")
  }
}
