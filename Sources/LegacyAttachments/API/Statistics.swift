/// Counters for `--stats`, summed over a run.
public struct ConversionStatistics: Sendable, Equatable, BitwiseCopyable {
  public var documents = 0
  /// Blob references found (outside `_attachments`).
  public var blobs = 0
  public var entriesAdded = 0
  public var entriesRemoved = 0
  public var warnings = 0
  /// Documents rejected (or, with `--check`, documents with a finding).
  public var errors = 0
  public var bytesIn = 0
  /// Bytes written to the output (counted where they are written).
  public var bytesOut = 0
  /// Rows written by `--list` or `--check`.
  public var rows = 0
  /// Input bytes of rejected documents that were not saved (no `--rejects`): what was skipped.
  public var bytesSkipped = 0

  public init() {}

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
  }
}
