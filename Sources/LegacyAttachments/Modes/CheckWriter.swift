/// `--check` (docs/inspect.md): one NDJSON finding per
/// problem Sync Gateway would refuse or a conversion would lose.
///
/// Every problem of a document is a finding, whatever its severity: the structural ones the
/// scanner found, the rule ones found here, and the sizes measured by ``write``.
struct CheckWriter: DocumentWriter {
  /// Builds the `_attachments` push would send, to measure it.
  private let push: PushWriter
  /// With `--blobs`: the store whose files are checked.
  private let store: BlobStore?

  /// The CouchDB `max_document_size` measured against, nil for none.
  private let couchDBLimit: Int?

  init(options: ConversionOptions, store: BlobStore?) {
    push = PushWriter(options: options, store: nil)
    self.store = store
    couchDBLimit = options.couchDBMaxDocumentSize
  }

  func findProblems(
    in document: borrowing ScannedDocument, text: UnsafeBufferPointer<UInt8>,
    into problems: inout [Problem], workspace: inout WriterWorkspace
  ) {
    guard document.isObject else { return }
    let attachments = document.attachments
    if attachments.count >= 1 && !attachments.isObject {
      problems.append(
        Problem(
          kind: .attachmentsNotObject, severity: .error, offset: attachments.keyOffset,
          message: Messages.attachmentsNotObjectForCheck(attachments.kind),
          pointer: "/_attachments"))
    }
    for blob in document.blobs.elements where !blob.members.digestIsString {
      problems.append(
        Problem(
          kind: .blobWithoutDigest, severity: .error, offset: blob.inputStart,
          message: Messages.blobWithoutDigest(name: document.nameString(of: blob)),
          pointer: String(decoding: document.name(blob.pointer), as: UTF8.self)))
    }
    findMD5Blobs(document, text: text, into: &problems)
    findNonCanonicalDigests(document, text: text, into: &problems)
    if attachments.isObject {
      for entry in document.entries.elements {
        findProblems(
          of: entry, hasRevision: document.revision.isPresent, text: text, into: &problems,
          workspace: &workspace)
      }
      findCompatibilityProblems(document, text: text, into: &problems, workspace: &workspace)
    }
    if let store {
      findStoreProblems(document, text: text, store: store, into: &problems, workspace: &workspace)
    }
  }

  /// Blobs with an `md5-` digest: Couchbase Lite neither downloads nor stores them.
  private func findMD5Blobs(
    _ document: borrowing ScannedDocument, text: UnsafeBufferPointer<UInt8>,
    into problems: inout [Problem]
  ) {
    for blob in document.blobs.elements where blob.members.digestIsString {
      let digest = UnsafeBufferPointer(
        rebasing: text[blob.members.digest.start..<blob.members.digest.end])
      guard JSONText.decodeString(digest).starts(with: "md5-".utf8) else { continue }
      let pointer = String(decoding: document.name(blob.pointer), as: UTF8.self)
      problems.append(
        Problem(
          kind: .md5Digest, severity: .error, offset: blob.inputStart,
          message: Messages.md5DigestBlob(pointer: pointer), pointer: pointer))
    }
  }

