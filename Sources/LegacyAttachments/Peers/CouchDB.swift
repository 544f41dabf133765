import Glibc

/// What a running CouchDB 3.5 does that the conversions must know, each from its source in
/// apache/couchdb and checked against the real server by `make interop`.
///
/// How it stores an attachment's bytes and labels them (`couch_db:with_stream/3`,
/// `couch_stream:gzip_init/1`, `couch_att:to_json/4`):
///
/// - a body whose content type is compressible (`[attachments] compressible_types`, by default
///   `text/*, application/javascript, application/json, application/xml`) is stored as a gzip
///   stream, at `[attachments] compression_level` (by default 8; 0 stores every body as it is);
/// - its `md5-` digest is the MD5 of what is stored: of the gzip stream for those bodies;
/// - `attachments=true` returns the bytes themselves (decoded) as `data`, so their own MD5 is not
///   the digest. Compressing them again as CouchDB did gives the stream back, and its MD5 checks
///   them (``CompressionLevelGuess``).
enum CouchDB {
  /// Whether CouchDB's default `compressible_types` compress a body of this content type (the
  /// decoded `content_type` value): `text/*`, `application/javascript`, `application/json` or
  /// `application/xml`, matched as CouchDB matches them (`couch_db:compressible_att_type/1`):
  /// ignoring case, white space around the type, and parameters after `;`.
  static func compresses(contentType: [UInt8]) -> Bool {
    var type = contentType.drop { JSONText.isWhitespace($0) }.prefix { $0 != UInt8(ascii: ";") }
    while let last = type.last, JSONText.isWhitespace(last) { type = type.dropLast() }
    let lowered = type.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }
    if lowered.starts(with: "text/".utf8) { return true }
    return ["application/javascript", "application/json", "application/xml"].contains {
      lowered.elementsEqual($0.utf8)
    }
  }

  /// CouchDB's default `compression_level`.
  static let defaultCompressionLevel: Int32 = 8

  /// The MD5 of the gzip stream CouchDB stores for the bytes `body` hands over (it is called
  /// with a sink and hands every byte to it, in order), compressed at `level`.
  static func md5OfStoredStream(
    level: Int32, body: ((UnsafeRawBufferPointer) -> Void) -> Void
  ) -> [UInt8] {
    var md5 = Hasher(.md5)
    var compressor = GzipCompressor(level: level)
    body { bytes in compressor.append(bytes) { md5.update($0) } }
    compressor.finish { md5.update($0) }
    return md5.finish()
  }
}

extension CouchDB {
  /// CouchDB's default `[couchdb] max_document_size`: a larger document body gets
  /// `413 document_too_large`.
  static let defaultMaxDocumentSize = 8_000_000

  /// The top-level `_` members CouchDB keeps in a document's body (`couch_doc:transfer_fields/3`);
  /// it takes the others (`_id`, `_rev`, `_attachments`, `_deleted`, `_revisions`, …) out of it.
  private static let underscoreMembersInBody = [
    "_access", "_replication_state", "_replication_state_time", "_replication_state_reason",
    "_replication_id", "_replication_stats",
  ].map { Array($0.utf8) }

  /// The size CouchDB compares with `max_document_size` for a document, given its compact text
  /// (`couch_doc:from_json_obj_validate/2`, `couch_ejson_size:encoded_size/1`): the body without
  /// the `_` members CouchDB takes out, attachments never counted, as JSON with each string
  /// counted as its decoded bytes and two quotes, and each number by the size rule
  /// `encoded_size` gives it (a float by its magnitude alone: `1.5`, `0.25` and `3.14159` all
  /// count 3).
  static func documentSize(_ text: UnsafeBufferPointer<UInt8>) -> Int {
    var size = 2
    var kept = 0
    for member in CompactObject.members(Span(start: 0, end: text.count), in: text) {
      let key = member.key
      if text[key.start + 1] == UInt8(ascii: "_"),
        !underscoreMembersInBody.contains(where: { CompactObject.key(key, in: text, is: $0) })
      {
        continue
      }
      kept += 1
      size += valueSize(key, in: text) + 1 + valueSize(member.value, in: text)
    }
    return size + max(kept - 1, 0)
  }

  /// `encoded_size` of one value of compact text: structure counts as written, strings and
  /// numbers by their own rules.
  private static func valueSize(_ value: Span, in text: UnsafeBufferPointer<UInt8>) -> Int {
    var size = 0
    var index = value.start
    while index < value.end {
      let byte = text[index]
      switch byte {
      case UInt8(ascii: "\""):
        var end = index + 1
        var escaped = false
        while text[end] != UInt8(ascii: "\"") {
          if text[end] == UInt8(ascii: "\\") {
            escaped = true
            end += 1
          }
          end += 1
        }
        let token = UnsafeBufferPointer(rebasing: text[index...end])
        size += 2 + (escaped ? JSONText.decodeString(token).count : token.count - 2)
        index = end + 1
      case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
        var end = index
        while end < value.end, !Self.endsNumber(text[end]) { end += 1 }
        size += numberSize(UnsafeBufferPointer(rebasing: text[index..<end]))
        index = end
      default:
        // Structure and the letters of true, false and null count as written.
        size += 1
        index += 1
      }
    }
    return size
  }

  private static func endsNumber(_ byte: UInt8) -> Bool {
    byte == UInt8(ascii: ",") || byte == UInt8(ascii: "]") || byte == UInt8(ascii: "}")
  }

  /// `encoded_size` of a number token: an integer (no `.`, `e` or `E`) by its digits (with a
  /// sign), as CouchDB counts them (`trunc(math:log10(N)) + 1` from 10,000 on, which a
  /// `Double` gives alike); a float by its magnitude.
  static func numberSize(_ token: UnsafeBufferPointer<UInt8>) -> Int {
    let negative = token.first == UInt8(ascii: "-")
    let isFloat = token.contains {
      $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E")
    }
    guard let value = Double(String(decoding: token, as: UTF8.self)) else { return token.count }
    let magnitude = abs(value)
    let sign = negative && value != 0 ? 1 : 0
    if !isFloat {
      let digits = token.count - (negative ? 1 : 0)
      if magnitude == 0 { return 1 }
      // Beyond a double's range CouchDB's math:log10 fails (it answers 500): the digits then.
      if digits <= 4 || !magnitude.isFinite { return digits + sign }
      return Int(log10(magnitude)) + 1 + sign
    }
    if magnitude == 0 || magnitude == 1 { return 3 + (value < 0 ? 1 : 0) }
    let floatSign = value < 0 ? 1 : 0
    if magnitude < 1 {
      switch magnitude {
      case ...1e-300: return 3 + floatSign
      case ...1e-100: return 6 + floatSign
      case ...1e-10: return 5 + floatSign
      case ...0.01: return 4 + floatSign
      default: return 3 + floatSign
      }
    }
    switch magnitude {
    case 1e100...: return 5 + floatSign
    case 1e10...: return 4 + floatSign
    default: return 3 + floatSign
    }
  }
}
