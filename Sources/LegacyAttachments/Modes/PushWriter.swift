/// `--push` (docs/formats.md, "Behaviour details"): an `_attachments` entry for every blob reference with a digest.
///
/// Existing entries keep their place and order, except those with a synthesized name (made by an
/// earlier push, in either naming), which are replaced; new entries follow, in document order.
/// Without an `_attachments` member one is added as the last member.
///
/// With `--blobs`, every entry it makes carries the attachment's bytes (`data`, read from the
/// store and checked against the digest and length), and so does every kept entry that has
/// neither `data` nor `stub`; no entry gets `stub` or `revpos` then.
struct PushWriter: DocumentWriter {
  private let naming: AttachmentNaming
  private let revpos: Int?
  private let strict: Bool
  /// With `--blobs`: where the bytes come from, and what a missing file makes.
  private let carrier: BodyCarrier?
  private let missingBlobs: MissingBlobs
  /// Whether made entries end with `stub` and `revpos` (litecore naming, and no bytes carried:
  /// with `--blobs` they carry `data` instead, also when `--check` only measures them).
  private let writesTail: Bool

  init(options: ConversionOptions, store: BlobStore?) {
    naming = AttachmentNaming(options.naming)
    revpos = options.revpos
    strict = options.strict
    carrier = store.map { BodyCarrier(store: $0) }
    missingBlobs = options.blobs?.missing ?? .error
    writesTail = naming.writesStubAndRevpos && options.blobs == nil
  }

  func findProblems(
    in document: borrowing ScannedDocument, text: UnsafeBufferPointer<UInt8>,
    into problems: inout [Problem], workspace: inout WriterWorkspace
  ) {
    let attachments = document.attachments
    if attachments.count >= 1 && !attachments.isObject && !document.blobs.isEmpty {
      problems.append(
        Problem(
          kind: .attachmentsNotObject, severity: .error, offset: attachments.keyOffset,
          message: Messages.attachmentsNotObjectForPush(attachments.kind),
          pointer: "/_attachments"))
    }
    for blob in document.blobs.elements where !blob.members.digestIsString {
      problems.append(
        Problem(
          kind: .blobWithoutDigest, severity: strict ? .error : .warning, offset: blob.inputStart,
          message: Messages.blobWithoutDigest(name: document.nameString(of: blob)), pointer: ""))
    }
    // Rule 3 replaces entries with synthesized names. One that carries the attachment's bytes
    // (`?attachments=true`) would lose them, unless the run carries bytes or a blob of its
    // digest holds the same ones.
    guard carrier == nil, attachments.isSingleObject else { return }
    let blobs = document.blobs.elements
    for entry in document.entries.elements
    where entry.isObject && entry.members.data.isPresent
      && Self.isSynthesized(key: entry.key, in: text, scratch: &workspace.scratch)
      && !(entry.members.digestIsString && entry.members.dataKind == .string
        && PullWriter.blobHoldsSameData(entry, blobs, text: text))
    {
      problems.append(
        Problem(
          kind: .dataDropped, severity: strict ? .error : .warning, offset: entry.keyOffset,
          message: Messages.entryDataDropped(name: document.string(entry.key, in: text)),
          pointer: "", advice: .blobStore))
    }
  }

  func write(
    _ document: borrowing ScannedDocument, text: UnsafeBufferPointer<UInt8>, line: Int,
    to output: inout ByteBuffer, statistics: inout ConversionStatistics,
    workspace: inout WriterWorkspace,
    problems: inout [Problem]
  ) -> ConversionIOError? {
    let made = Self.entriesMade(document)
    let attachments = document.attachments
    if attachments.count == 0 {
      guard made > 0 else {
        output.append(text)
        return nil
      }
      statistics.entriesAdded += made
      // All but the closing brace (a slice's bounds checks and all, `dropLast` is not inlined).
      output.append(UnsafeBufferPointer(start: text.baseAddress, count: text.count &- 1))
      output.append(",\"_attachments\":")
      let failure = appendAttachments(
        document, text: text, to: &output, workspace: &workspace, problems: &problems)
      output.append(UInt8(ascii: "}"))
      return failure
    }
    // A non-object `_attachments` with blobs was rejected; without blobs it stays as it is.
    guard attachments.isObject else {
      output.append(text)
      return nil
    }
    let replaced = collectReplaced(document, text: text, workspace: &workspace)
    let fillsEntries =
      carrier != nil
      && document.entries.elements.contains { needsBytes($0, text: text, workspace: &workspace) }
    guard made > 0 || replaced > 0 || fillsEntries else {
      output.append(text)
      return nil
    }
    statistics.entriesAdded += made
    statistics.entriesRemoved += replaced
    output.append(UnsafeBufferPointer(rebasing: text[..<attachments.value.start]))
    let failure = appendAttachments(
      document, text: text, to: &output, workspace: &workspace, collected: true,
      problems: &problems)
    output.append(UnsafeBufferPointer(rebasing: text[attachments.value.end...]))
    return failure
  }

