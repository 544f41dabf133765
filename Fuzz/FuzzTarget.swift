// libFuzzer entry point, compiled into the LegacyAttachments module by Fuzz/run.sh (never part
// of the package build). Invariants checked on every input:
//  - no crash, no hang (libFuzzer's -timeout), no memory error (AddressSanitizer);
//  - the same output, rejects and diagnostics whatever the feeding chunk size, and with the
//    engine's buffers at 16 bytes (every boundary crossed) as at their usual sizes; and the same
//    again when the input is read from a descriptor, as the command reads it (`read(2)` of 1 and
//    7 bytes, 16-byte buffers, and -j 2 with batches of 3 bytes);
//  - when the input is valid JSON, every output line is valid JSON (envelopes and _bulk_docs
//    bodies included: a rejected element leaves with its comma, a malformed envelope is closed);
//  - for documents without a top-level "_attachments": pull(push(d)) == pull(d) (d compacted)
//    and push(push(d)) == push(d).
internal import CYajl
import Glibc

/// Whether `bytes` is a valid stream of JSON values, by yajl alone (no callbacks).
private func isValidJSONStream(_ bytes: UnsafeRawBufferPointer) -> Bool {
  guard let handle = yajl_alloc(nil, nil, nil) else { return false }
  defer { yajl_free(handle) }
  cyajl_config_flag(handle, yajl_allow_multiple_values, 1)
  var start = 0
  // A leading byte-order mark is the converter's to skip, not yajl's.
  if bytes.count >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF { start = 3 }
  let rest = UnsafeRawBufferPointer(rebasing: bytes[start...])
  guard let base = rest.baseAddress?.assumingMemoryBound(to: UInt8.self) else {
    return yajl_complete_parse(handle) == yajl_status_ok
  }
  // Form feeds and vertical tabs are not JSON whitespace (yajl accepts them).
  if rest.contains(0x0C) || rest.contains(0x0B) { return false }
  return yajl_parse(handle, base, rest.count) == yajl_status_ok
    && yajl_complete_parse(handle) == yajl_status_ok
}

private func check(_ condition: Bool, _ message: String) {
  if !condition {
    let text = "fuzz invariant broken: \(message)\n"
    _ = text.withCString { write(2, $0, strlen($0)) }
    abort()
  }
}

/// Converts `input` read through a pipe (inputs, and what comes of them, are under 64 KiB, a
/// pipe's buffer, so no thread is needed), output and rejects written to pipes of their own.
private func convertThroughPipes(
  _ input: [UInt8], options: ConversionOptions, readSize: Int, jobs: Int, batchBytes: Int
) -> (output: [UInt8], rejects: [UInt8], diagnostics: [ConversionDiagnostic]) {
  func makePipe() -> (read: Int32, write: Int32) {
    var ends: [Int32] = [0, 0]
    _ = pipe(&ends)
    return (ends[0], ends[1])
  }
  func drain(_ descriptor: Int32) -> [UInt8] {
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
      let count = read(descriptor, &buffer, buffer.count)
      if count <= 0 { break }
      bytes += buffer[..<count]
    }
    close(descriptor)
    return bytes
  }
  let source = makePipe()
  let output = makePipe()
  let rejects = makePipe()
  _ = input.withUnsafeBytes { write(source.write, $0.baseAddress, $0.count) }
  close(source.write)
  var diagnostics: [ConversionDiagnostic] = []
  do {
    let converter = StreamConverter(
      options: options, output: FileDescriptorSink(descriptor: output.write),
      rejects: FileDescriptorSink(descriptor: rejects.write, name: "rejects"), capacities: .tiny)
    converter.readSize = readSize
    converter.jobs = jobs
    converter.batchBytes = batchBytes
    converter.diagnosticHandler = { diagnostic, _ in diagnostics.append(diagnostic) }
    _ = try? converter.convert(descriptor: source.read, name: "in")
    try? converter.finish()
  }
  close(source.read)
  close(output.write)
  close(rejects.write)
  return (drain(output.read), drain(rejects.read), diagnostics)
}

