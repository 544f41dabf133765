/// A problem found in one document, located by line and column.
public struct ConversionDiagnostic: Sendable, Hashable, CustomStringConvertible {
  /// How bad a problem is; the raw value is the word in the report (`error:`, `warning:`).
  public enum Severity: String, Sendable {
    /// Reported, and the document is converted anyway (`strict` makes warnings errors).
    case warning
    /// The document is rejected: not converted, and the command line exits with status 1.
    case error
  }

  /// What kind of problem; the `--check` name of each is its raw value.
  public enum Kind: String, Sendable {
    /// The input is not JSON: a syntax error, invalid UTF-8 or a truncated last document.
    case malformedJSON = "malformed-json"
    /// A single-document conversion was given no document, or more than one.
    case notOneDocument = "not-one-document"
    /// A single-document conversion was given options the command line refuses (a `revpos`
    /// below 1, an option of another mode).
    case invalidOptions = "invalid-options"
    /// A document that is not a JSON object, or a `list` input that is not one JSON array.
    case notAnObject = "not-an-object"
    /// A document with more than one top-level `_attachments` member (rejected, not guessed).
    case duplicateAttachments = "duplicate-attachments"
    /// A top-level `_attachments` that is not an object: push rejects it when the document has
    /// blob references, `--check` always reports it.
    case attachmentsNotObject = "attachments-not-object"
    /// A blob reference without a string `digest`: push makes no entry for it and warns (an error
    /// with `strict`, a finding with `--check`).
    case blobWithoutDigest = "blob-without-digest"
    /// Pull kept an `_attachments` entry that carries the attachment's bytes (`data`).
    case dataKept = "data-kept"
    /// Push replaced an entry with a synthesized name that carried the attachment's bytes
    /// (`data`) with one that does not: the run carries no bytes (no `--blobs`), and no blob of
    /// that digest holds the same `data`.
    case dataDropped = "data-dropped"
    /// An `_attachments` entry's `data` is not a string.
    case invalidData = "invalid-data"
    /// `--docs PATH` found no document in an input.
    case noDocument = "no-document"
    /// `--check`: an `_attachments` entry with neither `data` nor `"stub":true` (Sync Gateway's
    /// REST API answers 400).
    case entryWithoutDataOrStub = "entry-without-data-or-stub"
    /// `--check`: a stub in a document without `_rev`: it repeats an attachment of an earlier
    /// revision, and there is none (CouchDB answers `412 missing_stub`; Sync Gateway keeps the
    /// metadata with no bytes behind it).
    case stubWithoutRevision = "stub-without-revision"
    /// `--check`: a stub whose `revpos` is not a whole number ≥ 1.
    case invalidRevpos = "invalid-revpos"
    /// `--check`: an entry without its bytes and without a string `digest`.
    case entryWithoutDigest = "entry-without-digest"
    /// `--check`: an `_attachments` member that is not an object.
    case entryNotObject = "entry-not-object"
    /// `--check`: an entry without its bytes and without a numeric `length`.
    case entryWithoutLength = "entry-without-length"
    /// `--blobs`: the blob store has no file for a digest.
    case blobMissing = "blob-missing"
    /// `--blobs`: a file's bytes are not its digest's (or a `data` member's are not).
    case blobCorrupt = "blob-corrupt"
    /// `--blobs`: a body's size is not its `length`.
    case lengthMismatch = "length-mismatch"
    /// `--blobs`: a `data` member's bytes do not match the entry's digest.
    case dataMismatch = "data-mismatch"
    /// `--blobs`: an entry's bytes are encoded with something else than gzip (its `encoding`)
    /// and cannot be read; it stays.
    case encodedKept = "encoded-kept"
    /// `--blobs`: the blob store could not be read or written (the run ends).
    case blobStoreFailed = "blob-store-failed"
    /// `--upgrade`: an entry that cannot become a blob stays in `_attachments`.
    case upgradeKept = "upgrade-kept"
    /// `--upgrade`: the blob property cannot take the entry (not an object, the name taken).
    case upgradeClash = "upgrade-clash"
    /// `--check`: a blob whose `sha1-` digest is in no entry of the document's `_attachments`.
    case danglingBlob = "dangling-blob"
    /// `--check`: an entry with a synthesized name and no blob at that place.
    case orphanEntry = "orphan-entry"
    /// `--check`: an entry with an `md5-` digest.
    case md5Digest = "md5-digest"
    /// `--pull --update-blobs`: an entry whose digest is not `sha1-` updates no blob.
    case blobNotUpdated = "blob-not-updated"
    /// `--blobs`, `--upgrade`: bytes whose `md5-` digest could not check them, carried all the
    /// same: CouchDB labels a body it stores compressed with the MD5 of its gzip stream, and
    /// compressing the bytes again did not give it (another zlib, or other bytes).
    case unverified = "unverified"
    /// `--check`: a document body over CouchDB's `max_document_size` (8,000,000 bytes by
    /// default, measured as CouchDB measures it: attachments and `_` members not counted):
    /// CouchDB answers `413 document_too_large`.
    case couchDBDocumentTooLarge = "couchdb-document-too-large"
    /// Pull kept an entry with a name push makes (`$.…`, `blob_/…`, `blob_1`) that mirrors no
    /// blob of the document: no blob is where its name says, or the one there differs.
    case entryKept = "entry-kept"
    /// A MIME multipart body that cannot be read on (`--format multipart`): no boundary, a
    /// part cut short, a missing closing boundary, a part no document awaits.
    case malformedMultipart = "malformed-multipart"
    /// `_bulk_get` answered an error part for a document it could not give (`not_found`).
    case documentError = "document-error"
    /// `--check`: a `sha1-` digest that is not the canonical base64 of its hash (the unused bits
    /// of its last character set): Couchbase Lite names its file from the canonical text and
    /// then fails the revision as dangling.
    case nonCanonicalDigest = "non-canonical-digest"
    /// `--check`: an entry named `blob_…` whose pointer Couchbase Lite's pull throws on (a
    /// token over an array that is not an index; no `/` after `blob_`), failing the revision.
    case invalidEntryPointer = "invalid-entry-pointer"
    /// `--check`: an entry named `blob_/…` that Couchbase Lite's pull follows to another place
    /// than `--update-blobs` does (`~0`, `~1`, empty keys, a last `/`, leading zeros).
    case entryPointerDiffers = "entry-pointer-differs"
  }

