/// Every message the engine reports, in one place, worded as users see them after
/// `FILE:LINE:COLUMN: error: ` (or `warning: `), and the details of `--check` findings.
enum Messages {
  // MARK: Documents

  static func notAnObject(_ kind: ValueKind, suggestListFormat: Bool) -> String {
    var message = "document is not a JSON object (it is \(kind.article))"
    if kind == .array && suggestListFormat {
      message += "; a file holding one array of documents is read in list framing"
    }
    return message
  }

  static let duplicateAttachments =
    "more than one top-level \"_attachments\" member; refusing to guess which one is meant"

  static func attachmentsNotObjectForPush(_ kind: ValueKind) -> String {
    "\"_attachments\" is \(kind.article), not an object, and the document has blobs: push cannot"
      + " add their entries without losing data"
  }

  static func attachmentsNotObjectForCheck(_ kind: ValueKind) -> String {
    "\"_attachments\" is \(kind.article), not an object; Sync Gateway expects an object of"
      + " attachments"
  }

  static func blobWithoutDigest(name: String) -> String {
    "blob at \(name) has no string \"digest\"; it gets no _attachments entry"
  }

  static func entryDataKept(name: String) -> String {
    "_attachments entry \(ConversionDiagnostic.quoted(name)) carries the attachment's bytes (\"data\") and"
      + " is kept: removing it would lose the only copy of them"
  }

  static func entryDataDropped(name: String) -> String {
    "_attachments entry \(ConversionDiagnostic.quoted(name)) carries the attachment's bytes (\"data\");"
      + " push replaces it with the blob's entry, which has none (a push with a blob store carries"
      + " them)"
  }

  static func entryDataNotString(name: String, kind: ValueKind) -> String {
    "_attachments entry \(ConversionDiagnostic.quoted(name)) has a \"data\" member that is \(kind.article),"
      + " not a base64 string"
  }

  // MARK: Attachment bodies (--blobs)

  static func blobMissing(file: String, digest: String) -> String {
    "no file \(file) in the blob store for \(digest)"
  }

  static func blobUnreadable(file: String, errno: SystemErrno) -> String {
    "cannot read \(file) in the blob store: \(errno)"
  }

  static func blobCorrupt(file: String, digest: String, actual: String) -> String {
    "the blob store's file \(file) holds other bytes (\(actual)), not \(digest)"
  }

  static func lengthMismatch(file: String, size: Int, length: String) -> String {
    "the blob store's file \(file) is \(size) bytes; length is \(length)"
  }

