/// `--push` (SPEC.md, "Push"): an `_attachments` entry for every blob reference with a digest.
///
/// Existing entries keep their place and order, except those with a synthesized name (made by an
/// earlier push, in either naming), which are replaced; new entries follow, in document order.
/// Without an `_attachments` member one is added as the last member.
struct PushWriter: DocumentWriter {
  private let naming: AttachmentNaming
  private let revpos: Int?
  private let strict: Bool

  init(options: ConversionOptions) {
    naming = AttachmentNaming(options.naming)
    revpos = options.revpos
    strict = options.strict
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
  }

  func write(
    _ document: borrowing ScannedDocument, text: UnsafeBufferPointer<UInt8>, line: Int,
    to output: inout ByteBuffer, statistics: inout Statistics, workspace: inout WriterWorkspace
  ) {
    let made = Self.entriesMade(document)
    let attachments = document.attachments
    if attachments.count == 0 {
      guard made > 0 else { return output.append(text) }
      statistics.entriesAdded += made
      output.append(UnsafeBufferPointer(rebasing: text.dropLast()))
      output.append(",\"_attachments\":")
      appendAttachments(document, text: text, to: &output, workspace: &workspace)
      output.append(UInt8(ascii: "}"))
      return
    }
    // A non-object `_attachments` with blobs was rejected; without blobs it stays as it is.
    guard attachments.isObject else { return output.append(text) }
    let replaced = collectReplaced(document, text: text, workspace: &workspace)
    guard made > 0 || replaced > 0 else { return output.append(text) }
    statistics.entriesAdded += made
    statistics.entriesRemoved += replaced
    output.append(UnsafeBufferPointer(rebasing: text[..<attachments.value.start]))
    appendAttachments(document, text: text, to: &output, workspace: &workspace, collected: true)
    output.append(UnsafeBufferPointer(rebasing: text[attachments.value.end...]))
  }

  /// Appends the `_attachments` object push writes: the existing entries it keeps, then one
  /// synthesized entry per blob with a digest. (`--check` measures it too.) `collected`: the
  /// entries it replaces are already in the workspace.
  func appendAttachments(
    _ document: borrowing ScannedDocument, text: UnsafeBufferPointer<UInt8>,
    to output: inout ByteBuffer, workspace: inout WriterWorkspace, collected: Bool = false
  ) {
    output.append(UInt8(ascii: "{"))
    var splicer = MemberSplicer()
    if document.attachments.isSingleObject {
      if !collected { _ = collectReplaced(document, text: text, workspace: &workspace) }
      let value = document.attachments.value
      splicer.append(
        text.baseAddress!, from: value.start + 1, to: value.end - 1,
        excluding: workspace.removed.elements, to: &output)
    }
    let generation =
      naming.writesStubAndRevpos
      ? (revpos ?? Self.revisionGeneration(document, text, scratch: &workspace.scratch)) : 0
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
      naming.appendEntryTail(revpos: generation, needsComma: members.wroteAny, to: &output)
      output.append(UInt8(ascii: "}"))
    }
    output.append(UInt8(ascii: "}"))
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