  /// With `--blobs`: whether a kept real entry must get its bytes from the store (it has
  /// neither `data` nor `"stub":true`, and is not encoded).
  private func needsBytes(
    _ entry: LegacyEntry, text: UnsafeBufferPointer<UInt8>, workspace: inout WriterWorkspace
  ) -> Bool {
    entry.isObject && !entry.members.data.isPresent && !entry.members.isStub
      && !entry.members.isEncoded
      && !Self.isSynthesized(key: entry.key, in: text, scratch: &workspace.scratch)
  }

  /// Appends the `_attachments` object push writes: the existing entries it keeps, then one
  /// synthesized entry per blob with a digest. (`--check` measures it too.) `collected`: the
  /// entries it replaces are already in the workspace. With `--blobs` the bytes go in too; what
  /// keeps a body out goes to `problems`, and a failure of the store is returned.
  func appendAttachments(
    _ document: borrowing ScannedDocument, text: UnsafeBufferPointer<UInt8>,
    to output: inout ByteBuffer, workspace: inout WriterWorkspace, collected: Bool = false,
    problems: inout [Problem]
  ) -> ConversionIOError? {
    output.append(UInt8(ascii: "{"))
    var splicer = MemberSplicer()
    var failure: ConversionIOError? = nil
    if document.attachments.isSingleObject {
      if !collected { _ = collectReplaced(document, text: text, workspace: &workspace) }
      let value = document.attachments.value
      if let carrier {
        failure = appendKeptEntries(
          document, text: text, carrier: carrier, splicer: &splicer, to: &output,
          workspace: &workspace, problems: &problems)
      } else {
        splicer.append(
          text.baseAddress!, from: value.start + 1, to: value.end - 1,
          excluding: workspace.removed.elements, to: &output)
      }
    }
    var generation: Int? = nil
    let exclusions = document.blobExclusions.elements
    for blob in document.blobs.elements where blob.members.digestIsString {
      splicer.beginMember(in: &output)
      let name = document.name(blob.name)
      if blob.nameIsPlain {
        output.append(UInt8(ascii: "\""))
        output.append(name)
        output.append("\":{")
      } else {
        JSONText.appendQuoted(name, to: &output)
        output.append(":{")
      }
      var members = MemberSplicer()
      members.append(
        text.baseAddress!, from: blob.span.start + 1, to: blob.span.end - 1,
        excluding: UnsafeBufferPointer(
          rebasing: exclusions[blob.exclusions.start..<blob.exclusions.end]),
        to: &output)
      if let carrier {
        appendBody(
          of: blob, in: document, text: text, carrier: carrier, needsComma: members.wroteAny,
          generation: &generation, to: &output, workspace: &workspace, problems: &problems,
          failure: &failure)
      } else if writesTail {
        naming.appendEntryTail(
          revpos: entryRevpos(document, text, cached: &generation, &workspace),
          needsComma: members.wroteAny, to: &output)
      }
      output.append(UInt8(ascii: "}"))
    }
    output.append(UInt8(ascii: "}"))
    return failure
  }

  /// The `revpos` a synthesized entry gets: `--revpos`, or the generation of the document's
  /// `_rev`, read once per document (`cached`).
  @inline(__always)
  private func entryRevpos(
    _ document: borrowing ScannedDocument, _ text: UnsafeBufferPointer<UInt8>, cached: inout Int?,
    _ workspace: inout WriterWorkspace
  ) -> Int {
    if let cached { return cached }
    let value = revpos ?? Self.revisionGeneration(document, text, scratch: &workspace.scratch)
    cached = value
    return value
  }

  /// With `--blobs`: a blob's entry gets its bytes, or a stub when they are missing and
  /// `--missing-blobs stub` says so; what keeps them out goes to `problems`, a failure of the
  /// store to `failure`.
  private func appendBody(
    of blob: BlobReference, in document: borrowing ScannedDocument,
    text: UnsafeBufferPointer<UInt8>, carrier: BodyCarrier, needsComma: Bool,
    generation: inout Int?, to output: inout ByteBuffer, workspace: inout WriterWorkspace,
    problems: inout [Problem], failure: inout ConversionIOError?
  ) {
    let place = "blob at " + document.nameString(of: blob)
    let outcome = carryBody(
      blob.members, text: text, carrier: carrier, needsComma: needsComma, to: &output,
      workspace: &workspace)
    guard
      let stubbed = record(
        outcome, place: place, members: blob.members, offset: blob.inputStart, text: text,
        into: &problems, failure: &failure)
    else { return }
    appendStub(
      ownRevpos: nil,
      generation: entryRevpos(document, text, cached: &generation, &workspace),
      needsComma: needsComma, place: place, members: blob.members, offset: blob.inputStart,
      file: stubbed, text: text, to: &output, problems: &problems)
  }