  /// A body that cannot be carried: `place` is `blob at $.photo` or `_attachments entry "x"`.
  static func body(_ outcome: BodyCarrier.Outcome, place: String, digest: String) -> String {
    switch outcome {
    case .carried: return "\(place) (\(digest)): carried"
    case .namesNoFile:
      return "\(place): digest \(digest) names no file of a blob store (only sha1- digests do)"
    case .missing(let file): return "\(place) (\(digest)): no file \(file) in the blob store"
    case .otherBytes(let file, let actual):
      return
        "\(place) (\(digest)): \(file ?? "its \"data\"") holds other bytes (\(actual.description))"
    case .otherSize(let file, let size, let length):
      return "\(place) (\(digest)): \(file ?? "its \"data\"") is \(size) bytes; length is \(length)"
    case .invalidBase64:
      return "\(place): \"data\" is not base64 (RFC 4648: padded, no whitespace, unused bits zero)"
    case .keptExisting(let file, let size?, let newSize):
      return "\(place) (\(digest)): \(file) is already in the blob store with \(size) bytes, not"
        + " \(newSize); it is kept as it is"
    case .keptExisting(let file, nil, _):
      return "\(place) (\(digest)): \(file) is already in the blob store and is not a regular"
        + " file; it is kept as it is"
    case .keptExistingOtherBytes(let file, let actual):
      return "\(place) (\(digest)): \(file) is already in the blob store with other bytes"
        + " (\(actual.description)); it is kept as it is"
    case .failed(let file, let errno): return "\(place) (\(digest)): \(file): \(errno)"
    case .carriedUnverified:
      return "\(place) (\(digest)): its bytes could not be checked: CouchDB labels a body it"
        + " stores compressed with the md5 of the gzip stream, and compressing them again as CouchDB"
        + " does (zlib, gzip) does not give it; they are kept unverified, named by their SHA-1"
    case .encoded(let encoding):
      return
        "\(place) (\(digest)): its bytes are encoded with \(ConversionDiagnostic.quoted(String(decoding: encoding, as: UTF8.self))),"
        + " which is not gzip; they cannot be read and the entry is kept"
    case .invalidGzip(let reason):
      return "\(place) (\(digest)): \"encoding\" says gzip, but its \"data\" is not a gzip"
        + " stream (\(reason))"
    }
  }

  /// Why pull kept an entry whose name push makes.
  static func entryKept(name: String, _ reason: EntryMirror.Unmatched) -> String {
    let entry = "_attachments entry \(ConversionDiagnostic.quoted(name))"
    switch reason {
    case .namesNoPlace:
      return "\(entry) has a name a push makes but gives no place a blob can be at, and no blob"
        + " has its digest; it is kept"
    case .noBlob(let place):
      return "\(entry) has a name a push makes, but no blob is at \(place); it is kept"
    case .otherDigest(let place):
      return "\(entry) does not mirror the blob at \(place): their digests differ (the attachment"
        + " was replaced; a pull that updates blobs puts the new one in the blob); it is kept"
    case .otherLength(let place, let entryLength?, let blobLength?):
      return "\(entry) has an md5- digest (CouchDB's), and its length (\(entryLength)) is not the"
        + " blob's at \(place) (\(blobLength)), so it does not mirror it; it is kept"
    case .otherLength(let place, nil, _):
      return "\(entry) has an md5- digest (CouchDB's) and no length to compare with the blob's at"
        + " \(place), so it cannot be told to mirror it; it is kept"
    case .otherLength(let place, _, nil):
      return "\(entry) has an md5- digest (CouchDB's), and the blob at \(place) has no length to"
        + " compare with its own, so it cannot be told to mirror it; it is kept"
    case .otherBytes(let place):
      return "\(entry) has an md5- digest (CouchDB's), and the bytes it carries are not the blob's"
        + " at \(place) (their SHA-1 is not its digest): the attachment was replaced; it is kept"
    case .noDigest:
      return "\(entry) has a name a push makes, but no digest to match a blob by; it is kept"
    case .blobWithoutDigest(let place):
      return "\(entry) has a name a push makes, but the blob at \(place) has no digest to match"
        + " it by; it is kept"
    }
  }

  /// After a missing file's message, for a kept entry `--missing-blobs stub` cannot make a stub.
  static let notStubbable =
    "; its own \"stub\" or \"revpos\" is not one a stub can keep, so it is not made a stub"

  static func bodyStubbed(place: String, digest: String, file: String, revpos: Int) -> String {
    "\(place) (\(digest)): no file \(file) in the blob store; the entry is a stub (revpos"
      + " \(revpos)) without the bytes"
  }

  static func blobWithoutDigestNotUpdated(name: String) -> String {
    "_attachments entry \(name) names a blob that has no digest: Couchbase Lite leaves such a blob"
      + " as it is, so it is not updated"
  }

  static func blobNotUpdatedDigestNotString(name: String, pointer: String, kind: String) -> String {
    "_attachments entry \(name) names the blob at \(pointer) but its digest is \(kind), not a"
      + " string: Couchbase Lite would copy it into the blob and drop its length and content_type,"
      + " leaving a blob no store can find; the blob is not updated and the entry stays"
  }

  static func blobNotUpdated(name: String) -> String {
    "_attachments entry \(name) names a blob but its digest is not sha1-: Couchbase Lite keeps"
      + " only sha1- blobs, so the blob is not updated and the entry stays"
  }

  static func stubWithoutRevision(name: String) -> String {
    "_attachments entry \(ConversionDiagnostic.quoted(name)) is a stub, and the document has no _rev:"
      + " a stub repeats an attachment of the revision before, and a new document has none"
      + " (CouchDB answers 412 missing_stub; Sync Gateway keeps the metadata without the bytes)"
  }

  static func danglingBlob(digest: String) -> String {
    "blob \(digest) is in none of the document's _attachments entries: Couchbase Lite fails such"
      + " a revision on pull (\"There is no content for the blob\")"
  }

  static func danglingEntry(name: String, digest: String) -> String {
    "_attachments entry \(ConversionDiagnostic.quoted(name)) stays in the document on pull, and"
      + " Couchbase Lite reads its digest as \(digest), which no entry has as written: it fails"
      + " such a revision (\"There is no content for the blob\")"
  }

  static func invalidEntryPointer(name: String, reason: String) -> String {
    "_attachments entry \(ConversionDiagnostic.quoted(name)): Couchbase Lite's pull reads the"
      + " name after blob_ as a JSON Pointer and throws (\(reason)), failing the revision"
  }

  static func entryPointerDiffers(name: String, liteCore: String, tool: String, reasons: [String])
    -> String
  {
    "_attachments entry \(ConversionDiagnostic.quoted(name)): Couchbase Lite's pull finds"
      + " \(liteCore) there"
      + (reasons.isEmpty ? "" : " (it " + reasons.joined(separator: ", ") + ")")
      + "; --pull --update-blobs finds \(tool)"
  }

  static func orphanEntry(name: String) -> String {
    "_attachments entry \(ConversionDiagnostic.quoted(name)) has a name a push makes, and no blob is at that"
      + " place: the next push drops it (Couchbase Lite's drops every blob_ entry it did not make)"
  }

  static func md5DigestBlob(pointer: String) -> String {
    "blob at \(pointer) has an md5- digest: Couchbase Lite downloads only sha1- attachments, and"
      + " names a blob by the SHA-1 of its bytes"
  }

  static func md5Digest(name: String) -> String {
    "_attachments entry \(ConversionDiagnostic.quoted(name)) has an md5- digest: Couchbase Lite downloads"
      + " only sha1- attachments"
  }

  // MARK: --upgrade

  static func upgradeKeptSynthesized(name: String) -> String {
    "_attachments entry \(ConversionDiagnostic.quoted(name)) has a name a push makes, and mirrors no blob;"
      + " it stays"
  }

  static func upgradeKeptMirrorBytes(name: String) -> String {
    "_attachments entry \(ConversionDiagnostic.quoted(name)) mirrors a blob but holds bytes (\"data\") the"
      + " blob does not; it stays"
  }

  static func upgradeKeptEncoded(name: String, follows: Bool) -> String {
    "_attachments entry \(ConversionDiagnostic.quoted(name)) "
      + (follows
        ? "has its bytes in a MIME part (\"follows\")"
        : "has an \"encoding\" and no \"data\": its digest is of the bytes as the server stores"
          + " them, which are not at hand") + "; it stays"
  }

  static func upgradeKeptMD5(name: String) -> String {
    "_attachments entry \(ConversionDiagnostic.quoted(name)) has an md5- digest and no \"data\": a Couchbase"
      + " Lite blob is named by the SHA-1 of its bytes, which are not at hand; it stays"
  }

  static func upgradeKeptUnknownDigest(name: String) -> String {
    "_attachments entry \(ConversionDiagnostic.quoted(name)) has \"data\" but its digest is not a"
      + " well-formed sha1- or md5- digest, so the bytes cannot be checked; it stays"
  }

  static func upgradeIntoNotObject(property: String, kind: ValueKind) -> String {
    "\(ConversionDiagnostic.quoted(property)) is \(kind.article), not an object: the blobs cannot go in it"
  }

  static func upgradeIntoBlob(property: String) -> String {
    "\(ConversionDiagnostic.quoted(property)) is a blob: blobs put in it would be hidden inside it"
  }

  static func upgradeClash(name: String, property: String) -> String {
    "\(ConversionDiagnostic.quoted(property)) already has a member \(ConversionDiagnostic.quoted(name)): the"
      + " attachment cannot become a blob there"
  }

  static func upgradeDuplicateEntry(name: String, property: String) -> String {
    "_attachments has more than one entry \(ConversionDiagnostic.quoted(name)): they cannot all become"
      + " blobs in \(ConversionDiagnostic.quoted(property))"
  }

  static func upgradeIntoTwice(property: String) -> String {
    "more than one top-level \(ConversionDiagnostic.quoted(property)) member; refusing to guess which one"
      + " the blobs go in"
  }

  // MARK: InputFraming

  /// `firstStepUnmatched`: the path's first step, when no input value had it.
  static func noDocumentAtPath(_ path: String, firstStepUnmatched: DocumentPath.Step?) -> String {
    let message = "no document at \(path)"
    switch firstStepUnmatched {
    case nil: return message
    case .member(let name)?:
      return message + ": no input value has a \(ConversionDiagnostic.quoted(name)) member"
        + readAsLines
    case .elements?: return message + ": no input value is an array" + readAsLines
    }
  }

  private static let readAsLines = "; documents one after another are read in lines framing"

  static func listNotArray(_ kind: ValueKind) -> String {
    var message =
      "in list framing the input must be one JSON array of documents; it is \(kind.article)"
    if kind == .object { message += " (one document after another is read in lines framing)" }
    return message
  }

  static let listMoreFollows =
    "in list framing the input must be one JSON array; more follows it"

  // MARK: Malformed JSON

  static let truncatedDocument = "malformed JSON: truncated document (the input ends inside it)"
  static let truncatedList = "malformed JSON: truncated list (the input ends inside the array)"
  static let truncatedEnvelope =
    "malformed JSON: truncated envelope (the input ends inside it)"
  static let truncatedRecord =
    "malformed JSON: the document is cut short at the end of its line (a truncated record?);"
    + " the next line starts a new document"
  static let formFeed = "malformed JSON: a form feed is not JSON whitespace"
  static let verticalTab = "malformed JSON: a vertical tab is not JSON whitespace"
  static let byteOrderMarkInside =
    "malformed JSON: a byte-order mark (U+FEFF) inside the input; only its very start may have one"

  static func invalidUTF8(byte: UInt8) -> String {
    "malformed JSON: invalid UTF-8 (byte 0x\(String(byte, radix: 16, uppercase: true)))"
  }

  /// yajl's description of a syntax error, in this tool's words.
  static func malformed(yajlMessage: String) -> String {
    var text = yajlMessage
    for prefix in ["lexical error: ", "parse error: "] where text.hasPrefix(prefix) {
      text.removeFirst(prefix.count)
    }
    if text.hasSuffix(".") { text.removeLast() }
    switch text {
    case "invalid bytes in UTF8 string": return "malformed JSON: invalid UTF-8 in a string"
    case "invalid char in json text": return "malformed JSON: invalid character"
    case "invalid string in json text":
      return "malformed JSON: invalid literal (only true, false and null are)"
    case "probable comment found in input text, comments are not enabled":
      return "malformed JSON: a comment (JSON has none)"
    case "client cancelled parse": return "malformed JSON"
    default: return "malformed JSON: " + text
    }
  }

  /// The error at an input's first byte when the input is something else than JSON.
  static func notJSON(_ kind: InputSniffer.Kind) -> String {
    switch kind {
    case .multipart(let boundary):
      return "not JSON: the input is a MIME multipart body (its first line is the boundary"
        + " --\(boundary)); read it as one, or ask the server for JSON (curl -H 'Accept:"
        + " application/json')"
    case .httpResponse:
      return "not JSON: the input starts with an HTTP response's headers (curl -i?); leave them out"
    case .compressed(let format):
      let tool =
        ["gzip": "zcat, or curl --compressed", "bzip2": "bzcat", "xz": "xzcat", "zstd": "zstdcat"][
          format] ?? "unzip -p"
      return "not JSON: the input is \(format)-compressed; decompress it first (\(tool))"
    case .html:
      return "not JSON: the input is an HTML page (an error or login page? check the URL and the"
        + " credentials)"
    }
  }

  // MARK: What was not converted

  /// Added to the error that breaks a list (or its rest): what of the input is left unconverted.
  static func restNotConverted(from start: TextPosition, to end: TextPosition) -> String {
    "; the rest of the input (\(start) to \(end)) is not converted"
  }

  /// Added, without `--rejects`, to an error that rejects a document: the input skipped.
  static func skipped(from start: TextPosition, to end: TextPosition?) -> String {
    " (skipped \(start) to \(end.map(\.description) ?? "end of input"))"
  }

  // MARK: --check details

  static func attachmentTooLarge(length: String) -> String {
    "attachment length is \(length) bytes; Sync Gateway accepts at most"
      + " \(SyncGatewayLimits.attachmentBytes) bytes (20 MiB)"
  }

  static func entryWithoutDataOrStub(name: String) -> String {
    "_attachments entry \(ConversionDiagnostic.quoted(name)) has neither \"data\" nor \"stub\":true; Sync"
      + " Gateway's REST API answers 400 \"Missing data of attachment\", CouchDB 400 \"Invalid"
      + " attachment data\" (a push with a blob store carries the bytes; the litecore naming writes"
      + " stubs)"
  }

  static func invalidRevpos(name: String, revpos: String?) -> String {
    guard let revpos else {
      return
        "stub \(ConversionDiagnostic.quoted(name)) has no \"revpos\"; Sync Gateway's replication"
        + " refuses it (\"Invalid attachment, does not have revpos field\")"
    }
    return
      "stub \(ConversionDiagnostic.quoted(name)) has \"revpos\":\(revpos); it must be a whole number"
      + " ≥ 1, the generation of the revision that added the attachment"
  }

  static func entryWithoutDigest(name: String) -> String {
    "_attachments entry \(ConversionDiagnostic.quoted(name)) has no string \"digest\" and no \"data\";"
      + " Sync Gateway answers 400 \"Missing digest in stub attachment\" unless an earlier"
      + " revision has it"
  }

  static func entryNotObject(name: String, kind: ValueKind) -> String {
    "_attachments entry \(ConversionDiagnostic.quoted(name)) is \(kind.article), not an object; Sync"
      + " Gateway, CouchDB and PouchDB refuse the document"
  }

  static func entryWithoutLength(name: String) -> String {
    "_attachments entry \(ConversionDiagnostic.quoted(name)) has no numeric \"length\" and no \"data\";"
      + " Sync Gateway cannot fetch the attachment from Couchbase Lite without it (\"no attachment"
      + " length provided in meta\")"
  }

  static func documentTooLarge(bytes: Int) -> String {
    "the document push sends is \(bytes) bytes of JSON; Sync Gateway and Couchbase Server accept"
      + " at most \(SyncGatewayLimits.documentBytes) bytes (20 MiB)"
  }

  static func couchDBDocumentTooLarge(bytes: Int, limit: Int) -> String {
    "CouchDB measures the document's body (attachments and _ members not counted) as \(bytes)"
      + " bytes; its max_document_size is \(limit): it answers 413 document_too_large"
  }

  static func metadataTooLarge(bytes: Int) -> String {
    "the _attachments that push produces is \(bytes) bytes of JSON; Sync Gateway keeps at most"
      + " \(SyncGatewayLimits.metadataBytes) bytes (1 MiB) of attachment metadata per document"
  }

  // MARK: Library

  static let noDocument = "no document in the input"
  static let severalDocuments = "more than one document in the input"
}

