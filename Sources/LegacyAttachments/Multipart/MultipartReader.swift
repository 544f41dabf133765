import Glibc

/// A MIME multipart body (RFC 2046) read piece by piece, as CouchDB and Sync Gateway send one:
/// `multipart/mixed` or `multipart/related`, whose parts may be `multipart/related` themselves
/// (one level deep). It says where each part begins (with its headers), hands over each body's
/// bytes as they come, holding back no more than a boundary line's worth, and says where each
/// part ends.
///
/// The boundary is given, or taken from the body's first line that starts with `--`. Lines end
/// in CRLF, as RFC 2046 says; a body whose first boundary line ends in a bare LF is read with
/// bare LFs throughout.
struct MultipartReader {
  /// What the reader found, in order.
  enum Event {
    /// A part's headers were read; `offset` is where they start, `bodyOffset` where its body
    /// does. A part at depth 0 whose type is `multipart/…` opens a nested body, whose parts are
    /// at depth 1.
    case partBegins(PartHeaders, depth: Int, offset: Int, bodyOffset: Int)
    /// Bytes of the body of the part that began last (one that is not multipart itself).
    case bytes(UnsafeRawBufferPointer)
    /// The part open at `depth` ended; `offset` is where its body ended (the line break before
    /// the boundary line), and `end` where its boundary line ends.
    case partEnds(depth: Int, offset: Int, end: Int)
    /// The outer body's boundary line (`--` and the boundary) is known, and the line break its
    /// lines end in (before any part begins).
    case boundaryFound(delimiter: [UInt8], lineBreak: [UInt8])
  }

  /// Why a body cannot be read, and where (a byte offset in it).
  struct Failure: Error, Equatable {
    var offset: Int
    var reason: String
  }

  private enum State {
    /// Before the first boundary line of the body at `depth` (its preamble).
    case preamble(depth: Int)
    /// Reading the headers of a part at `depth`.
    case headers(depth: Int)
    /// In the body of a part at `depth`.
    case body(depth: Int)
    /// After a nested body's closing boundary line, before the outer boundary line.
    case epilogue
    /// After the outer closing boundary line: the rest is ignored.
    case done
  }

  /// The longest line read whole: a preamble line, a header block (CouchDB's are a few hundred
  /// bytes; RFC 2046 boundaries are at most 70 characters).
  static let maximumLine = 1 << 16

  private var state: State = .preamble(depth: 0)
  /// `--` and the boundary, for the outer body and (when open) the nested one.
  private var delimiters: [[UInt8]] = []
  private var lineBreak: [UInt8] = [0x0D, 0x0A]
  private var pending: [UInt8] = []
  /// How much of `pending` has been read (it is compacted before more is appended).
  private var used = 0
  /// The offset in the body of `pending[0]`.
  private var pendingOffset = 0
  private var headerLines: [[UInt8]] = []
  private var headersOffset = 0
  private var inputEnded = false
  /// Whether ``Event/boundaryFound(delimiter:lineBreak:)`` was delivered.
  private var announced = false

  /// A reader of a body whose boundary is `boundary` (without the leading `--`), or taken from
  /// the body when nil.
  init(boundary: [UInt8]?) {
    if let boundary { delimiters = [Array("--".utf8) + boundary] }
  }

  /// Whether the outer body's closing boundary line has been read.
  var isComplete: Bool {
    if case .done = state { true } else { false }
  }

  /// The offset in the body of the next byte to be read.
  var offset: Int { pendingOffset + used }

  /// Reads `bytes`, the next piece of the body, calling `handle` with what they complete.
  mutating func read<E: Error>(
    _ bytes: UnsafeRawBufferPointer, _ handle: (Event) throws(E) -> Void
  ) throws(MultipartFailure<E>) {
    if used > 0 {
      pending.removeFirst(used)
      pendingOffset += used
      used = 0
    }
    pending.append(contentsOf: bytes)
    try proceed(handle)
  }

