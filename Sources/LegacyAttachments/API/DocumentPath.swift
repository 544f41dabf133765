/// Where the documents are inside each input value (`--docs`): a chain of steps from the value,
/// in a subset of jq's path syntax. `.` is the value itself.
///
/// ```swift
/// let changes = try DocumentPath(parsing: ".results[].doc")
/// let bulkGet = try DocumentPath(parsing: #".results[].docs[]."ok""#)
/// ```
public struct DocumentPath: Sendable, Hashable, CustomStringConvertible {
  /// One step from a value to the values under it.
  public enum Step: Sendable, Hashable {
    /// The members of an object with this key (compared decoded; every member with it, if the
    /// key occurs twice).
    case member(String)
    /// Every element of an array.
    case elements
  }

  /// The steps, in order from the input value; none for ``root`` (`.`).
  public var steps: [Step]

  /// The path made of `steps`; no steps is ``root``.
  public init(steps: [Step]) { self.steps = steps }

  /// The value itself: every input value is a document.
  public static let root = DocumentPath(steps: [])

  /// The paths of the named `--format`s.
  public static let changes = DocumentPath(steps: [.member("results"), .elements, .member("doc")])
  /// `--format all-docs`: `.rows[].doc`, an `_all_docs?include_docs=true` response.
  public static let allDocs = DocumentPath(steps: [.member("rows"), .elements, .member("doc")])
  /// `--format bulk-docs`: `.docs[]`, a `_bulk_docs` request body.
  public static let bulkDocs = DocumentPath(steps: [.member("docs"), .elements])
  /// `--format bulk-get`: `.results[].docs[].ok`, CouchDB's `_bulk_get` response.
  public static let bulkGet = DocumentPath(
    steps: [.member("results"), .elements, .member("docs"), .elements, .member("ok")])

  /// Whether the path iterates an array somewhere (`[]`).
  public var iterates: Bool { steps.contains(.elements) }

  /// Parses `text`: `.` alone, or steps `.NAME` (`[A-Za-z_][A-Za-z0-9_]*`), `."JSON string"` and
  /// `[]`, one after another (`.results[].doc`).
  public init(parsing text: String) throws(DocumentPathError) {
    let bytes = Array(text.utf8)
    guard bytes.first == UInt8(ascii: ".") else { throw DocumentPathError(path: text) }
    if bytes == [UInt8(ascii: ".")] {
      self = .root
      return
    }
    var steps: [Step] = []
    var index = 0
    while index < bytes.count {
      switch bytes[index] {
      case UInt8(ascii: "["):
        guard index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "]") else {
          throw DocumentPathError(path: text)
        }
        steps.append(.elements)
        index += 2
      case UInt8(ascii: "."):
        index += 1
        guard index < bytes.count else { throw DocumentPathError(path: text) }
        if bytes[index] == UInt8(ascii: "[") { continue }  // `.[]`
        if bytes[index] == UInt8(ascii: "\"") {
          let (name, end) = try Self.quotedName(bytes, from: index, path: text)
          steps.append(.member(name))
          index = end
        } else {
          let start = index
          while index < bytes.count && Self.isNameByte(bytes[index], first: index == start) {
            index += 1
          }
          guard index > start else { throw DocumentPathError(path: text) }
          steps.append(.member(String(decoding: bytes[start..<index], as: UTF8.self)))
        }
      default:
        throw DocumentPathError(path: text)
      }
    }
    self.steps = steps
  }

  private static func isNameByte(_ byte: UInt8, first: Bool) -> Bool {
    (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || byte == 0x5F
      || (!first && byte >= 0x30 && byte <= 0x39)
  }

  /// The JSON string token starting at `start`, decoded, and the index just past it.
  private static func quotedName(_ bytes: [UInt8], from start: Int, path: String)
    throws(DocumentPathError) -> (String, Int)
  {
    var index = start + 1
    while index < bytes.count && bytes[index] != UInt8(ascii: "\"") {
      index += bytes[index] == UInt8(ascii: "\\") ? 2 : 1
    }
    guard index < bytes.count else { throw DocumentPathError(path: path) }
    let token = Array(bytes[start...index])
    // The token must be a valid JSON string: checked by the engine's own parser.
    guard let name = JSONText.validStringValue(token) else { throw DocumentPathError(path: path) }
    return (String(decoding: name, as: UTF8.self), index + 1)
  }

  /// The path as written with `--docs`: `.results[].doc`, `."a b"`.
  public var description: String {
    guard !steps.isEmpty else { return "." }
    var text = ""
    for step in steps {
      switch step {
      case .elements: text += text.isEmpty ? ".[]" : "[]"
      case .member(let name): text += "." + Self.written(name)
      }
    }
    return text
  }

  /// A key as a path step writes it: bare when it is a name, else as a JSON string.
  static func written(_ key: String) -> String {
    let bytes = Array(key.utf8)
    if !bytes.isEmpty && bytes.enumerated().allSatisfy({ isNameByte($1, first: $0 == 0) }) {
      return key
    }
    return ConversionDiagnostic.quoted(key)
  }
}

/// A document path (`--docs`) that is not one.
public struct DocumentPathError: Error, Sendable, Equatable, CustomStringConvertible {
  /// The text given as the path, unchanged.
  public var path: String

  /// What a path must be.
  public static let rule = ". or steps .NAME, .\"JSON string\" and [] (like .results[].doc)"

  public var description: String {
    "a document path must be \(Self.rule), not '\(path)'"
  }
}