/// Sync Gateway's limits that `--check` measures against.
enum SyncGatewayLimits {
  /// The largest attachment Couchbase Server stores (its document size limit): 20 MiB.
  static let attachmentBytes = 20 * 1024 * 1024
  /// The most attachment metadata a document's sync metadata holds: 1 MiB.
  static let metadataBytes = 1024 * 1024
  /// The largest document Sync Gateway and Couchbase Server take: 20 MiB of JSON.
  static let documentBytes = 20 * 1024 * 1024
}

extension Messages {
  // MARK: Multipart bodies

  static let multipartNoBoundary =
    "no boundary line: a MIME multipart body starts with \"--\" and its boundary"
  static let multipartBoundaryNotFound = "the boundary given is on no line of the body"
  static let multipartCutShort = "the body ends before its closing boundary line"
  static let multipartNestedTooDeep =
    "a multipart part inside a nested multipart part (one level is read)"
  static let multipartNestedNotClosed =
    "the outer boundary comes before the nested part's closing boundary line"
  static let multipartNoNestedBoundary = "a multipart Content-Type without a boundary"
  static let multipartNoJSONPart = "the document's part holds no JSON part"

  static func multipart(_ reason: String) -> String { "malformed multipart body: \(reason)" }

  static func multipartLineTooLong(_ limit: Int) -> String {
    "a preamble line or header block longer than \(limit) bytes"
  }