  /// The body has ended: anything short of the outer closing boundary line is a failure.
  mutating func finish<E: Error>(_ handle: (Event) throws(E) -> Void) throws(MultipartFailure<E>) {
    inputEnded = true
    try proceed(handle)
    switch state {
    case .done:
      return
    case .preamble(let depth) where depth == 0 && delimiters.isEmpty:
      throw .invalid(Failure(offset: 0, reason: Messages.multipartNoBoundary))
    case .preamble(let depth) where depth == 0:
      throw .invalid(Failure(offset: 0, reason: Messages.multipartBoundaryNotFound))
    default:
      throw .invalid(Failure(offset: offset, reason: Messages.multipartCutShort))
    }
  }

  private mutating func proceed<E: Error>(_ handle: (Event) throws(E) -> Void)
    throws(MultipartFailure<E>)
  {
    while true {
      let progressed: Bool
      switch state {
      case .preamble(let depth):
        let knew = announced
        do throws(Failure) {
          progressed = try readPreambleLine(depth: depth)
        } catch {
          throw .invalid(error)
        }
        if !knew, case .headers = state {
          announced = true
          try deliver(.boundaryFound(delimiter: delimiters[0], lineBreak: lineBreak), handle)
        }
      case .headers(let depth):
        progressed = try readHeaderLine(depth: depth, handle)
      case .body(let depth):
        progressed = try readBody(depth: depth, handle)
      case .epilogue:
        progressed = try readEpilogueLine(handle)
      case .done:
        used = pending.count
        return
      }
      if !progressed { return }
    }
  }

  // MARK: Lines

  /// The next whole line (without its line break) and where the one after it starts; at the
  /// end of the input, what is left. Nil until a line break comes.
  private func nextLine() throws(Failure) -> (line: ArraySlice<UInt8>, next: Int)? {
    guard let newline = pending[used...].firstIndex(of: 0x0A) else {
      if pending.count - used > Self.maximumLine {
        throw Failure(offset: offset, reason: Messages.multipartLineTooLong(Self.maximumLine))
      }
      return inputEnded && used < pending.count ? (pending[used...], pending.count) : nil
    }
    var end = newline
    if end > used && pending[end - 1] == 0x0D { end -= 1 }
    return (pending[used..<end], newline + 1)
  }

  private mutating func readPreambleLine(depth: Int) throws(Failure) -> Bool {
    guard let (line, next) = try nextLine() else { return false }
    used = next
    if delimiters.count <= depth {
      // The first line that starts with "--" gives the boundary (white space after it is not
      // part of it, RFC 2046 5.1.1), and the line break every line ends in.
      guard line.starts(with: "--".utf8) else { return true }
      var delimiter = Array(line)
      while let last = delimiter.last, last == 0x20 || last == 0x09 { delimiter.removeLast() }
      // A first line that ends in "--" closes a body without parts (as `_bulk_get` of no ids
      // answers).
      if delimiter.count > 4 && delimiter.suffix(2).elementsEqual("--".utf8) {
        delimiter.removeLast(2)
      }
      delimiters.append(delimiter)
    }
    switch Self.delimiterKind(line, delimiters[depth]) {
    case .part?:
      if depth == 0 {
        // The first boundary line gives the line break every line ends in.
        lineBreak = next >= 2 && pending[next - 2] == 0x0D ? [0x0D, 0x0A] : [0x0A]
      }
      startHeaders(depth: depth)
    case .close?:
      state = depth == 0 ? .done : .epilogue
    case nil:
      break
    }
    return true
  }

  private mutating func startHeaders(depth: Int) {
    state = .headers(depth: depth)
    headerLines.removeAll()
    headersOffset = offset
  }

  private enum DelimiterKind { case part, close }

