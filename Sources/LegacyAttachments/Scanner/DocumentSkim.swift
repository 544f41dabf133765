internal import CYajl
import Glibc

/// The quick way through a document that push and pull leave as it is: one that holds no blob
/// and no `_attachments`, and no whitespace, so that its output is its input.
///
/// Such a document needs none of the scanner's work per token: no frames, no key words, no
/// positions. When a document begins with `{` (``ScanContext/trySkim()``), yajl's callback table
/// is set to the skim callbacks below for the rest of it, which only count: the bytes its tokens
/// take when written compactly, its values and its non-empty containers. When the root closes,
/// the document has no whitespace and no escape exactly when its length in the input is that
/// count plus its commas; it then goes to the handler as the scanner would have handed it over.
///
/// Anything else makes the engine parse the document again from its first byte with the scanner
/// (``ScanInterruption/rescan(documentStart:)``): a key `@type` or `_attachments` at any depth,
/// a length that differs (whitespace, an escape), an error, more than ``longest`` bytes, or the
/// end of the piece being parsed before the document's (a skim never outlives one call to
/// yajl). After a miss, skimming rests for 2^m documents, m counting the misses (up to 12,
/// 4,096 documents) less one for every ``successesPerMissForgiven`` documents skimmed since: an
/// input where more than about one document in nine would miss soon skims rarely, and one
/// whose documents are mostly plain is skimmed again soon after one that is not.
struct DocumentSkim {
  /// Whether the run's options let documents be skimmed: push or pull with nothing carried or
  /// matched by name (no `--blobs`, no `--update-blobs`). The framer says whether every value
  /// is a document.
  private(set) var allowed: Bool
  /// The callback table yajl calls (the engine's), and the two it is set from.
  private let table: UnsafeMutablePointer<yajl_callbacks>
  private let scanCallbacks: yajl_callbacks
  private let skimCallbacks: yajl_callbacks

  /// Whether a document is being skimmed.
  private(set) var isActive = false
  /// Containers open.
  private var depth = 0
  /// The bytes of the tokens so far, written compactly, without commas (a key's colon included).
  private var length = 0
  private var values = 0
  private var nonEmptyContainers = 0
  /// ``length`` just after the last `{` or `[`: a container that closes with ``length`` still
  /// there had nothing in it.
  private var lengthAfterOpen = 0

  /// The document the engine is parsing again after a miss: never skimmed twice.
  private var refusedStart: StreamOffset? = nil
  private var misses = 0
  /// Documents skimmed since ``misses`` last went down.
  private var skimmedSinceMiss = 0
  /// Documents still to be scanned before the next skim is tried.
  private var documentsToRest = 0

  /// Documents skimmed to their end, and skims that missed (for tests and benchmarks).
  private(set) var documentsSkimmed = 0
  private(set) var documentsRescanned = 0

  init(options: ConversionOptions, table: UnsafeMutablePointer<yajl_callbacks>) {
    allowed =
      (options.mode == .push || options.mode == .pull) && options.blobs == nil
      && !options.updateBlobs
    self.table = table
    scanCallbacks = table.pointee
    skimCallbacks = SkimCallbacks.make()
  }

  /// Whether the document starting at `start` may be skimmed, by the rest it is in.
  mutating func mayTry(documentAt start: StreamOffset) -> Bool {
    if start == refusedStart {
      refusedStart = nil
      return false
    }
    if documentsToRest > 0 {
      documentsToRest -= 1
      return false
    }
    return true
  }

  /// Skims the document whose `{` was the last token.
  mutating func begin() {
    isActive = true
    depth = 1
    length = 1
    values = 1
    nonEmptyContainers = 0
    lengthAfterOpen = 1
    table.pointee = skimCallbacks
  }