  static func multipartHeaderLine(_ line: String) -> String {
    "a header line without a colon: \(ConversionDiagnostic.quoted(String(line.prefix(80))))"
  }

  static func multipartContentLength(_ value: String) -> String {
    "Content-Length is not a whole number: \(ConversionDiagnostic.quoted(String(value.prefix(40))))"
  }

  static func multipartStrayPart(_ part: String) -> String {
    "a part (\(part)) that is no document's JSON and that no document awaits"
  }

  static func multipartFirstPartNotJSON(_ part: String) -> String {
    "the document's first part is not its JSON (\(part))"
  }

  static func multipartUnmatchedPart(_ mismatch: MultipartDocument.PartMismatch) -> String {
    switch mismatch {
    case .noEntryNamed(let name):
      "a part for attachment \(ConversionDiagnostic.quoted(name)), which has no \"follows\" entry"
        + " awaiting its bytes"
    case .noEntryLeft:
      "an attachment part, but every \"follows\" entry has had its bytes"
    }
  }

  static func multipartMissingParts(_ names: [String]) -> String {
    "\"follows\" without its part: "
      + names.map { "_attachments entry \(ConversionDiagnostic.quoted($0))" }.joined(
        separator: ", ") + " (the body has no part for its bytes)"
  }

  static func multipartBytesDropped(name: String, size: Int) -> String {
    "_attachments entry \(ConversionDiagnostic.quoted(name)): its \(size) bytes are dropped and"
      + " it becomes a stub: nothing keeps them"
  }

