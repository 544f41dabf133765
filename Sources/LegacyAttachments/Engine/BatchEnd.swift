/// How a batch that is not its input's last ended (``ConversionEngine/finishBatch()``).
struct BatchEnd {
  var outcome: InputOutcome
  /// A value that continues into the next batch: its bytes, where they start, and where in
  /// the input's structure.
  var carry: (bytes: [UInt8], first: TextPosition, start: BatchStart)? = nil
  /// The carry is an envelope whose documents are array elements: its batches cannot go on
  /// in parallel from there.
  var carriesEnvelope = false
  /// Where the next batch starts, when the batch ended with nothing open (or between the
  /// elements of an envelope that goes on); nil after a carry or a stop.
  var next: BatchStart? = nil
  /// Between elements: how many of the array's elements the batch read, and whether they
  /// count from the batch's start (the envelope was open when it began) or from the
  /// envelope's (it began in the batch).
  var elementsRead = 0
  var elementsCountFromBatchStart = false
}
