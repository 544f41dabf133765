// Unit tests reach internal types through @testable, which only debug builds allow.
#if DEBUG

@testable import LegacyAttachments

extension InputWindow {
  /// Appends `text`'s UTF-8 bytes, as a read would.
  mutating func append(_ text: String) {
    var text = text
    text.withUTF8 { append(UnsafeRawBufferPointer($0)) }
  }
}

#endif