  /// Whether `line` is the boundary line `delimiter` (`--boundary`, white space after it
  /// allowed) or its closing form (`--boundary--`).
  private static func delimiterKind(_ line: ArraySlice<UInt8>, _ delimiter: [UInt8])
    -> DelimiterKind?
  {
    guard line.starts(with: delimiter) else { return nil }
    var rest = line.dropFirst(delimiter.count)
    var kind = DelimiterKind.part
    if rest.starts(with: "--".utf8) {
      kind = .close
      rest = rest.dropFirst(2)
    }
    return rest.allSatisfy { $0 == 0x20 || $0 == 0x09 } ? kind : nil
  }

  // MARK: Headers

  private mutating func readHeaderLine<E: Error>(depth: Int, _ handle: (Event) throws(E) -> Void)
    throws(MultipartFailure<E>) -> Bool
  {
    let found: (line: ArraySlice<UInt8>, next: Int)?
    do throws(Failure) {
      found = try nextLine()
    } catch {
      throw .invalid(error)
    }
    guard let (line, next) = found else { return false }
    if inputEnded && next == pending.count && pending.last != 0x0A {
      throw .invalid(
        Failure(offset: pendingOffset + pending.count, reason: Messages.multipartCutShort))
    }
    used = next
    if !line.isEmpty {
      if let first = line.first, first == 0x20 || first == 0x09, !headerLines.isEmpty {
        headerLines[headerLines.count - 1] += line  // a folded header (RFC 5322 2.2.3)
      } else {
        headerLines.append(Array(line))
      }
      if offset - headersOffset > Self.maximumLine {
        throw .invalid(
          Failure(offset: headersOffset, reason: Messages.multipartLineTooLong(Self.maximumLine)))
      }
      return true
    }
    let headers: PartHeaders
    do throws(PartHeaders.Invalid) {
      headers = try PartHeaders(lines: headerLines)
    } catch {
      throw .invalid(Failure(offset: headersOffset, reason: error.reason))
    }
    try deliver(
      .partBegins(headers, depth: depth, offset: headersOffset, bodyOffset: offset), handle)
    if let boundary = headers.boundary {
      guard depth == 0 else {
        throw .invalid(Failure(offset: headersOffset, reason: Messages.multipartNestedTooDeep))
      }
      delimiters.append(Array("--".utf8) + boundary)
      state = .preamble(depth: 1)
    } else {
      state = .body(depth: depth)
    }
    return true
  }

  // MARK: Bodies

  /// Hands over the body bytes that cannot begin a boundary line, and ends the part at its
  /// boundary line.
  private mutating func readBody<E: Error>(depth: Int, _ handle: (Event) throws(E) -> Void)
    throws(MultipartFailure<E>) -> Bool
  {
    let marker = lineBreak + Array("--".utf8)
    var searchFrom = used
    while true {
      guard let found = Self.find(marker, in: pending, from: searchFrom) else {
        if inputEnded {
          throw .invalid(
            Failure(offset: pendingOffset + pending.count, reason: Messages.multipartCutShort))
        }
        // The last bytes may begin the marker: they wait for the next read.
        try emit(upTo: max(used, pending.count - (marker.count - 1)), handle)
        return false
      }
      if found + marker.count > pending.count {
        // Only the start of the marker has come.
        guard !inputEnded else {
          searchFrom = found + 1
          continue
        }
        try emit(upTo: found, handle)
        return false
      }
      let lineStart = found + lineBreak.count
      switch boundaryLine(at: lineStart, depth: depth) {
      case .notYet:
        try emit(upTo: found, handle)
        return false
      case .no:
        searchFrom = found + 1
      case .outer:
        throw .invalid(
          Failure(offset: pendingOffset + lineStart, reason: Messages.multipartNestedNotClosed))
      case .yes(let kind, let next):
        try emit(upTo: found, handle)
        let bodyEnd = pendingOffset + found
        used = next
        try deliver(.partEnds(depth: depth, offset: bodyEnd, end: offset), handle)
        switch kind {
        case .part: startHeaders(depth: depth)
        case .close where depth == 1:
          delimiters.removeLast()
          state = .epilogue
        case .close: state = .done
        }
        return true
      }
    }
  }

