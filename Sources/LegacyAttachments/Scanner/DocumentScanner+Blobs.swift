extension DocumentScanner {
  /// A blob reference has closed: keep it, with the members its entry leaves out and the names
  /// asked for, and drop any reference found inside it before it was known to be a blob.
  @inline(never)
  mutating func recordBlob(_ frame: UnsafeMutablePointer<Frame>) {
    if document.blobs.count > frame.pointee.blobsStart {
      let first = document.blobs[frame.pointee.blobsStart]
      document.blobExclusions.truncate(to: first.exclusions.start)
      document.names.count = first.name.start
      document.blobs.truncate(to: frame.pointee.blobsStart)
    }
    let excludedStart = document.blobExclusions.count
    for index in frame.pointee.exclusionsStart..<exclusions.count {
      document.blobExclusions.push(exclusions[index])
    }
    exclusions.truncate(to: frame.pointee.exclusionsStart)
    let noName = Span(start: document.names.count, end: document.names.count)
    var reference = BlobReference(
      span: Span(start: frame.pointee.start, end: tokenEnd), inputStart: frame.pointee.inputStart,
      exclusions: Span(start: excludedStart, end: document.blobExclusions.count),
      members: frame.pointee.members, name: noName, pointer: .none, nameIsPlain: false)
    if let naming = nameRequest.naming {
      let nameStart = document.names.count
      document.names.append(naming.prefix)
      let path = appendPath(style: naming.style)
      reference.name = Span(start: nameStart, end: path.span.end)
      reference.nameIsPlain = path.isPlain
      if nameRequest.pointers {
        reference.pointer = naming.style == .pointer ? path.span : appendPath(style: .pointer).span
      }
    }
    document.blobs.push(reference)
  }

  /// Appends the path of the open containers (their current keys and indexes) to the document's
  /// names in `style`, and returns where it is and whether it is plain: whether it needs no
  /// escape as a JSON string (so that it can be written between quotes as it is).
  mutating func appendPath(style: PathStyle) -> (span: Span, isPlain: Bool) {
    let start = document.names.count
    var isPlain = true
    let base = documentText
    for depth in 0..<frames.count {
      // Through the pointer: a copy of the whole frame per step costs more than the step.
      let frame = frames.base + depth
      if frame.pointee.isArray {
        style.appendIndexStep(frame.pointee.count - 1, to: &document.names)
        continue
      }
      let key = frame.pointee.key
      let content = base + key.start + 1
      let length = key.count - 2
      if style.plainPrefixLength(content, count: length) == length {
        // The raw key text is the decoded key, has nothing to escape in the step, and (being
        // strictly valid UTF-8 with no backslash, quote or control character) none as a string.
        document.names.append(style.keySeparator)
        document.names.append(content, count: length)
        continue
      }
      isPlain = false
      let token = UnsafeBufferPointer(start: base + key.start, count: key.count)
      if let unescaped = JSONText.unescapedContent(token) {
        style.appendKeyStep(unescaped, to: &document.names)
      } else {
        scratch.count = 0
        JSONText.decodeString(token, into: &scratch)
        style.appendKeyStep(scratch.bytes, to: &document.names)
      }
    }
    return (Span(start: start, end: document.names.count), isPlain)
  }
}