  /// With `--blobs`: the kept entries one by one, each that needs its bytes given them.
  private func appendKeptEntries(
    _ document: borrowing ScannedDocument, text: UnsafeBufferPointer<UInt8>,
    carrier: BodyCarrier, splicer: inout MemberSplicer, to output: inout ByteBuffer,
    workspace: inout WriterWorkspace, problems: inout [Problem]
  ) -> ConversionIOError? {
    var failure: ConversionIOError? = nil
    let base = text.baseAddress!
    var replaced = 0
    let removed = workspace.removed.elements
    for entry in document.entries.elements {
      if replaced < removed.count && removed[replaced].start == entry.member.start {
        replaced += 1
        continue
      }
      splicer.beginMember(in: &output)
      guard needsBytes(entry, text: text, workspace: &workspace) else {
        output.append(base + entry.member.start, count: entry.member.count)
        continue
      }
      output.append(base + entry.member.start, count: entry.member.count - 1)
      let needsComma = entry.value.count > 2
      let outcome = carryBody(
        entry.members, text: text, carrier: carrier, needsComma: needsComma, to: &output,
        workspace: &workspace)
      let place =
        "_attachments entry " + ConversionDiagnostic.quoted(document.string(entry.key, in: text))
      // `--missing-blobs stub` makes it a stub only if that gives one `stub` and a usable
      // `revpos`: it has no `stub` member of its own, and its `revpos`, if any, is a whole
      // number from 1 as written (what `--check` takes).
      let ownRevpos = entry.members.revpos
      let own =
        ownRevpos.isPresent
        ? UnsafeBufferPointer(rebasing: text[ownRevpos.start..<ownRevpos.end]) : nil
      let stubbable = !entry.members.hasStub && (own.map(JSONNumber.isPositiveInteger) ?? true)
      if let stubbed = record(
        outcome, place: place, members: entry.members, offset: entry.keyOffset, text: text,
        into: &problems, failure: &failure, stubs: stubbable)
      {
        appendStub(
          ownRevpos: own.flatMap { JSONNumber($0)?.wholeValue },
          generation: revpos
            ?? Self.revisionGeneration(document, text, scratch: &workspace.scratch),
          needsComma: needsComma, place: place, members: entry.members, offset: entry.keyOffset,
          file: stubbed, text: text, to: &output, problems: &problems)
      }
      output.append(UInt8(ascii: "}"))
    }
    return failure
  }

  /// Puts a body in, as the entry's last member: a blob's inline `data` is checked and copied
  /// (the scanner left it out of the members copied before); otherwise the store's file is read
  /// into a `data` member.
  private func carryBody(
    _ members: AttachmentMembers, text: UnsafeBufferPointer<UInt8>, carrier: BodyCarrier,
    needsComma: Bool, to output: inout ByteBuffer, workspace: inout WriterWorkspace
  ) -> BodyCarrier.Outcome {
    let digest = stringDigest(members, text: text)
    let length =
      members.length.isPresent
      ? UnsafeBufferPointer(rebasing: text[members.length.start..<members.length.end]) : nil
    if members.data.isPresent {
      guard let digest else { return .namesNoFile }
      guard members.dataKind == .string else { return .invalidBase64 }
      let data = UnsafeBufferPointer(rebasing: text[members.data.start..<members.data.end])
      let outcome = BodyCarrier.checkInline(data: data, digest: digest, length: length)
      if case .carried = outcome {
        output.append(needsComma ? ",\"data\":" : "\"data\":")
        output.append(data)
      }
      return outcome
    }
    return carrier.appendData(
      digest: digest, length: length, needsComma: needsComma, to: &output,
      buffer: &workspace.bodyBuffer)
  }