  /// The document's length in the input if it is compact and has no escape: its tokens and the
  /// commas between its values (every value but the root follows one, except the first in each
  /// container). Whitespace makes the input longer, and so does an escape (yajl hands over a
  /// string decoded, shorter than it is written): never shorter.
  var compactLength: Int { length &+ values &- 1 &- nonEmptyContainers }

  /// The skim has ended, with the root's close or cut short: the scanner takes the tokens again.
  mutating func end() {
    isActive = false
    table.pointee = scanCallbacks
  }

  /// No document is skimmed from now on (tests compare the two ways).
  mutating func turnOff() { allowed = false }

  /// The document was skimmed to its end: it is what it seemed. Every
  /// ``successesPerMissForgiven`` of them take one miss off the count.
  mutating func succeeded() {
    documentsSkimmed &+= 1
    skimmedSinceMiss &+= 1
    if skimmedSinceMiss == Self.successesPerMissForgiven {
      skimmedSinceMiss = 0
      if misses > 0 { misses -= 1 }
    }
  }

  /// How many skimmed documents make up for one miss. A skim saves about a tenth of what a
  /// document costs (yajl's own work is the rest); a miss costs up to the whole document parsed
  /// again. Skimming pays while fewer than about one try in nine misses: with more, the count
  /// of misses only grows, and the rests grow with it until skims are rare.
  static let successesPerMissForgiven = 8

  /// The most bytes (written compactly) a skim goes through before it gives up: a document
  /// longer than that is scanned, and a miss in a long document never costs more than this
  /// parsed twice.
  static let longest = 1 << 16

  /// The document at `start` must be parsed again by the scanner: the rest after this miss is
  /// twice as long as the one after the last (unless skims since have taken misses off).
  mutating func missed(documentAt start: StreamOffset) {
    documentsRescanned &+= 1
    refusedStart = start
    misses = min(misses + 1, 12)
    documentsToRest = 1 << misses
  }

  // MARK: Tokens (the skim callbacks)

  /// A scalar of `count` bytes. Returns whether the skim goes on (``longest``).
  @inline(__always)
  mutating func scalar(length count: Int) -> Bool {
    length &+= count
    values &+= 1
    return length <= Self.longest
  }

  /// A key of `count` bytes. Returns whether the skim goes on (``longest``).
  @inline(__always)
  mutating func key(length count: Int) -> Bool {
    length &+= count &+ 3
    return length <= Self.longest
  }

  /// Whether a key (decoded) is one that push or pull looks at in a document: `@type` (at any
  /// depth: a blob may be anywhere) or `_attachments`.
  @inline(__always)
  static func isConverted(key: UnsafePointer<UInt8>, count: Int) -> Bool {
    switch count {
    case 5: key[0] == UInt8(ascii: "@") && memcmp(key, typeWord.utf8Start, 5) == 0
    case 12: key[0] == UInt8(ascii: "_") && memcmp(key, attachmentsWord.utf8Start, 12) == 0
    default: false
    }
  }

  /// `{` or `[`. Returns whether the skim goes on (``longest``).
  @inline(__always)
  mutating func open() -> Bool {
    length &+= 1
    values &+= 1
    lengthAfterOpen = length
    depth &+= 1
    return length <= Self.longest
  }

  /// `}` or `]`. Returns whether the root is still open.
  @inline(__always)
  mutating func close() -> Bool {
    if length != lengthAfterOpen { nonEmptyContainers &+= 1 }
    length &+= 1
    depth &-= 1
    return depth != 0
  }
}

private let typeWord: StaticString = "@type"
private let attachmentsWord: StaticString = "_attachments"