  /// What Couchbase Lite's replicator does not take (docs/blobs.md):
  /// what its pull refuses (``findLiteCoreRefusals``), entries with a synthesized name and no
  /// blob there, `md5-` digests.
  private func findCompatibilityProblems(
    _ document: borrowing ScannedDocument, text: UnsafeBufferPointer<UInt8>,
    into problems: inout [Problem], workspace: inout WriterWorkspace
  ) {
    let entries = document.entries.elements
    var matcher = DigestMatcher(text: text, blobs: document.blobs.elements)
    findLiteCoreRefusals(document, text: text, matcher: &matcher, into: &problems)
    for entry in entries where entry.isObject {
      func pointer() -> String {
        var pointer = ByteBuffer(capacity: 64)
        appendEntryPointer(entry.key, text: text, to: &pointer)
        return String(decoding: pointer.bytes, as: UTF8.self)
      }
      let name = JSONText.decodeString(
        UnsafeBufferPointer(rebasing: text[entry.key.start..<entry.key.end]))
      let isSynthesized = name.withUnsafeBufferPointer { AttachmentNaming.isSynthesized($0) }
      if isSynthesized && !hasBlob(named: name, entry: entry, &matcher) {
        problems.append(
          Problem(
            kind: .orphanEntry, severity: .error, offset: entry.keyOffset,
            message: Messages.orphanEntry(name: String(decoding: name, as: UTF8.self)),
            pointer: pointer()))
      }
      if entry.members.digestIsString {
        let digest = JSONText.decodeString(
          UnsafeBufferPointer(
            rebasing: text[entry.members.digest.start..<entry.members.digest.end]))
        if digest.starts(with: "md5-".utf8) {
          problems.append(
            Problem(
              kind: .md5Digest, severity: .error, offset: entry.keyOffset,
              message: Messages.md5Digest(name: String(decoding: name, as: UTF8.self)),
              pointer: pointer()))
        }
      }
    }
  }

  /// What Couchbase Lite's pull (``LiteCorePull``) does with the document as it is: an entry
  /// name it throws on (`invalid-entry-pointer`), a blob reference whose digest no entry has
  /// (`dangling-blob`): either fails the revision. And entries named `blob_/…` that it follows
  /// to another place than `--update-blobs` does (`entry-pointer-differs`).
  private func findLiteCoreRefusals(
    _ document: borrowing ScannedDocument, text: UnsafeBufferPointer<UInt8>,
    matcher: inout DigestMatcher, into problems: inout [Problem]
  ) {
    let pull = LiteCorePull(document, text: text)
    let entries = document.entries.elements
    if let failure = pull.failure {
      problems.append(
        Problem(
          kind: .invalidEntryPointer, severity: .error, offset: entries[failure.entry].keyOffset,
          message: Messages.invalidEntryPointer(
            name: entryName(entries[failure.entry], text), reason: failure.reason),
          pointer: entryPointer(entries[failure.entry], text)))
    }
    var blobAt: [Int: Int] = [:]
    for (position, blob) in document.blobs.elements.enumerated()
    where blobAt[blob.span.start] == nil {
      blobAt[blob.span.start] = position
    }
    for dangling in pull.dangling {
      if let entry = dangling.entry.map({ entries[$0] }) {
        problems.append(
          Problem(
            kind: .danglingBlob, severity: .error, offset: entry.keyOffset,
            message: Messages.danglingEntry(name: entryName(entry, text), digest: dangling.digest),
            pointer: entryPointer(entry, text)))
      } else if let start = dangling.blob {
        problems.append(
          Problem(
            kind: .danglingBlob, severity: .error,
            offset: blobAt[start].map { document.blobs.elements[$0].inputStart } ?? document.start,
            message: Messages.danglingBlob(digest: dangling.digest),
            pointer: pull.pointer(to: start)))
      }
    }
    for (position, target) in pull.targets.sorted(by: { $0.key < $1.key }) {
      let entry = entries[position]
      let name = JSONText.decodeString(
        UnsafeBufferPointer(rebasing: text[entry.key.start..<entry.key.end]))
      let ours = NamedPlace(name: name).flatMap { matcher.blobIndex(at: $0) }
        .map { document.blobs.elements[$0].span.start }
      let theirs: Int? = if case .blob(let start) = target { start } else { nil }
      guard ours != theirs else { continue }
      func place(_ start: Int?) -> String {
        guard let start else { return "no blob" }
        return start == 0 ? "the document itself" : "the blob at " + pull.pointer(to: start)
      }
      problems.append(
        Problem(
          kind: .entryPointerDiffers, severity: .error, offset: entry.keyOffset,
          message: Messages.entryPointerDiffers(
            name: entryName(entry, text), liteCore: place(theirs), tool: place(ours),
            reasons: Self.pointerReadings(name)),
          pointer: entryPointer(entry, text)))
    }
  }