  private enum BoundaryLine {
    case notYet
    case no
    /// The outer body's boundary, inside a nested part: the nested body was never closed.
    case outer
    case yes(DelimiterKind, next: Int)
  }

  /// Whether the line at `start` is a boundary line of the body at `depth`, as far as the bytes
  /// read tell: only the boundary, `--`, white space and a line break may make it up.
  private func boundaryLine(at start: Int, depth: Int) -> BoundaryLine {
    let available = pending[start...]
    for (index, delimiter) in delimiters.enumerated().reversed() {
      if available.count < delimiter.count {
        if !inputEnded && delimiter.starts(with: available) { return .notYet }
        continue
      }
      guard available.starts(with: delimiter) else { continue }
      var position = start + delimiter.count
      var kind = DelimiterKind.part
      if pending.count - position < 2 && !inputEnded { return .notYet }
      if pending[position...].starts(with: "--".utf8) {
        kind = .close
        position += 2
      }
      while position < pending.count, pending[position] == 0x20 || pending[position] == 0x09 {
        position += 1
      }
      if position == pending.count {
        guard inputEnded else { return .notYet }
      } else if pending[position...].starts(with: lineBreak) {
        position += lineBreak.count
      } else if pending.count - position < lineBreak.count && !inputEnded {
        return .notYet
      } else {
        continue
      }
      return index == depth ? .yes(kind, next: position) : .outer
    }
    return .no
  }

  private mutating func emit<E: Error>(upTo end: Int, _ handle: (Event) throws(E) -> Void)
    throws(MultipartFailure<E>)
  {
    guard end > used else { return }
    let start = used
    used = end
    var failure: MultipartFailure<E>? = nil
    pending.withUnsafeBytes { all in
      do throws(MultipartFailure<E>) {
        try deliver(.bytes(UnsafeRawBufferPointer(rebasing: all[start..<end])), handle)
      } catch {
        failure = error
      }
    }
    if let failure { throw failure }
  }

  /// The first `marker` in `bytes` from `start` (memchr for its first byte, then a compare).
  private static func find(_ marker: [UInt8], in bytes: [UInt8], from start: Int) -> Int? {
    bytes.withUnsafeBufferPointer { buffer -> Int? in
      guard let base = buffer.baseAddress else { return nil }
      var index = start
      while index + marker.count <= buffer.count {
        guard let hit = memchr(base + index, Int32(marker[0]), buffer.count - index) else {
          return nil
        }
        let position = UnsafePointer<UInt8>(hit.assumingMemoryBound(to: UInt8.self)) - base
        if position + marker.count > buffer.count { return position }
        if memcmp(base + position, marker, marker.count) == 0 { return position }
        index = position + 1
      }
      return nil
    }
  }

  // MARK: Epilogue

  /// After a nested body's close: skips lines to the outer boundary line, which ends the part
  /// that held it.
  private mutating func readEpilogueLine<E: Error>(_ handle: (Event) throws(E) -> Void)
    throws(MultipartFailure<E>) -> Bool
  {
    let found: (line: ArraySlice<UInt8>, next: Int)?
    do throws(Failure) {
      found = try nextLine()
    } catch {
      throw .invalid(error)
    }
    guard let (line, next) = found else { return false }
    let lineOffset = offset
    used = next
    guard let kind = Self.delimiterKind(line, delimiters[0]) else { return true }
    try deliver(
      .partEnds(depth: 0, offset: max(0, lineOffset - lineBreak.count), end: offset), handle)
    switch kind {
    case .part: startHeaders(depth: 0)
    case .close: state = .done
    }
    return true
  }

  private func deliver<E: Error>(_ event: Event, _ handle: (Event) throws(E) -> Void)
    throws(MultipartFailure<E>)
  {
    do throws(E) {
      try handle(event)
    } catch {
      throw .handler(error)
    }
  }

}

/// Why reading stopped: the body cannot be read, or the handler threw.
enum MultipartFailure<E: Error>: Error {
  case invalid(MultipartReader.Failure)
  case handler(E)
}