/// The callback table of a skim: each callback only counts (``DocumentSkim``); the root's
/// close ends the skim (``ScanContext/skimEnded(_:)``), a key push or pull looks at stops it
/// (``ScanContext/skimRefused(_:)``).
enum SkimCallbacks {
  static func make() -> yajl_callbacks {
    var callbacks = yajl_callbacks()
    callbacks.yajl_null = cblattachments_skim_null
    callbacks.yajl_boolean = cblattachments_skim_boolean
    callbacks.yajl_number = cblattachments_skim_number
    callbacks.yajl_string = cblattachments_skim_string
    callbacks.yajl_start_map = cblattachments_skim_open
    callbacks.yajl_map_key = cblattachments_skim_key
    callbacks.yajl_end_map = cblattachments_skim_close
    callbacks.yajl_start_array = cblattachments_skim_open
    callbacks.yajl_end_array = cblattachments_skim_close
    return callbacks
  }
}

@inline(__always)
private func skimContext(_ pointer: UnsafeMutableRawPointer?) -> UnsafeMutablePointer<ScanContext> {
  pointer.unsafelyUnwrapped.assumingMemoryBound(to: ScanContext.self)
}

// swift-format-ignore: AlwaysUseLowerCamelCase
@c(cblattachments_skim_null) @inline(__always)
func cblattachments_skim_null(_ pointer: UnsafeMutableRawPointer?) -> Int32 {
  if skimContext(pointer).pointee.skim.scalar(length: 4) { return 1 }
  return ScanContext.skimRefused(skimContext(pointer))
}

// swift-format-ignore: AlwaysUseLowerCamelCase
@c(cblattachments_skim_boolean) @inline(__always)
func cblattachments_skim_boolean(_ pointer: UnsafeMutableRawPointer?, _ value: Int32) -> Int32 {
  if skimContext(pointer).pointee.skim.scalar(length: value != 0 ? 4 : 5) { return 1 }
  return ScanContext.skimRefused(skimContext(pointer))
}

// swift-format-ignore: AlwaysUseLowerCamelCase
@c(cblattachments_skim_number) @inline(__always)
func cblattachments_skim_number(
  _ pointer: UnsafeMutableRawPointer?, _ text: UnsafePointer<CChar>?, _ count: Int
) -> Int32 {
  if skimContext(pointer).pointee.skim.scalar(length: count) { return 1 }
  return ScanContext.skimRefused(skimContext(pointer))
}

// swift-format-ignore: AlwaysUseLowerCamelCase
@c(cblattachments_skim_string) @inline(__always)
func cblattachments_skim_string(
  _ pointer: UnsafeMutableRawPointer?, _ bytes: UnsafePointer<UInt8>?, _ count: Int
) -> Int32 {
  // With no backslash on the line, the decoded text is the text between the quotes.
  if skimContext(pointer).pointee.skim.scalar(length: count &+ 2) { return 1 }
  return ScanContext.skimRefused(skimContext(pointer))
}

// swift-format-ignore: AlwaysUseLowerCamelCase
@c(cblattachments_skim_key) @inline(__always)
func cblattachments_skim_key(
  _ pointer: UnsafeMutableRawPointer?, _ bytes: UnsafePointer<UInt8>?, _ count: Int
) -> Int32 {
  if DocumentSkim.isConverted(key: bytes.unsafelyUnwrapped, count: count) {
    return ScanContext.skimRefused(skimContext(pointer))
  }
  if skimContext(pointer).pointee.skim.key(length: count) { return 1 }
  return ScanContext.skimRefused(skimContext(pointer))
}

// swift-format-ignore: AlwaysUseLowerCamelCase
@c(cblattachments_skim_open) @inline(__always)
func cblattachments_skim_open(_ pointer: UnsafeMutableRawPointer?) -> Int32 {
  if skimContext(pointer).pointee.skim.open() { return 1 }
  return ScanContext.skimRefused(skimContext(pointer))
}

// swift-format-ignore: AlwaysUseLowerCamelCase
@c(cblattachments_skim_close) @inline(__always)
func cblattachments_skim_close(_ pointer: UnsafeMutableRawPointer?) -> Int32 {
  if skimContext(pointer).pointee.skim.close() { return 1 }
  return ScanContext.skimEnded(skimContext(pointer))
}