  /// How Couchbase Lite's reading of the name `blob_/…` differs from RFC 6901's, in words.
  private static func pointerReadings(_ name: [UInt8]) -> [String] {
    let pointer = Array(name.dropFirst(5))
    var readings: [String] = []
    if pointer == Array("/".utf8) { readings.append("takes / alone for the document itself") }
    if pointer.contains(UInt8(ascii: "~")) { readings.append("reads ~0 and ~1 as they are") }
    let tokens = pointer.dropFirst().split(
      separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
    if tokens.dropLast().contains(where: \.isEmpty) { readings.append("finds no empty key") }
    if pointer.count > 1 && pointer.last == UInt8(ascii: "/") { readings.append("drops a last /") }
    if tokens.contains(where: {
      $0.count > 1 && $0.first == UInt8(ascii: "0") && $0.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
    }) {
      readings.append("reads an index with leading zeros")
    }
    return readings
  }

  /// An entry's name, decoded, for messages.
  private func entryName(_ entry: LegacyEntry, _ text: UnsafeBufferPointer<UInt8>) -> String {
    String(
      decoding: JSONText.decodeString(
        UnsafeBufferPointer(rebasing: text[entry.key.start..<entry.key.end])), as: UTF8.self)
  }

  /// An entry's RFC 6901 pointer (`/_attachments/blob_~1a`).
  private func entryPointer(_ entry: LegacyEntry, _ text: UnsafeBufferPointer<UInt8>) -> String {
    var pointer = ByteBuffer(capacity: 64)
    appendEntryPointer(entry.key, text: text, to: &pointer)
    return String(decoding: pointer.bytes, as: UTF8.self)
  }

  /// Blobs and entries whose `sha1-` digest Couchbase Lite reads only once re-encoded.
  private func findNonCanonicalDigests(
    _ document: borrowing ScannedDocument, text: UnsafeBufferPointer<UInt8>,
    into problems: inout [Problem]
  ) {
    func check(
      _ members: AttachmentMembers, what: () -> String, offset: StreamOffset, pointer: () -> String
    ) {
      guard let digest = stringDigest(members, text: text), digest.algorithm == .sha1,
        !digest.isCanonical
      else { return }
      let written = JSONText.decodeString(
        UnsafeBufferPointer(rebasing: text[members.digest.start..<members.digest.end]))
      problems.append(
        Problem(
          kind: .nonCanonicalDigest, severity: .error, offset: offset,
          message: Messages.nonCanonicalDigest(
            what(), written: String(decoding: written, as: UTF8.self),
            canonical: digest.description), pointer: pointer()))
    }
    for blob in document.blobs.elements where blob.members.digestIsString {
      let pointer = String(decoding: document.name(blob.pointer), as: UTF8.self)
      check(
        blob.members, what: { "blob at \(pointer)" }, offset: blob.inputStart, pointer: { pointer })
    }
    for entry in document.entries.elements where entry.isObject && entry.members.digestIsString {
      let name = String(
        decoding: JSONText.decodeString(
          UnsafeBufferPointer(rebasing: text[entry.key.start..<entry.key.end])), as: UTF8.self)
      check(
        entry.members, what: { "_attachments entry " + ConversionDiagnostic.quoted(name) },
        offset: entry.keyOffset,
        pointer: {
          var pointer = ByteBuffer(capacity: 64)
          appendEntryPointer(entry.key, text: text, to: &pointer)
          return String(decoding: pointer.bytes, as: UTF8.self)
        })
    }
  }

  /// Whether a blob is at the place a synthesized name gives (`blob_` and digits name none: a
  /// blob with the entry's digest stands for it).
  private func hasBlob(named name: [UInt8], entry: LegacyEntry, _ matcher: inout DigestMatcher)
    -> Bool
  {
    if name.starts(with: "blob_/".utf8) || name.first == UInt8(ascii: "$") {
      guard let place = NamedPlace(name: name) else { return false }
      return matcher.blobIndex(at: place) != nil
    }
    return entry.members.digestIsString && matcher.matches(entry.members.digest)
  }

  /// `--blobs`: every blob and legacy entry whose digest names a file has an intact file of the
  /// right size.
  private func findStoreProblems(
    _ document: borrowing ScannedDocument, text: UnsafeBufferPointer<UInt8>, store: BlobStore,
    into problems: inout [Problem], workspace: inout WriterWorkspace
  ) {
    func check(
      _ members: AttachmentMembers, offset: StreamOffset, pointer: () -> String
    ) {
      guard let digest = stringDigest(members, text: text),
        let name = BlobStore.fileName(for: digest)
      else { return }
      workspace.bodyBuffer.reserve(1 << 20)
      let buffer = UnsafeMutableRawBufferPointer(
        start: workspace.bodyBuffer.base, count: workspace.bodyBuffer.capacity)
      let file = store.path(of: name)
      let kind: ConversionDiagnostic.Kind
      let message: String
      switch store.verdict(name, expected: digest, buffer: buffer) {
      case .missing:
        (kind, message) = (
          .blobMissing, Messages.blobMissing(file: file, digest: digest.description)
        )
      case .unreadable(let errno):
        (kind, message) = (.blobMissing, Messages.blobUnreadable(file: file, errno: errno))
      case .corrupt(let actual):
        (kind, message) = (
          .blobCorrupt,
          Messages.blobCorrupt(file: file, digest: digest.description, actual: actual.description)
        )
      case .intact(let size):
        guard members.length.isPresent,
          let length = BodyCarrier.lengthValue(
            UnsafeBufferPointer(rebasing: text[members.length.start..<members.length.end])),
          length != size
        else { return }
        (kind, message) = (
          .lengthMismatch,
          Messages.lengthMismatch(
            file: file, size: size,
            length: String(decoding: text[members.length.start..<members.length.end], as: UTF8.self)
          )
        )
      }
      problems.append(
        Problem(kind: kind, severity: .error, offset: offset, message: message, pointer: pointer()))
    }
    for blob in document.blobs.elements {
      check(blob.members, offset: blob.inputStart) {
        String(decoding: document.name(blob.pointer), as: UTF8.self)
      }
    }
    guard document.attachments.isObject else { return }
    for entry in document.entries.elements where entry.isObject {
      check(entry.members, offset: entry.keyOffset) {
        var pointer = ByteBuffer(capacity: 64)
        appendEntryPointer(entry.key, text: text, to: &pointer)
        return String(decoding: pointer.bytes, as: UTF8.self)
      }
    }
  }

  /// What Sync Gateway's REST API and replication, and CouchDB, refuse in one `_attachments`
  /// entry, as given (docs/inspect.md).
  private func findProblems(
    of entry: LegacyEntry, hasRevision: Bool, text: UnsafeBufferPointer<UInt8>,
    into problems: inout [Problem], workspace: inout WriterWorkspace
  ) {
    let name = String(
      decoding: JSONText.decodeString(
        UnsafeBufferPointer(rebasing: text[entry.key.start..<entry.key.end])), as: UTF8.self)
    workspace.scratch.count = 0
    appendEntryPointer(entry.key, text: text, to: &workspace.scratch)
    let pointer = String(decoding: workspace.scratch.bytes, as: UTF8.self)
    func add(_ kind: ConversionDiagnostic.Kind, _ message: String) {
      problems.append(
        Problem(
          kind: kind, severity: .error, offset: entry.keyOffset, message: message,
          pointer: pointer))
    }
    guard entry.isObject else {
      return add(.entryNotObject, Messages.entryNotObject(name: name, kind: entry.kind))
    }
    let members = entry.members
    let hasData = members.data.isPresent
    if !hasData && !members.isStub {
      add(.entryWithoutDataOrStub, Messages.entryWithoutDataOrStub(name: name))
    }
    if members.isStub && !hasRevision {
      add(.stubWithoutRevision, Messages.stubWithoutRevision(name: name))
    }
    if members.isStub && !Self.isPositiveInteger(members.revpos, text: text) {
      let revpos =
        members.revpos.isPresent
        ? String(decoding: text[members.revpos.start..<members.revpos.end], as: UTF8.self) : nil
      add(.invalidRevpos, Messages.invalidRevpos(name: name, revpos: revpos))
    }
    guard !hasData else { return }
    if !members.digestIsString {
      add(.entryWithoutDigest, Messages.entryWithoutDigest(name: name))
    }
    if Self.numberValue(members.length, text: text) == nil {
      add(.entryWithoutLength, Messages.entryWithoutLength(name: name))
    }
  }

  /// Whether `span` is a number token that is a whole number ≥ 1 (``JSONNumber/isPositiveInteger(_:)``).
  private static func isPositiveInteger(_ span: Span, text: UnsafeBufferPointer<UInt8>) -> Bool {
    span.isPresent
      && JSONNumber.isPositiveInteger(UnsafeBufferPointer(rebasing: text[span.start..<span.end]))
  }

  /// Appends the findings only a whole object shows: attachments over 20 MiB, the metadata
  /// push would write over 1 MiB, and documents over Sync Gateway's or CouchDB's limit.
  func write(
    _ document: borrowing ScannedDocument, text: UnsafeBufferPointer<UInt8>, line: Int,
    to output: inout ByteBuffer, statistics: inout ConversionStatistics,
    workspace: inout WriterWorkspace,
    problems: inout [Problem]
  ) -> ConversionIOError? {
    appendAttachmentSizes(
      document, text: text, line: line, to: &output, statistics: &statistics,
      workspace: &workspace)
    let attachments = document.attachments
    guard attachments.count == 0 || attachments.isSingleObject else { return nil }
    appendPushedSizes(
      document, text: text, line: line, to: &output, statistics: &statistics,
      workspace: &workspace)
    // CouchDB's measure is never more than twice the compact text (a number counts at most one
    // more than its digits), so most documents are passed without it.
    if let limit = couchDBLimit, text.count > limit / 2 {
      let size = CouchDB.documentSize(text)
      if size > limit {
        Self.appendFinding(
          id: document.identifier, text: text, line: line,
          problem: ConversionDiagnostic.Kind.couchDBDocumentTooLarge.rawValue, pointer: "",
          detail: Messages.couchDBDocumentTooLarge(bytes: size, limit: limit),
          path: workspace.path, to: &output, statistics: &statistics)
      }
    }
    return nil
  }

  /// Blobs and entries whose `length` is over Sync Gateway's 20 MiB.
  private func appendAttachmentSizes(
    _ document: borrowing ScannedDocument, text: UnsafeBufferPointer<UInt8>, line: Int,
    to output: inout ByteBuffer, statistics: inout ConversionStatistics,
    workspace: inout WriterWorkspace
  ) {
    for blob in document.blobs.elements {
      guard let size = Self.numberValue(blob.members.length, text: text),
        size.exceeds(SyncGatewayLimits.attachmentBytes)
      else { continue }
      appendTooLarge(
        document, text: text, line: line, length: blob.members.length,
        pointer: String(decoding: document.name(blob.pointer), as: UTF8.self),
        path: workspace.path, to: &output, statistics: &statistics)
    }
    // Entries an earlier push made mirror blobs already checked above; push replaces them.
    for entry in document.entries.elements where entry.isObject {
      guard !PushWriter.isSynthesized(key: entry.key, in: text, scratch: &workspace.scratch),
        let size = Self.numberValue(entry.members.length, text: text),
        size.exceeds(SyncGatewayLimits.attachmentBytes)
      else { continue }
      workspace.measured.count = 0
      appendEntryPointer(entry.key, text: text, to: &workspace.measured)
      appendTooLarge(
        document, text: text, line: line, length: entry.members.length,
        pointer: String(decoding: workspace.measured.bytes, as: UTF8.self),
        path: workspace.path, to: &output, statistics: &statistics)
    }
  }

  /// The `_attachments` push would write, over 1 MiB, and the document it would send, over
  /// Sync Gateway's 20 MiB.
  private func appendPushedSizes(
    _ document: borrowing ScannedDocument, text: UnsafeBufferPointer<UInt8>, line: Int,
    to output: inout ByteBuffer, statistics: inout ConversionStatistics,
    workspace: inout WriterWorkspace
  ) {
    let attachments = document.attachments
    // Measured in a buffer of its own, taken out of the workspace meanwhile.
    var measured = ByteBuffer(capacity: 0)
    swap(&measured, &workspace.measured)
    measured.count = 0
    var unused: [Problem] = []
    _ = push.appendAttachments(
      document, text: text, to: &measured, workspace: &workspace, problems: &unused)
    let size = measured.count
    swap(&measured, &workspace.measured)
    if size > SyncGatewayLimits.metadataBytes {
      Self.appendFinding(
        id: document.identifier, text: text, line: line, problem: "metadata-too-large",
        pointer: "/_attachments", detail: Messages.metadataTooLarge(bytes: size),
        path: workspace.path, to: &output, statistics: &statistics)
    }
    // The document push sends: its `_attachments` value replaced by (or, new, added as) the one
    // just measured.
    var documentSize = text.count
    if attachments.count == 0 {
      if PushWriter.entriesMade(document) > 0 {
        documentSize += "\"_attachments\":".utf8.count + 1 + size
      }
    } else {
      documentSize += size - attachments.value.count
    }
    if documentSize > SyncGatewayLimits.documentBytes {
      Self.appendFinding(
        id: document.identifier, text: text, line: line, problem: "document-too-large",
        pointer: "", detail: Messages.documentTooLarge(bytes: documentSize),
        path: workspace.path, to: &output, statistics: &statistics)
    }
  }

  private func appendTooLarge(
    _ document: borrowing ScannedDocument, text: UnsafeBufferPointer<UInt8>, line: Int,
    length: Span, pointer: String, path: UnsafeBufferPointer<UInt8>?,
    to output: inout ByteBuffer, statistics: inout ConversionStatistics
  ) {
    let literal = String(decoding: text[length.start..<length.end], as: UTF8.self)
    Self.appendFinding(
      id: document.identifier, text: text, line: line, problem: "attachment-too-large",
      pointer: pointer, detail: Messages.attachmentTooLarge(length: literal), path: path,
      to: &output, statistics: &statistics)
  }

  /// The value of a number token, read exactly, or nil when `span` is absent or not a number.
  private static func numberValue(_ span: Span, text: UnsafeBufferPointer<UInt8>) -> JSONNumber? {
    guard span.isPresent else { return nil }
    return JSONNumber(UnsafeBufferPointer(rebasing: text[span.start..<span.end]))
  }

  /// Appends one finding row: `id` (the `_id` token `id` of `text`, or null), `line`,
  /// `problem`, `pointer`, `detail`, and `path` for a document in an envelope.
  static func appendFinding(
    id: Span, text: UnsafeBufferPointer<UInt8>, line: Int, problem: String, pointer: String,
    detail: String, path: UnsafeBufferPointer<UInt8>?, to output: inout ByteBuffer,
    statistics: inout ConversionStatistics
  ) {
    var row = RowWriter()
    row.raw("id", id, from: text, into: &output)
    row.number("line", line, into: &output)
    row.string("problem", problem, into: &output)
    row.string("pointer", pointer, into: &output)
    row.string("detail", detail, into: &output)
    if let path { row.string("path", path, into: &output) }
    row.end(into: &output)
    statistics.rows += 1
  }
}
