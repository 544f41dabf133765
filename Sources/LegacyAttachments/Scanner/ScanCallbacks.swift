internal import CYajl
import Glibc

/// Everything yajl's callbacks reach, at one fixed address: the scanner that follows the tokens,
/// and the handler that takes each finished document and each token of an envelope.
struct ScanContext: ~Copyable {
  var scanner: DocumentScanner
  var handler: DocumentHandler
  /// The quick way through a document push and pull leave as it is.
  var skim: DocumentSkim

  /// What a callback returns to yajl for `outcome`: 1 to go on, 0 to stop. A finished document
  /// goes to the handler, then the scanner forgets it.
  @inline(__always)
  mutating func proceed(_ outcome: TokenOutcome) -> Int32 {
    switch outcome {
    case .next: return 1
    case .stop: return 0
    case .documentEnded: return documentEnded() ? 1 : 0
    case .envelope: return envelope()
    case .runEnded: return runEnded()
    }
  }

  /// A run of envelope members has ended before the current token: its text goes to the
  /// framer, the scanner forgets it (a run records nothing but where it is), and the token
  /// goes on to the framer.
  @inline(never)
  private mutating func runEnded() -> Int32 {
    handler.memberRunEnded(
      text: scanner.finishedText, start: scanner.document.start, end: scanner.document.end,
      textIsInput: scanner.document.textIsInput, view: scanner.view)
    scanner.resetEnvelopeValue()
    return envelope()
  }

  /// A token outside the documents goes to the handler's framer; the scanner takes its verdict.
  @inline(never)
  private mutating func envelope() -> Int32 {
    // `lines` with the path `.`: every value is a document, the framer need not look.
    if handler.framer.valuesAreDocuments { return proceed(scanner.apply(.document)) }
    switch handler.framer.quickVerdict(
      scanner.envelopeToken, view: scanner.view, results: &handler.results)
    {
    case .envelope?: return 1
    case let verdict?: return proceed(scanner.apply(verdict))
    case nil: break
    }
    let verdict = handler.envelopeToken(scanner.envelopeToken, view: scanner.view)
    if case .envelope = verdict { return 1 }
    return proceed(scanner.apply(verdict))
  }

  // MARK: The general paths, for the tokens the quick paths do not take

  @inline(never)
  static func scalar(
    _ scan: UnsafeMutablePointer<ScanContext>, _ kind: ValueKind,
    text: UnsafePointer<UInt8>? = nil, count: Int = 0
  ) -> Int32 {
    scan.pointee.proceed(scan.pointee.scanner.scalar(kind, text: text, count: count))
  }

  @inline(never)
  static func open(_ scan: UnsafeMutablePointer<ScanContext>, isArray: Bool) -> Int32 {
    if scan.pointee.scanner.frames.isEmpty && scan.pointee.handler.framer.valuesAreDocuments {
      let outcome = scan.pointee.scanner.openDocument(isArray: isArray)
      if !isArray && outcome == .next && scan.pointee.skim.allowed { scan.pointee.trySkim() }
      return scan.pointee.proceed(outcome)
    }
    return scan.pointee.proceed(scan.pointee.scanner.open(isArray: isArray))
  }

  @inline(never)
  static func key(
    _ scan: UnsafeMutablePointer<ScanContext>, _ key: UnsafePointer<UInt8>, count: Int
  )
    -> Int32
  {
    scan.pointee.proceed(scan.pointee.scanner.key(key, count: count))
  }

  @inline(never)
  static func close(_ scan: UnsafeMutablePointer<ScanContext>) -> Int32 {
    scan.pointee.proceed(scan.pointee.scanner.close())
  }

  // MARK: Skimming (DocumentSkim)

  /// A document has just begun with `{`: it is skimmed, unless skimming rests.
  @inline(never)
  mutating func trySkim() {
    if skim.mayTry(documentAt: scanner.document.start) { skim.begin() }
  }

  /// The root of a skimmed document has just closed. A compact document with no escape goes to
  /// the handler; any other is parsed again (``ScanInterruption/rescan(documentStart:)``).
  @inline(never)
  static func skimEnded(_ scan: UnsafeMutablePointer<ScanContext>) -> Int32 {
    let start = scan.pointee.scanner.document.start
    let end =
      scan.pointee.scanner.chunk.lowerBound
      + yajl_get_bytes_consumed(
        scan.pointee.scanner.handle)
    guard end - start == scan.pointee.skim.compactLength else { return skimRefused(scan) }
    scan.pointee.skim.end()
    scan.pointee.skim.succeeded()
    scan.pointee.scanner.skimmedDocumentEnded(at: end)
    return scan.pointee.skimmedDocumentEnded() ? 1 : 0
  }

  /// A skimmed document must be parsed again by the scanner: the parse stops for that.
  @inline(never)
  static func skimRefused(_ scan: UnsafeMutablePointer<ScanContext>) -> Int32 {
    scan.pointee.skim.end()
    let start = scan.pointee.scanner.document.start
    scan.pointee.skim.missed(documentAt: start)
    scan.pointee.scanner.interruption = .rescan(documentStart: start)
    return 0
  }

  /// After a call to yajl: the start of the document to parse again with the scanner, if one
  /// must be (a skim the call ended inside of, or one that missed), else nil.
  mutating func documentToRescan() -> StreamOffset? {
    if skim.isActive {
      skim.end()
      skim.missed(documentAt: scanner.document.start)
      return scanner.document.start
    }
    if case .rescan(let start) = scanner.interruption {
      scanner.interruption = nil
      return start
    }
    return nil
  }

