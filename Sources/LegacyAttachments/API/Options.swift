/// What the converter does with each document.
public enum ConversionMode: String, Sendable, CaseIterable {
  /// Synthesize a top-level `_attachments` entry for every blob (CBL 2 → Sync Gateway).
  case push
  /// Remove the `_attachments` entries that match a blob by digest (Sync Gateway → CBL 2).
  case pull
  /// Write one NDJSON row per attachment, blob or legacy, instead of the documents.
  case list
  /// Write one NDJSON finding per problem Sync Gateway would refuse or conversion would lose.
  case check
  /// Move legacy attachments into blob properties (`--upgrade`): the migration from Couchbase
  /// Lite 1.x, CouchDB and PouchDB documents to Couchbase Lite 2 blobs.
  case upgrade
}

/// How push names the `_attachments` entries it makes.
public enum EntryNaming: String, Sendable, CaseIterable {
  /// `$` plus one `.key` or `[index]` step per level: `$.photos.gallery[2]` (the design's form).
  case jsonpath
  /// `blob_` plus the RFC 6901 JSON Pointer, with `stub` and `revpos` added, as Couchbase Lite
  /// 2.1 and later send it: `blob_/photos/gallery/2`.
  case litecore
}

/// How documents are framed in the input and the output.
public enum InputFraming: String, Sendable, CaseIterable {
  /// Whitespace-separated JSON values (NDJSON, concatenated or pretty-printed); one compact
  /// document per output line.
  case lines
  /// One JSON array of documents (`cbexport json --format list`); the output is one array again,
  /// one element per line.
  case list
}

/// `_bulk_docs` request bodies as the output (`--bulk-docs N`): the converted documents,
/// whatever the input's framing, `{"docs":[d1,…]}` with `documentsPerBody` each, one per line.
public struct BulkDocsOutput: Sendable, Equatable {
  /// Documents per body, 1 to 1,000,000; the last body may be shorter.
  public var documentsPerBody: Int
  /// Whether bodies end with `"new_edits":false` (`--new-edits false`).
  public var newEditsFalse: Bool

  /// Bodies of `documentsPerBody` documents each (1 to 1,000,000, which
  /// ``ConversionOptions/validate()`` checks), with `"new_edits":false` when `newEditsFalse`.
  public init(documentsPerBody: Int, newEditsFalse: Bool = false) {
    self.documentsPerBody = documentsPerBody
    self.newEditsFalse = newEditsFalse
  }
}

/// Everything that decides how a stream is converted.
public struct ConversionOptions: Sendable, Equatable {
  /// What is done with each document (`--push`, `--pull`, `--upgrade`, `--list`, `--check`).
  public var mode: ConversionMode
  /// How push names the entries it makes (`--naming`, default `.jsonpath`); push and check only.
  public var naming: EntryNaming
  /// The `revpos` written in `litecore` naming; `nil` takes the generation of the document's
  /// `_rev`, or 1 when it has none.
  public var revpos: Int?
  /// How documents are framed in the input and the output (`--format`, default `.lines`).
  public var framing: InputFraming
  /// Where the documents are inside each input value (with `list` framing, inside each
  /// element): `.` for the value itself, `.results[].doc` for a `_changes` response.
  public var documents: DocumentPath
  /// Write `_bulk_docs` request bodies instead of the envelopes (push, pull and upgrade).
  public var bulkDocs: BulkDocsOutput?
  /// The Couchbase Lite blob store that attachment bytes are carried to and from (`--blobs`).
  public var blobs: BlobStoreOptions?
  /// `--upgrade`: the top-level property the new blobs go in (`--into`, default `attachments`).
  public var upgradeInto: String
  /// `--pull --update-blobs`: match entries by the place their name gives, and copy a replaced
  /// attachment's digest, length and content type into its blob.
  public var updateBlobs: Bool
  /// Report a bad document and go on with the next one, instead of stopping.
  public var keepGoing: Bool
  /// Treat warnings (a blob without a digest, an entry kept for its bytes) as errors that reject
  /// the document.
  public var strict: Bool
  /// `--check`: the `[couchdb] max_document_size` a `couchdb-document-too-large` finding is
  /// measured against (default CouchDB's, 8,000,000 bytes); nil checks none.
  public var couchDBMaxDocumentSize: Int?

  /// Options for `mode`; each other option defaults to what the command line does without it.
  public init(
    mode: ConversionMode, naming: EntryNaming = .jsonpath, revpos: Int? = nil,
    framing: InputFraming = .lines,
    documents: DocumentPath = .root, bulkDocs: BulkDocsOutput? = nil,
    blobs: BlobStoreOptions? = nil, upgradeInto: String = ConversionOptions.defaultUpgradeInto,
    updateBlobs: Bool = false, keepGoing: Bool = false, strict: Bool = false,
    couchDBMaxDocumentSize: Int? = ConversionOptions.defaultCouchDBMaxDocumentSize
  ) {
    self.mode = mode
    self.naming = naming
    self.revpos = revpos
    self.framing = framing
    self.documents = documents
    self.bulkDocs = bulkDocs
    self.blobs = blobs
    self.upgradeInto = upgradeInto
    self.updateBlobs = updateBlobs
    self.keepGoing = keepGoing
    self.strict = strict
    self.couchDBMaxDocumentSize = couchDBMaxDocumentSize
  }

  /// `couchDBMaxDocumentSize`'s default: CouchDB's own `max_document_size`.
  public static let defaultCouchDBMaxDocumentSize: Int? = CouchDB.defaultMaxDocumentSize

  /// `upgradeInto`'s default, the property `--upgrade` puts new blobs in without `--into`.
  public static let defaultUpgradeInto = "attachments"

  /// Whether a bad document is skipped (reported) rather than ending the run. `--check` always
  /// reads the whole input.
  var continuesAfterBadDocument: Bool { keepGoing || mode == .check }
}