  static func multipartErrorPart(error: String, reason: String) -> String {
    "the server could not give the document: \(error.isEmpty ? "an error" : error)"
      + (reason.isEmpty ? "" : " (\(reason))")
  }

  static func partDigestUnreadable(name: String) -> String {
    "_attachments entry \(name): its bytes follow, but its digest is not sha1- or md5- to check"
      + " them by"
  }

  static func partUnknownEncoding(name: String, encoding: String) -> String {
    "_attachments entry \(name): its part's Content-Encoding \(ConversionDiagnostic.quoted(encoding))"
      + " is not gzip; its bytes cannot be read"
  }

  static func partNotGzip(name: String, reason: String) -> String {
    "_attachments entry \(name): its part says Content-Encoding: gzip, but its bytes are not a"
      + " gzip stream (\(reason))"
  }

  static func partLength(name: String, what: String, declared: Int, actual: Int) -> String {
    "_attachments entry \(name): its part holds \(actual) bytes; \(what) says \(declared)"
  }

  static func partDigest(name: String, digest: String, actual: String) -> String {
    "_attachments entry \(name) (\(digest)): its part holds other bytes (\(actual))"
  }

  static func partStoreHoldsOther(file: String) -> String {
    "\(file) is already in the blob store with other bytes; the part's bytes cannot be kept"
  }

  static func multipartJSONEncoding(_ encoding: String) -> String {
    "the document's JSON part has Content-Encoding \(ConversionDiagnostic.quoted(encoding)),"
      + " which is not gzip"
  }

  static func multipartJSONNotGzip(_ reason: String) -> String {
    "the document's JSON part says Content-Encoding: gzip, but is not a gzip stream (\(reason))"
  }

  static func nonCanonicalDigest(_ what: String, written: String, canonical: String) -> String {
    "\(what) has the digest \(written), which is not the canonical base64 of its hash:"
      + " Couchbase Lite reads it as \(canonical) and names the file so; its pull compares that"
      + " with the entries' digests as written, and fails the revision when none has it so"
      + " (dangling-blob)"
  }
}