  /// What the caller can do about a problem, in the library's terms: a front end says it in its
  /// own (the command line names its options), since ``message`` names none.
  public enum Advice: String, Sendable, Hashable {
    /// Read the input in list framing (``InputFraming/list``): it is one JSON array of
    /// documents.
    case listFraming
    /// Carry attachment bytes from a blob store (``ConversionOptions/blobs``).
    case blobStore
    /// Pull updating blobs (``ConversionOptions/updateBlobs``): a replaced attachment's digest,
    /// length and type go into its blob.
    case updateBlobs
    /// Read the input as a MIME multipart body (``MultipartConverter``).
    case multipart
    /// Read the input as documents one after another (``InputFraming/lines`` with the path
    /// ``DocumentPath/root``): the path given found nothing, not even its first step.
    case linesFraming
  }

  /// Whether the problem rejects the document (`.error`) or is only reported (`.warning`).
  public var severity: Severity
  /// What kind of problem it is; `kind.rawValue` is its `--check` name.
  public var kind: Kind
  /// 1-based line of the input where the problem is.
  public var line: Int
  /// 1-based column, in characters (Unicode scalars), of that line.
  public var column: Int
  /// What is wrong, for people.
  public var message: String
  /// The document's `_id`, when it is known.
  public var documentID: String?
  /// What to do about it, when the library knows (for a front end to say in its own words).
  public var advice: Advice?
  /// The byte offset in the input, for inputs that are not read as lines of text (a MIME
  /// multipart body); messages then give it instead of the line and column. `line` is then the
  /// document's number in the body.
  public var byteOffset: Int?

  /// A problem at `line` and `column` (both 1-based) of the input, in the document with
  /// `documentID` when that is known.
  public init(
    severity: Severity, kind: Kind, line: Int, column: Int, message: String,
    documentID: String? = nil, advice: Advice? = nil
  ) {
    self.severity = severity
    self.kind = kind
    self.line = line
    self.column = column
    self.message = message
    self.documentID = documentID
    self.advice = advice
  }

  /// `LINE:COLUMN: error: MESSAGE`, the part of the report after the input's name.
  public var description: String {
    var text =
      byteOffset.map { "byte \($0): \(severity.rawValue): " }
      ?? "\(line):\(column): \(severity.rawValue): "
    if let documentID { text += "document \(ConversionDiagnostic.quoted(documentID)): " }
    return text + message
  }

  /// The full line written to standard error: `cbl-attachments: FILE:LINE:COLUMN: error: MESSAGE`.
  /// (`FILE: byte N: …` for a multipart body.)
  public func formatted(inputName: String, program: String = "cbl-attachments") -> String {
    "\(program): \(inputName):\(byteOffset == nil ? "" : " ")\(description)"
  }

  static func quoted(_ text: String) -> String {
    var bytes = ByteBuffer(capacity: text.utf8.count + 2)
    var copy = text
    copy.withUTF8 { JSONText.appendQuoted($0, to: &bytes) }
    return String(decoding: bytes.bytes, as: UTF8.self)
  }
}
