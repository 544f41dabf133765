extension ScanState {
  /// Appends the pushed form of the current document (compact text of `length` bytes).
  mutating func appendPushed(length: Int) {
    let text = documentText
    let made = blobsWithDigest
    var replaced = 0
    for index in 0..<entries.count where entries[index].isSynthesized { replaced += 1 }
    statistics.entriesAdded += made
    statistics.entriesRemoved += replaced
    if attachmentsCount == 0 {
      guard made > 0 else { return output.append(text, count: length) }
      output.append(text, count: length - 1)
      output.append(",\"_attachments\":")
      appendPushedAttachments(text)
      output.append(UInt8(ascii: "}"))
      return
    }
    // A non-object `_attachments` with blobs was rejected; without blobs it stays as it is.
    guard attachmentsIsObject, made > 0 || replaced > 0 else {
      return output.append(text, count: length)
    }
    let value = attachmentsValue
    output.append(text, count: value.start)
    appendPushedAttachments(text)
    output.append(text + value.end, count: length - value.end)
  }

  /// Appends the `_attachments` object push makes: the existing entries it keeps, then one
  /// synthesized entry per blob with a digest.
  mutating func appendPushedAttachments(_ text: UnsafePointer<UInt8>) {
    output.append(UInt8(ascii: "{"))
    var splicer = MemberSplicer()
    if attachmentsCount == 1 && attachmentsIsObject {
      let value = attachmentsValue
      splicer.append(
        text, from: value.start + 1, to: value.end - 1,
        excluding: SpanSelection(stack: entries, range: 0..<entries.count) {
          $0.isSynthesized ? $0.member : nil
        }, to: &output)
    }
    appendSynthesizedEntries(text, splicer: &splicer)
    output.append(UInt8(ascii: "}"))
  }

  /// Blob references that get an entry (those with a string digest).
  var blobsWithDigest: Int {
    var count = 0
    for index in 0..<blobs.count where blobs[index].digest.isPresent { count += 1 }
    return count
  }

  /// Appends `"name":{…}` for each blob reference with a digest, in document order.
  mutating func appendSynthesizedEntries(_ text: UnsafePointer<UInt8>, splicer: inout MemberSplicer)
  {
    let litecore = options.naming == .litecore
    let revpos = litecore ? (options.revpos ?? revisionGeneration()) : 0
    for index in 0..<blobs.count {
      let blob = blobs[index]
      guard blob.digest.isPresent else { continue }
      splicer.beginMember(in: &output)
      if blob.nameIsPlain {
        output.append(UInt8(ascii: "\""))
        output.append(names.base + blob.name.start, count: blob.name.count)
        output.append("\":{")
      } else {
        JSONText.appendQuoted(
          UnsafeBufferPointer(start: names.base + blob.name.start, count: blob.name.count),
          to: &output)
        output.append(":{")
      }
      var members = MemberSplicer()
      members.append(
        text, from: blob.span.start + 1, to: blob.span.end - 1,
        excluding: blobExclusions.base + blob.exclusions.start, count: blob.exclusions.count,
        to: &output)
      if litecore {
        members.beginMember(in: &output)
        output.append("\"stub\":true,\"revpos\":")
        output.appendDecimal(revpos)
      }
      output.append(UInt8(ascii: "}"))
    }
  }

  /// The generation of the document's `_rev` (`"3-abc"` → 3), or 1.
  mutating func revisionGeneration() -> Int {
    guard revision.isPresent else { return 1 }
    scratch.count = 0
    JSONText.decodeString(
      UnsafeBufferPointer(start: documentText + revision.start, count: revision.count),
      into: &scratch)
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

  /// Appends the pulled form of the current document (compact text of `length` bytes).
  mutating func appendPulled(length: Int) {
    let text = documentText
    guard attachmentsCount == 1, attachmentsIsObject, !entries.isEmpty, !blobs.isEmpty else {
      return output.append(text, count: length)
    }
    var removed = 0
    let matcher = DigestMatcher(text: text, blobs: blobs)
    for index in 0..<entries.count {
      var entry = entries[index]
      entry.isSynthesized =
        entry.isObject && entry.digest.isPresent && matcher.matches(entry.digest)
      if entry.isSynthesized { removed += 1 }
      entries[index] = entry
    }
    statistics.entriesRemoved += removed
    guard removed > 0 else { return output.append(text, count: length) }
    var splicer = MemberSplicer()
    if removed == entries.count {
      output.append(UInt8(ascii: "{"))
      splicer.append(
        text, from: 1, to: length - 1, excluding: CollectionOfOne(attachmentsMember), to: &output)
      output.append(UInt8(ascii: "}"))
      return
    }
    let value = attachmentsValue
    output.append(text, count: value.start + 1)
    splicer.append(
      text, from: value.start + 1, to: value.end - 1,
      excluding: SpanSelection(stack: entries, range: 0..<entries.count) {
        $0.isSynthesized ? $0.member : nil
      }, to: &output)
    output.append(text + value.end - 1, count: length - value.end + 1)
  }
}
