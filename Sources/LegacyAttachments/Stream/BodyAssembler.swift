import Glibc

/// Lays the converted documents out as `_bulk_docs` request bodies (`--bulk-docs N`), after
/// they have been put in input order.
///
/// The engines write a `_bulk_docs` run's documents one compact document per line, as `lines`
/// does; this stage, between the delivery in input order and the output descriptor, groups
/// them N to a body: `{"docs":[d1,…,dN]}` (with `"new_edits":false` when asked), one body per
/// line. Because it works on the ordered stream, a body may gather documents from several
/// inputs and from batches converted on different threads, and nothing upstream needs to know
/// where a body starts.
///
/// A body is written only when it is whole (N documents, or the last one at ``finish(write:)``),
/// so the output holds whole bodies only, and a failed write can be cut back to the last one.
final class BodyAssembler {
  let documentsPerBody: Int
  let newEditsFalse: Bool
  /// The body being filled: `{"docs":[` and its documents so far, comma-separated.
  private var body = ByteBuffer(capacity: 1 << 16)
  /// Documents in ``body``.
  private var documents = 0

  init(_ output: BulkDocsOutput) {
    documentsPerBody = max(1, output.documentsPerBody)
    newEditsFalse = output.newEditsFalse
  }

  /// The assembler of a run with `options`, if its output is `_bulk_docs` bodies (not for
  /// `--list` and `--check`, whose rows are never bodies).
  static func forRun(_ options: ConversionOptions) -> BodyAssembler? {
    guard let output = options.bulkDocs, OutputStyle(options: options) == .bulkDocs else {
      return nil
    }
    return BodyAssembler(output)
  }

  /// Takes converted documents, whole lines only (each one document and its `\n`), and writes
  /// each body they complete.
  func append<Failure: Error>(
    lines: UnsafeRawBufferPointer, write: (UnsafeRawBufferPointer) throws(Failure) -> Void
  ) throws(Failure) {
    guard let base = lines.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
    var start = 0
    while start < lines.count {
      guard let found = memchr(base + start, 0x0A, lines.count - start) else {
        preconditionFailure("a document's line must end in the bytes delivered with it")
      }
      let newline = UnsafePointer(found.assumingMemoryBound(to: UInt8.self)) - (base + start)
      body.append(documents == 0 ? "{\"docs\":[" : ",")
      body.append(UnsafeBufferPointer(start: base + start, count: newline))
      documents += 1
      start += newline + 1
      if documents == documentsPerBody { try writeBody(write) }
    }
  }

  /// Writes the body being filled, if it holds a document (the end of the run).
  func finish<Failure: Error>(
    write: (UnsafeRawBufferPointer) throws(Failure) -> Void
  ) throws(Failure) {
    if documents > 0 { try writeBody(write) }
  }

  private func writeBody<Failure: Error>(
    _ write: (UnsafeRawBufferPointer) throws(Failure) -> Void
  ) throws(Failure) {
    body.append(newEditsFalse ? "],\"new_edits\":false}\n" : "]}\n")
    // Forgotten first: after a failed write, nothing of it is written again.
    documents = 0
    defer {
      body.count = 0
      body.shrink(ifAbove: 1 << 20)
    }
    try write(UnsafeRawBufferPointer(start: body.base, count: body.count))
  }
}
