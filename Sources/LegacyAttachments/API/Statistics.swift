/// Counters for `--stats`, summed over a run.
public struct ConversionStatistics: Sendable, Equatable, BitwiseCopyable {
  /// Documents read (converted or rejected).
  public var documents = 0
  /// Blob references found (outside `_attachments`).
  public var blobs = 0
  /// `_attachments` entries push made for blobs.
  public var entriesAdded = 0
  /// `_attachments` entries removed: matched by pull, moved by upgrade, or replaced by push.
  public var entriesRemoved = 0
  /// Warnings reported (with `strict` they are errors, counted in `errors`).
  public var warnings = 0
  /// Documents rejected (or, with `--check`, documents with a finding).
  public var errors = 0
  /// Bytes read from the inputs, whitespace and byte-order marks included.
  public var bytesIn = 0
  /// Bytes written to the output (counted where they are written).
  public var bytesOut = 0
  /// Rows written by `--list` or `--check`.
  public var rows = 0
  /// Input bytes of rejected documents that were not saved (no `--rejects`): what was skipped.
  public var bytesSkipped = 0
  /// Attachment bodies carried although their `md5-` digest could not check them (CouchDB's
  /// digest of a body it stores compressed; each also a warning).
  public var unverified = 0

  /// All counters at 0.
  public init() {}

  /// Adds each of `other`'s counters to this one's (the parts of a run, into its total).
  public mutating func add(_ other: ConversionStatistics) {
    documents += other.documents
    blobs += other.blobs
    entriesAdded += other.entriesAdded
    entriesRemoved += other.entriesRemoved
    warnings += other.warnings
    errors += other.errors
    bytesIn += other.bytesIn
    bytesOut += other.bytesOut
    rows += other.rows
    bytesSkipped += other.bytesSkipped
    unverified += other.unverified
  }
}