private func lines(_ output: [UInt8]) -> [ArraySlice<UInt8>] {
  output.split(separator: 0x0A, omittingEmptySubsequences: true)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  let input = Array(UnsafeBufferPointer(start: data, count: size))
  let valid = input.withUnsafeBytes { isValidJSONStream($0) }
  var variants = [ConversionMode.push, .pull, .list, .check].map {
    ConversionOptions(mode: $0, keepGoing: true)
  }
  // Envelopes, the list framing with a path, and _bulk_docs bodies.
  for path in [DocumentPath.changes, .bulkGet, DocumentPath(steps: [.member("doc")])] {
    for mode in [ConversionMode.push, .pull, .check] {
      variants.append(ConversionOptions(mode: mode, documents: path, keepGoing: true))
    }
  }
  variants.append(
    ConversionOptions(
      mode: .push, framing: .list, documents: DocumentPath(steps: [.member("doc")]),
      keepGoing: true))
  variants.append(ConversionOptions(mode: .push, framing: .list, keepGoing: true))
  variants.append(
    ConversionOptions(
      mode: .push, documents: .bulkDocs, bulkDocs: BulkDocsOutput(documentsPerBody: 2),
      keepGoing: true))
  for options in variants {
    let mode =
      "\(options.mode) \(options.framing) \(options.documents)"
      + (options.bulkDocs == nil ? "" : " --bulk-docs")
    let whole = CBLAttachments.convertStream(input, options: options)
    for chunk in [1, 2, 3, 7] {
      for capacities in [EngineCapacities.standard, .tiny] {
        let pieces = CBLAttachments.convertStream(
          input, options: options, chunkSize: chunk, capacities: capacities)
        let how = "chunk size \(chunk)\(capacities == .tiny ? ", 16-byte buffers" : "")"
        check(pieces.output == whole.output, "\(mode) output differs with \(how)")
        check(pieces.rejects == whole.rejects, "\(mode) rejects differ with \(how)")
        check(
          pieces.diagnostics == whole.diagnostics, "\(mode) diagnostics differ with \(how)")
      }
    }
    // Batches of 3 bytes, and of a size the input picks (cuts fall everywhere across runs).
    for (readSize, jobs, batchBytes) in [(1, 1, 3), (7, 1, 3), (5, 2, 3), (64, 2, 1 + size % 29)] {
      let read = convertThroughPipes(
        input, options: options, readSize: readSize, jobs: jobs, batchBytes: batchBytes)
      let how =
        "read \(readSize) at a time, -j \(jobs) in \(batchBytes)-byte batches, 16-byte buffers"
      check(read.output == whole.output, "\(mode) output differs when \(how)")
      check(read.rejects == whole.rejects, "\(mode) rejects differ when \(how)")
      check(read.diagnostics == whole.diagnostics, "\(mode) diagnostics differ when \(how)")
    }
    if valid && options.framing == .lines {
      for line in lines(whole.output) {
        check(line.withUnsafeBytes { isValidJSONStream($0) }, "\(mode) wrote invalid JSON")
      }
    }
  }
  // Round trips, one document at a time.
  for naming in EntryNaming.allCases {
    let pushOptions = ConversionOptions(mode: .push, naming: naming)
    guard let pushed = try? CBLAttachments.convert(input, options: pushOptions).bytes else {
      continue
    }
    let again = try? CBLAttachments.convert(pushed, options: pushOptions).bytes
    check(again == pushed, "push is not idempotent (\(naming))")
    let hasAttachments = input.withUnsafeBytes { raw in
      // Inline `data` that is not a string makes pull reject what push copied.
      raw.firstRange(of: Array("_attachments".utf8)) != nil || raw.contains(UInt8(ascii: "\\"))
        || raw.firstRange(of: Array("data".utf8)) != nil
    }
    if !hasAttachments {
      let pulledOriginal = try? CBLAttachments.pull(input)
      let roundTrip = try? CBLAttachments.pull(pushed)
      if naming == .jsonpath {
        check(roundTrip == pulledOriginal, "pull(push(d)) != d")
      }
    }
  }
  return 0
}
