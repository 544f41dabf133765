import Glibc

/// How a path from a document's root to a blob is written: as a `jsonpath` name (`$.a[2]`) or as
/// an RFC 6901 JSON Pointer (`/a/2`).
enum PathStyle: BitwiseCopyable {
  case jsonpath
  case pointer

  /// What starts an object key's step: `.` or `/`.
  var keySeparator: UInt8 { self == .jsonpath ? UInt8(ascii: ".") : UInt8(ascii: "/") }

  /// Appends the step for array index `index`: `[2]` or `/2`.
  @inline(__always)
  func appendIndexStep(_ index: Int, to output: inout ByteBuffer) {
    switch self {
    case .jsonpath:
      output.append(UInt8(ascii: "["))
      output.appendDecimal(index)
      output.append(UInt8(ascii: "]"))
    case .pointer:
      output.append(UInt8(ascii: "/"))
      output.appendDecimal(index)
    }
  }

  /// Appends the step for the object key `key` (decoded): `.key` with `\`, `.` and `[` escaped by a
  /// backslash, or `/key` with `~` as `~0` and `/` as `~1`.
  func appendKeyStep(_ key: UnsafeBufferPointer<UInt8>, to output: inout ByteBuffer) {
    output.append(keySeparator)
    switch self {
    case .jsonpath:
      var runStart = 0
      for index in 0..<key.count where needsEscape(key[index]) {
        output.append(UnsafeBufferPointer(rebasing: key[runStart..<index]))
        output.append(UInt8(ascii: "\\"))
        runStart = index
      }
      output.append(UnsafeBufferPointer(rebasing: key[runStart...]))
    case .pointer:
      var runStart = 0
      for index in 0..<key.count where needsEscape(key[index]) {
        output.append(UnsafeBufferPointer(rebasing: key[runStart..<index]))
        output.append(key[index] == UInt8(ascii: "~") ? "~0" : "~1")
        runStart = index + 1
      }
      output.append(UnsafeBufferPointer(rebasing: key[runStart...]))
    }
  }

  /// Whether `byte` of a key is written escaped in a step.
  @inline(__always)
  func needsEscape(_ byte: UInt8) -> Bool {
    switch self {
    case .jsonpath:
      byte == UInt8(ascii: "\\") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "[")
    case .pointer: byte == UInt8(ascii: "~") || byte == UInt8(ascii: "/")
    }
  }

  /// How many leading bytes of a key's raw token text need no escape, neither in JSON (a
  /// backslash stops the count) nor in a step. One loop per style: this runs for every step of
  /// every blob's path.
  @inline(__always)
  func plainPrefixLength(_ bytes: UnsafePointer<UInt8>, count: Int) -> Int {
    var index = 0
    switch self {
    case .jsonpath:
      while index < count {
        let byte = bytes[index]
        if byte == UInt8(ascii: "\\") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "[") {
          break
        }
        index &+= 1
      }
    case .pointer:
      while index < count {
        let byte = bytes[index]
        if byte == UInt8(ascii: "\\") || byte == UInt8(ascii: "~") || byte == UInt8(ascii: "/") {
          break
        }
        index &+= 1
      }
    }
    return index
  }
}

/// The two ways push names the `_attachments` entries it makes (docs/formats.md, "Naming rules"), and
/// the test that recognises a name either of them made.
struct AttachmentNaming: BitwiseCopyable {
  /// How the path after the prefix is written: `jsonpath` for `jsonpath`, `pointer` for
  /// `litecore`.
  let style: PathStyle

  init(_ scheme: EntryNaming) {
    style = scheme == .jsonpath ? .jsonpath : .pointer
  }

  /// Which naming this is.
  var scheme: EntryNaming { style == .jsonpath ? .jsonpath : .litecore }

  /// What every name starts with: `$` or `blob_`.
  @inline(__always)
  var prefix: StaticString { style == .jsonpath ? "$" : "blob_" }

  /// Whether the entry leaves out the blob's own `stub` and `revpos` members, because it ends
  /// with its own (``appendEntryTail(revpos:to:)``).
  var writesStubAndRevpos: Bool { scheme == .litecore }

  /// Appends what follows the blob's members in an entry: `"stub":true,"revpos":N` for
  /// `litecore`, nothing for `jsonpath`. `separator` is written first when something is written.
  func appendEntryTail(revpos: Int, needsComma: Bool, to output: inout ByteBuffer) {
    guard scheme == .litecore else { return }
    if needsComma { output.append(UInt8(ascii: ",")) }
    output.append("\"stub\":true,\"revpos\":")
    output.appendDecimal(revpos)
  }

  /// Whether `name` (a decoded entry key) is a name that some push made, in either naming (docs/formats.md,
  /// push rule 3): `$` and one or more well-formed `jsonpath` steps; `blob_/` and a JSON Pointer;
  /// or `blob_` and digits only (Couchbase Lite 2.0's `blob_1`).
  static func isSynthesized(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
    guard let first = name.first else { return false }
    if first == UInt8(ascii: "$") { return isJSONPathSteps(name, from: 1) }
    let blob: StaticString = "blob_"
    guard name.count > blob.utf8CodeUnitCount,
      memcmp(name.baseAddress!, blob.utf8Start, blob.utf8CodeUnitCount) == 0
    else { return false }
    let rest = blob.utf8CodeUnitCount
    if name[rest] == UInt8(ascii: "/") { return isJSONPointer(name, from: rest) }
    return name[rest...].allSatisfy(isDigit)
  }

  /// One or more `.key` / `[digits]` steps from `start` to the end of `name`.
  private static func isJSONPathSteps(_ name: UnsafeBufferPointer<UInt8>, from start: Int) -> Bool {
    var index = start
    guard index < name.count else { return false }
    while index < name.count {
      switch name[index] {
      case UInt8(ascii: "."):
        index += 1
        // A key runs to the next unescaped `.` or `[`; a backslash escapes only `\`, `.`, `[`.
        while index < name.count && name[index] != UInt8(ascii: ".")
          && name[index] != UInt8(ascii: "[")
        {
          if name[index] == UInt8(ascii: "\\") {
            guard index + 1 < name.count, PathStyle.jsonpath.needsEscape(name[index + 1]) else {
              return false
            }
            index += 2
          } else {
            index += 1
          }
        }
      case UInt8(ascii: "["):
        let digits = index + 1
        index = digits
        while index < name.count && isDigit(name[index]) { index += 1 }
        guard index > digits, index < name.count, name[index] == UInt8(ascii: "]") else {
          return false
        }
        index += 1
      default:
        return false
      }
    }
    return true
  }

  /// A JSON Pointer (`/`-separated, `~` only in `~0` and `~1`) from `start` to the end.
  private static func isJSONPointer(_ name: UnsafeBufferPointer<UInt8>, from start: Int) -> Bool {
    var index = start
    while index < name.count {
      if name[index] == UInt8(ascii: "~") {
        guard index + 1 < name.count,
          name[index + 1] == UInt8(ascii: "0") || name[index + 1] == UInt8(ascii: "1")
        else { return false }
        index += 2
      } else {
        index += 1
      }
    }
    return true
  }

  private static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

}