  /// ``documentEnded()`` for a document skimmed to its end: the handler knows it holds nothing
  /// to convert.
  @inline(never)
  private mutating func skimmedDocumentEnded() -> Bool {
    let goOn = handler.skimmedDocumentEnded(
      start: scanner.document.start, end: scanner.document.end, text: scanner.finishedText,
      view: scanner.view)
    scanner.resetDocument()
    return goOn
  }

  @inline(never)
  private mutating func documentEnded() -> Bool {
    let goOn = handler.documentEnded(
      scanner.document, text: scanner.finishedText, view: scanner.view)
    scanner.resetDocument()
    return goOn
  }
}

@inline(__always)
private func context(_ pointer: UnsafeMutableRawPointer?) -> UnsafeMutablePointer<ScanContext> {
  pointer.unsafelyUnwrapped.assumingMemoryBound(to: ScanContext.self)
}

/// The yajl callback table. Each callback forwards to the ``DocumentScanner`` of its context
/// pointer; they live in the library (not in `main.swift`) so that they are plain C functions with
/// no actor checks, and they are not generic, so nothing is looked up per token.
enum ScanCallbacks {
  static func make() -> yajl_callbacks {
    var callbacks = yajl_callbacks()
    callbacks.yajl_null = cblattachments_null
    callbacks.yajl_boolean = cblattachments_boolean
    // Only `yajl_number` is set, so numbers arrive as written, never converted.
    callbacks.yajl_number = cblattachments_number
    callbacks.yajl_string = cblattachments_string
    callbacks.yajl_start_map = cblattachments_start_map
    callbacks.yajl_map_key = cblattachments_map_key
    callbacks.yajl_end_map = cblattachments_end_container
    callbacks.yajl_start_array = cblattachments_start_array
    callbacks.yajl_end_array = cblattachments_end_container
    return callbacks
  }
}

// The callbacks themselves. Each is a C function (`@c`) whose Swift body is inlined into it, so
// that yajl's call lands in the body itself rather than in a thunk that jumps there (four
// instructions a token). Each tries its token's quick path, then, in a call it makes last, the
// general one.

// swift-format-ignore: AlwaysUseLowerCamelCase
@c(cblattachments_null) @inline(__always)
func cblattachments_null(_ pointer: UnsafeMutableRawPointer?) -> Int32 {
  if context(pointer).pointee.scanner.scalarQuickly(.null) { return 1 }
  return ScanContext.scalar(context(pointer), .null)
}

// swift-format-ignore: AlwaysUseLowerCamelCase
@c(cblattachments_boolean) @inline(__always)
func cblattachments_boolean(_ pointer: UnsafeMutableRawPointer?, _ value: Int32) -> Int32 {
  if context(pointer).pointee.scanner.scalarQuickly(.boolean) { return 1 }
  return ScanContext.scalar(context(pointer), .boolean)
}

// swift-format-ignore: AlwaysUseLowerCamelCase
@c(cblattachments_number) @inline(__always)
func cblattachments_number(
  _ pointer: UnsafeMutableRawPointer?, _ text: UnsafePointer<CChar>?, _ count: Int
) -> Int32 {
  let digits = UnsafeRawPointer(text)?.assumingMemoryBound(to: UInt8.self)
  if context(pointer).pointee.scanner.scalarQuickly(.number, text: digits, count: count) {
    return 1
  }
  return ScanContext.scalar(context(pointer), .number, text: digits, count: count)
}

// swift-format-ignore: AlwaysUseLowerCamelCase
@c(cblattachments_string) @inline(__always)
func cblattachments_string(
  _ pointer: UnsafeMutableRawPointer?, _ bytes: UnsafePointer<UInt8>?, _ count: Int
) -> Int32 {
  if context(pointer).pointee.scanner.scalarQuickly(.string, text: bytes, count: count) {
    return 1
  }
  return ScanContext.scalar(context(pointer), .string, text: bytes, count: count)
}

// swift-format-ignore: AlwaysUseLowerCamelCase
@c(cblattachments_start_map) @inline(__always)
func cblattachments_start_map(_ pointer: UnsafeMutableRawPointer?) -> Int32 {
  if context(pointer).pointee.scanner.openQuickly(isArray: false) { return 1 }
  return ScanContext.open(context(pointer), isArray: false)
}

// swift-format-ignore: AlwaysUseLowerCamelCase
@c(cblattachments_start_array) @inline(__always)
func cblattachments_start_array(_ pointer: UnsafeMutableRawPointer?) -> Int32 {
  if context(pointer).pointee.scanner.openQuickly(isArray: true) { return 1 }
  return ScanContext.open(context(pointer), isArray: true)
}

// swift-format-ignore: AlwaysUseLowerCamelCase
@c(cblattachments_map_key) @inline(__always)
func cblattachments_map_key(
  _ pointer: UnsafeMutableRawPointer?, _ bytes: UnsafePointer<UInt8>?, _ count: Int
) -> Int32 {
  let key = bytes.unsafelyUnwrapped
  if context(pointer).pointee.scanner.keyQuickly(key, count: count) { return 1 }
  return ScanContext.key(context(pointer), key, count: count)
}

/// `}` and `]` alike.
// swift-format-ignore: AlwaysUseLowerCamelCase
@c(cblattachments_end_container) @inline(__always)
func cblattachments_end_container(_ pointer: UnsafeMutableRawPointer?) -> Int32 {
  if context(pointer).pointee.scanner.closeQuickly() { return 1 }
  return ScanContext.close(context(pointer))
}
