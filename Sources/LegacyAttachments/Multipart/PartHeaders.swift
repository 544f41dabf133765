/// What conversion reads from a MIME part's headers (RFC 2045, RFC 2183): names compared in any
/// case, parameters quoted or not.
struct PartHeaders: Equatable {
  /// The media type, lowercased, without parameters (`application/json`); empty without one.
  var mediaType: [UInt8] = []
  /// The `boundary` parameter of a `multipart/…` type.
  var boundary: [UInt8]?
  /// `error="true"` on the type: CouchDB's and Sync Gateway's `_bulk_get` answer for a document
  /// it could not give.
  var isError = false
  /// The `filename` of `Content-Disposition`: the attachment the part holds; and, when it is
  /// quoted, as written between the quotes (CouchDB writes a name with a `\` as it is, where
  /// RFC 2045 and Go, for Sync Gateway, escape it).
  var filename: [UInt8]?
  var rawFilename: [UInt8]?
  /// `Content-Length`, when there is one.
  var contentLength: Int?
  /// `Content-Encoding`, lowercased; nil without one.
  var contentEncoding: [UInt8]?
  /// `X-Doc-Id` (`_bulk_get`).
  var documentID: [UInt8]?

  /// Why a header block cannot be read.
  struct Invalid: Error {
    var reason: String
  }

  init() {}

  init(lines: [[UInt8]]) throws(Invalid) {
    for line in lines {
      guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else {
        throw Invalid(reason: Messages.multipartHeaderLine(String(decoding: line, as: UTF8.self)))
      }
      let name = Self.lowercased(Self.trimmed(line[..<colon]))
      let value = Self.trimmed(line[(colon + 1)...])
      switch String(decoding: name, as: UTF8.self) {
      case "content-type":
        let (type, parameters) = Self.split(value)
        mediaType = Self.lowercased(type)
        if mediaType.starts(with: "multipart/".utf8) {
          guard let boundary = parameters["boundary"], !boundary.isEmpty else {
            throw Invalid(reason: Messages.multipartNoNestedBoundary)
          }
          self.boundary = boundary
        }
        isError =
          parameters["error"].map { Self.lowercased($0[...]) == Array("true".utf8) } ?? false
      case "content-disposition":
        let (_, parameters) = Self.split(value)
        filename = parameters["filename"]
        rawFilename = Self.split(value, unescaping: false).parameters["filename"]
      case "content-length":
        guard let length = Self.wholeNumber(value) else {
          throw Invalid(
            reason: Messages.multipartContentLength(String(decoding: value, as: UTF8.self)))
        }
        contentLength = length
      case "content-encoding":
        contentEncoding = Self.lowercased(value)
      case "x-doc-id":
        documentID = Array(value)
      default:
        break
      }
    }
  }

  private static func trimmed(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
    var slice = bytes
    while let first = slice.first, first == 0x20 || first == 0x09 { slice = slice.dropFirst() }
    while let last = slice.last, last == 0x20 || last == 0x09 { slice = slice.dropLast() }
    return slice
  }

  private static func lowercased(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
    bytes.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }
  }

  private static func wholeNumber(_ bytes: ArraySlice<UInt8>) -> Int? {
    guard !bytes.isEmpty, bytes.count <= 18, bytes.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 })
    else { return nil }
    return bytes.reduce(0) { $0 * 10 + Int($1 - 0x30) }
  }

  /// `value; name=token; name="quoted \" string"`: the value and its parameters (names
  /// lowercased; RFC 2045 5.1).
  private static func split(_ header: ArraySlice<UInt8>, unescaping: Bool = true)
    -> (value: ArraySlice<UInt8>, parameters: [String: [UInt8]])
  {
    guard let semicolon = header.firstIndex(of: UInt8(ascii: ";")) else { return (header, [:]) }
    var parameters: [String: [UInt8]] = [:]
    var index = semicolon
    while index < header.endIndex {
      index += 1  // past ';'
      while index < header.endIndex, header[index] == 0x20 || header[index] == 0x09 { index += 1 }
      let nameStart = index
      while index < header.endIndex, header[index] != UInt8(ascii: "="),
        header[index] != UInt8(ascii: ";")
      {
        index += 1
      }
      let name = String(decoding: lowercased(trimmed(header[nameStart..<index])), as: UTF8.self)
      guard index < header.endIndex, header[index] == UInt8(ascii: "=") else { continue }
      index += 1
      var value: [UInt8] = []
      if index < header.endIndex, header[index] == UInt8(ascii: "\"") {
        index += 1
        while index < header.endIndex, header[index] != UInt8(ascii: "\"") {
          if unescaping, header[index] == UInt8(ascii: "\\"), index + 1 < header.endIndex {
            index += 1
          }
          value.append(header[index])
          index += 1
        }
        index += 1  // past the closing quote
        while index < header.endIndex, header[index] != UInt8(ascii: ";") { index += 1 }
      } else {
        let start = index
        while index < header.endIndex, header[index] != UInt8(ascii: ";") { index += 1 }
        value = Array(trimmed(header[start..<index]))
      }
      if parameters[name] == nil { parameters[name] = value }
    }
    return (trimmed(header[..<semicolon]), parameters)
  }
}