  /// Turns a body's outcome into a problem. Returns the file's path when a missing file is to
  /// make a stub (`--missing-blobs stub`) instead.
  private func record(
    _ outcome: BodyCarrier.Outcome, place: String, members: AttachmentMembers,
    offset: StreamOffset, text: UnsafeBufferPointer<UInt8>, into problems: inout [Problem],
    failure: inout ConversionIOError?, stubs: Bool = true
  ) -> String? {
    let kind: ConversionDiagnostic.Kind
    switch outcome {
    // Push reads bodies from files and checks inline ones by their own hash: what only storing
    // an entry's `data` meets (pull, upgrade) does not come here.
    case .carried, .keptExisting, .keptExistingOtherBytes, .carriedUnverified, .encoded,
      .invalidGzip:
      return nil
    case .missing(let file):
      if stubs && missingBlobs == .stub { return file }
      kind = .blobMissing
    case .namesNoFile:
      kind = .blobMissing
    case .otherBytes:
      kind = .blobCorrupt
    case .otherSize:
      kind = .lengthMismatch
    case .invalidBase64:
      kind = .invalidData
    case .failed(let file, let errno):
      kind = .blobStoreFailed
      if failure == nil {
        failure = ConversionIOError(operation: .readBlob, errno: errno, target: file)
      }
    }
    problems.append(
      Problem(
        kind: kind, severity: .error, offset: offset,
        message: Messages.body(outcome, place: place, digest: digestText(members, text))
          + (!stubs && missingBlobs == .stub && kind == .blobMissing
            ? Messages.notStubbable : ""),
        pointer: ""))
    return nil
  }

  /// `--missing-blobs stub`: ends an entry as a stub, `"stub":true` and, unless it has its own
  /// (`ownRevpos`), `"revpos":generation`, with the warning that says so.
  private func appendStub(
    ownRevpos: Int?, generation: Int, needsComma: Bool, place: String,
    members: AttachmentMembers, offset: StreamOffset, file: String,
    text: UnsafeBufferPointer<UInt8>, to output: inout ByteBuffer, problems: inout [Problem]
  ) {
    if needsComma { output.append(UInt8(ascii: ",")) }
    output.append("\"stub\":true")
    if ownRevpos == nil {
      output.append(",\"revpos\":")
      output.appendDecimal(generation)
    }
    problems.append(
      Problem(
        kind: .blobMissing, severity: strict ? .error : .warning, offset: offset,
        message: Messages.bodyStubbed(
          place: place, digest: digestText(members, text), file: file,
          revpos: ownRevpos ?? generation), pointer: ""))
  }

  /// The digest as written, decoded, for messages.
  private func digestText(_ members: AttachmentMembers, _ text: UnsafeBufferPointer<UInt8>)
    -> String
  {
    guard members.digest.isPresent else { return "no digest" }
    return String(
      decoding: JSONText.decodeString(
        UnsafeBufferPointer(rebasing: text[members.digest.start..<members.digest.end])),
      as: UTF8.self)
  }

  /// Blob references that get an entry (those with a string digest).
  static func entriesMade(_ document: borrowing ScannedDocument) -> Int {
    var count = 0
    for blob in document.blobs.elements where blob.members.digestIsString { count += 1 }
    return count
  }

  /// Puts the existing entries whose names a push made in the workspace's
  /// ``WriterWorkspace/removed``, and returns how many there are.
  private func collectReplaced(
    _ document: borrowing ScannedDocument, text: UnsafeBufferPointer<UInt8>,
    workspace: inout WriterWorkspace
  ) -> Int {
    workspace.removed.removeAll()
    guard document.attachments.isSingleObject else { return 0 }
    for entry in document.entries.elements
    where Self.isSynthesized(key: entry.key, in: text, scratch: &workspace.scratch) {
      workspace.removed.push(entry.member)
    }
    return workspace.removed.count
  }

  /// Whether the key token `key` decodes to a synthesized name.
  static func isSynthesized(
    key: Span, in text: UnsafeBufferPointer<UInt8>, scratch: inout ByteBuffer
  ) -> Bool {
    let token = UnsafeBufferPointer(rebasing: text[key.start..<key.end])
    if let plain = JSONText.unescapedContent(token) { return AttachmentNaming.isSynthesized(plain) }
    scratch.count = 0
    JSONText.decodeString(token, into: &scratch)
    return AttachmentNaming.isSynthesized(scratch.bytes)
  }

  /// The generation of the document's `_rev` (`"3-abc"` → 3), or 1.
  private static func revisionGeneration(
    _ document: borrowing ScannedDocument, _ text: UnsafeBufferPointer<UInt8>,
    scratch: inout ByteBuffer
  ) -> Int {
    let revision = document.revision
    guard revision.isPresent else { return 1 }
    scratch.count = 0
    JSONText.decodeString(
      UnsafeBufferPointer(rebasing: text[revision.start..<revision.end]), into: &scratch)
    var generation = 0
    var digits = 0
    for byte in scratch.bytes {
      if byte == UInt8(ascii: "-") { break }
      guard byte >= 48 && byte <= 57, digits < 18 else { return 1 }
      generation = generation * 10 + Int(byte - 48)
      digits += 1
    }
    return digits > 0 && digits < scratch.count && generation > 0 ? generation : 1
  }
}
