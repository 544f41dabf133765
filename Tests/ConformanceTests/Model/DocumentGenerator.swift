import TestSupport

// A seeded, deterministic generator of random Couchbase-like documents for the property and
// differential tests: nested objects and arrays, blobs anywhere (also inside blobs and under
// awkward keys), legacy `_attachments`, `_rev`, escapes and number literals that must survive
// byte for byte. Documents are built as `RawJSON` trees whose tokens are written directly (never
// taken from the engine) and serialised compactly.

struct DocumentGenerator {
  struct Options {
    /// Whether documents may have a top-level `_attachments` member.
    var attachments = true
    /// Whether some documents are not objects (arrays, strings, numbers, literals).
    var nonObjects = true
    /// Whether some documents have two top-level `_attachments` members.
    var duplicateAttachments = true
    /// Whether some `data` members are not strings (Couchbase Lite writes base64 strings).
    var nonStringData = true
  }

  var random: SplitMix64
  var options: Options

  init(seed: UInt64, options: Options = Options()) {
    random = SplitMix64(seed: seed)
    self.options = options
  }

  // MARK: Pools

  /// Keys (decoded) that stress naming, escaping and the rules that look at keys.
  static let awkwardKeys: [String] = [
    "a", "b", "photos", "thumbnail", "gallery", "file", "attachments", "x", "a.b", "a[0]", "[", "]",
    ".", "..", "back\\slash", "\\", "sl/ash", "/", "til~de", "~", "~1", "~0/", "qu\"ote", "\"",
    "tab\there", "line\nbreak", "\u{1}", "\u{1F}", "a\u{0}b", "\u{7F}", "é", "日本語", "😀", "a😀b",
    "$", "$.x", "$[0]", "", " ", "blob_", "@type", "@Type", "digest", "stub", "revpos", "length",
    "content_type", "_attachments", "_rev", "_id", "\u{2028}", "\u{FEFF}",
  ]

  static let words = [
    "alpha", "beta", "gamma", "delta", "image", "doc", "item", "k", "value", "z9",
  ]

  /// Decoded digests; a small pool so that blobs and legacy entries often share one.
  static let digests: [String] = [
    "sha1-AAAAAAAAAAAAAAAAAAAAAAAAAAA=", "sha1-2jmj7l5rSw0yVb/vlWAYkK/YBwk=", "sha1-B/é+\"q\"",
    "md5-1B2M2Y8AsgTpgAmY7PhCfg==", "", "sha1-\u{1}\n", "sha1-😀",
  ]

  static let numbers: [String] = [
    "0", "-0", "-0.0", "1.50", "1e400", "-1E-400", "12345678901234567890123", "3.14159", "1e+2",
    "0.0000001", "42", "-17", "2.5E3", "100000000000000000000000000000.000000000000000001",
  ]

  static let upperHex = Array("0123456789ABCDEF".utf8)
  static let lowerHex = Array("0123456789abcdef".utf8)

  static let lengths = ["0", "1", "1234", "20971521", "1.5e3", "-1"]

  static let contentTypes = ["image/jpeg", "text/plain; charset=utf-8", "application/octet-stream"]

  static let legacyNames: [String] = [
    "photo.jpg", "$.a", "$[0]", "$.photos.thumbnail", "$.a\\.b", "$", "$x", "$$.a", "blob_",
    "blob_/a", "blob_/photos/gallery/2", "blob", "Blob_/a", "a", "", "$.é", "blob_/~1",
    "blob_1", "blob_27", "blob_1a", "blob_notes.txt", "blob_/~2", "blob_/", "$.", "$..a", "$[]",
    "$[x]", "$.a\\x", "$.a\\.b[3]", "$[0", "$.a[1].b",
  ]

  /// Attachment bytes as base64 (`data`), some equal, one empty.
  static let bodies = ["aGVsbG8=", "aGVsbG8=", "aGVsbG8=", "d29ybGQ=", ""]

  // MARK: Documents

  /// One compact document.
  mutating func document() -> [UInt8] { documentTree().serialized() }

  /// One document as a tree (objects mostly; sometimes not, when allowed).
  mutating func documentTree() -> RawJSON {
    if options.nonObjects && random.percent(3) {
      switch random.below(5) {
      case 0: return .array((0..<random.below(3)).map { _ in value(depth: 1) })
      case 1: return .string(string(randomText()))
      case 2: return .scalar(Array(random.pick(Self.numbers).utf8))
      case 3: return .scalar(Array(random.pick(["true", "false", "null"]).utf8))
      default: return .array([blob(depth: 1)])
      }
    }
    var members: [RawMember] = []
    if random.percent(50) {
      members.append(
        RawMember(key: key("_id"), value: .string(string("doc-\(random.below(1000))"))))
    }
    if random.percent(35) { members.append(RawMember(key: key("_rev"), value: revision())) }
    if random.percent(3) {
      members.append(
        RawMember(key: key("@type"), value: .string(string(random.percent(50) ? "blob" : "doc"))))
      if random.percent(50) { members.append(RawMember(key: key("digest"), value: digestValue())) }
    }
    for _ in 0..<random.below(7) {
      members.append(RawMember(key: key(randomKey(topLevel: true)), value: value(depth: 1)))
    }
    if random.percent(2) { members.append(RawMember(key: key("_rev"), value: revision())) }
    if random.below(200) == 0 {
      // A deep chain of objects and arrays with a blob at the bottom.
      var value = blob(depth: 6)
      for _ in 0..<(30 + random.below(90)) {
        value =
          random.percent(50)
          ? .array([.scalar(Array("0".utf8)), value])
          : .object([RawMember(key: key(randomKey(topLevel: false)), value: value)])
      }
      members.append(RawMember(key: key("deep"), value: value))
    }
    if random.percent(2) {
      // Many blobs in one document (more than 32: engines may switch to another digest lookup).
      let blobs = (0..<(33 + random.below(30))).map { _ in blob(depth: 5) }
      members.append(RawMember(key: key(randomKey(topLevel: true)), value: .array(blobs)))
    }
    members.shuffle(using: &random)
    if options.attachments && random.percent(6) {
      // As `GET /db/doc?attachments=true` returns a pushed document: a blob and its entry, the
      // entry with the bytes, the blob with the same bytes or other ones or none.
      let digest = RawMember(key: key("digest"), value: .string(string(random.pick(Self.digests))))
      let body = random.pick(Self.bodies)
      var blob = [RawMember(key: key("@type"), value: .string(string("blob"))), digest]
      if random.percent(60) {
        blob.append(RawMember(key: key("data"), value: .string(string(body))))
      }
      members.append(RawMember(key: key("file"), value: .object(blob)))
      let data: RawJSON =
        random.percent(15)
        ? .scalar(Array("17".utf8))
        : .string(string(random.percent(70) ? body : random.pick(Self.bodies)))
      let entry = RawJSON.object([digest, RawMember(key: key("data"), value: data)])
      members.append(
        RawMember(
          key: key("_attachments"), value: .object([RawMember(key: key("$.file"), value: entry)])))
      return .object(members)
    }
    if options.attachments && random.percent(35) {
      let count = options.duplicateAttachments && random.percent(6) ? 2 : 1
      for _ in 0..<count {
        let position = random.below(members.count + 1)
        members.insert(
          RawMember(key: key("_attachments"), value: attachments()), at: position)
      }
    }
    return .object(members)
  }

  /// A `_rev` value: usually `N-hash`, sometimes something without a usable generation.
  mutating func revision() -> RawJSON {
    switch random.below(12) {
    case 0:
      return .string(string(random.pick(["abc", "0-x", "7", "-3-x", "12a-x", "", "-", "5--"])))
    case 1: return .scalar(Array(random.pick(["5", "null", "true"]).utf8))
    case 2: return .string(string("000\(random.below(20) + 1)-cafe"))
    case 3: return .string(string("\(random.below(1_000_000_000) + 1)-\(random.below(1 << 30))"))
    default: return .string(string("\(random.below(40) + 1)-\(random.below(1 << 20))"))
    }
  }

  /// A document over 64 KiB (larger than one default input chunk): an ordinary document with a
  /// long string, and blobs after it.
  mutating func largeDocument() -> RawJSON {
    var members = documentTree().members ?? []
    let unit = Array(random.pick(["abcdefgh", "é日😀", "\\n\\u00e9\\/"]).utf8)
    var text: [UInt8] = [UInt8(ascii: "\"")]
    let target = 65_536 + random.below(120_000)
    while text.count < target { text += unit }
    text.append(UInt8(ascii: "\""))
    members.insert(
      RawMember(key: key("big"), value: .string(RawString(token: text))),
      at: random.below(members.count + 1))
    members.append(RawMember(key: key("after"), value: .array((0..<3).map { _ in blob(depth: 2) })))
    return .object(members)
  }

  /// `document` made malformed: truncated, or with a stray byte inserted.
  mutating func corrupt(_ document: [UInt8]) -> [UInt8] {
    var bytes = document
    if random.percent(40) {
      bytes.removeLast(1 + random.below(max(1, bytes.count - 1)))
    } else {
      let stray: [UInt8] = [
        UInt8(ascii: "}"), UInt8(ascii: "]"), UInt8(ascii: ","), UInt8(ascii: ":"),
        UInt8(ascii: "x"),
        UInt8(ascii: "\""), UInt8(ascii: "\\"), 0x01, 0xFF, 0xC3,
      ]
      bytes.insert(random.pick(stray), at: random.below(bytes.count + 1))
    }
    return bytes
  }

  /// The value of a top-level `_attachments` member.
  mutating func attachments() -> RawJSON {
    if random.percent(15) {
      switch random.below(5) {
      case 0: return .array([blob(depth: 2), value(depth: 2)])
      case 1: return .string(string("none"))
      case 2: return .scalar(Array("null".utf8))
      case 3: return .scalar(Array(random.pick(Self.numbers).utf8))
      default: return .array([])
      }
    }
    var entries: [RawMember] = []
    for _ in 0..<random.below(5) {
      let name = random.percent(70) ? random.pick(Self.legacyNames) : randomKey(topLevel: false)
      entries.append(RawMember(key: key(name), value: legacyEntry()))
    }
    return .object(entries)
  }

  /// One legacy attachment: usually an object with a digest from the pool.
  mutating func legacyEntry() -> RawJSON {
    switch random.below(10) {
    case 0: return random.percent(50) ? .string(string("x")) : .scalar(Array("null".utf8))
    case 1: return .array([.scalar(Array("1".utf8))])
    case 2: return blob(depth: 3)
    default:
      var members: [RawMember] = []
      if random.percent(85) { members.append(RawMember(key: key("digest"), value: digestValue())) }
      if random.percent(60) {
        members.append(
          RawMember(key: key("length"), value: .scalar(Array(random.pick(Self.lengths).utf8))))
      }
      if random.percent(40) {
        members.append(
          RawMember(
            key: key("content_type"), value: .string(string(random.pick(Self.contentTypes)))))
      }
      if random.percent(30) {
        members.append(RawMember(key: key("stub"), value: .scalar(Array("true".utf8))))
      }
      if random.percent(30) {
        members.append(
          RawMember(key: key("revpos"), value: .scalar(Array("\(random.below(9) + 1)".utf8))))
      }
      if random.percent(15) {
        members.append(RawMember(key: key(randomKey(topLevel: false)), value: value(depth: 4)))
      }
      if random.percent(10) { members.append(RawMember(key: key("data"), value: dataValue())) }
      if random.percent(5) { members.append(RawMember(key: key("digest"), value: digestValue())) }
      members.shuffle(using: &random)
      return .object(members)
    }
  }

  /// A digest value: usually a string from the pool (escaped differently each time), sometimes not
  /// a string at all.
  mutating func digestValue() -> RawJSON {
    if random.percent(6) {
      return random.percent(50)
        ? .scalar(Array(random.pick(["null", "17", "true"]).utf8))
        : .object([RawMember(key: key("sha1"), value: .string(string("x")))])
    }
    return .string(string(random.pick(Self.digests)))
  }

  /// A `data` value: usually base64 bytes from the pool (escaped differently each time), now and
  /// then not a string.
  mutating func dataValue() -> RawJSON {
    if options.nonStringData && random.percent(10) {
      return .scalar(Array(random.pick(["null", "17", "true"]).utf8))
    }
    return .string(string(random.pick(Self.bodies)))
  }

  /// A random value; containers get rarer with depth.
  mutating func value(depth: Int) -> RawJSON {
    let containers = depth < 6
    switch random.below(containers ? 20 : 8) {
    case 0, 1: return .string(string(randomText()))
    case 2: return .scalar(Array(random.pick(Self.numbers).utf8))
    case 3: return .scalar(Array("\(random.below(100_000))".utf8))
    case 4: return .scalar(Array(random.pick(["true", "false", "null"]).utf8))
    case 5, 6: return .string(string(random.pick(Self.words)))
    case 7: return .string(string(random.pick(Self.digests)))
    case 8, 9, 10, 11:
      return blob(depth: depth)
    case 12: return notQuiteBlob(depth: depth)
    case 13, 14, 15:
      return .array((0..<random.below(5)).map { _ in value(depth: depth + 1) })
    default:
      var members: [RawMember] = []
      for _ in 0..<random.below(5) {
        members.append(
          RawMember(key: key(randomKey(topLevel: false)), value: value(depth: depth + 1)))
      }
      return .object(members)
    }
  }

  /// A blob: `@type` "blob" (not always first, sometimes escaped), usually a digest, metadata,
  /// sometimes `stub`/`revpos`, extra members that may hold further blobs.
  mutating func blob(depth: Int) -> RawJSON {
    var members: [RawMember] = []
    members.append(RawMember(key: key("@type"), value: .string(string("blob"))))
    switch random.below(20) {
    case 0: break  // no digest: a warning in push, never an entry
    case 1: members.append(RawMember(key: key("digest"), value: .scalar(Array("null".utf8))))
    case 2:
      // Duplicate digests: the last one counts.
      members.append(RawMember(key: key("digest"), value: digestValue()))
      members.append(RawMember(key: key("digest"), value: digestValue()))
    default: members.append(RawMember(key: key("digest"), value: digestValue()))
    }
    if random.percent(60) {
      members.append(
        RawMember(key: key("length"), value: .scalar(Array(random.pick(Self.lengths).utf8))))
    }
    if random.percent(50) {
      members.append(
        RawMember(key: key("content_type"), value: .string(string(random.pick(Self.contentTypes)))))
    }
    if random.percent(10) {
      members.append(RawMember(key: key("stub"), value: .scalar(Array("true".utf8))))
    }
    if random.percent(10) {
      members.append(
        RawMember(key: key("revpos"), value: .scalar(Array("\(random.below(9) + 1)".utf8))))
    }
    if random.percent(10) { members.append(RawMember(key: key("data"), value: dataValue())) }
    if random.percent(4) {
      // A second `@type` that is not "blob": the object is a blob all the same.
      members.append(RawMember(key: key("@type"), value: .string(string("other"))))
    }
    if depth < 6 {
      for _ in 0..<(random.percent(25) ? random.below(3) + 1 : 0) {
        members.append(
          RawMember(key: key(randomKey(topLevel: false)), value: value(depth: depth + 1)))
      }
    }
    if random.percent(70) {
      // Keep `@type` first most of the time, but not always.
      let first = members.removeFirst()
      members.shuffle(using: &random)
      members.insert(first, at: 0)
    } else {
      members.shuffle(using: &random)
    }
    return .object(members)
  }

  /// Objects that look like blobs but are not (so the walk must descend into them).
  mutating func notQuiteBlob(depth: Int) -> RawJSON {
    let type: RawJSON
    switch random.below(6) {
    case 0: type = .string(string("Blob"))
    case 1: type = .string(string("blob "))
    case 2: type = .scalar(Array("1".utf8))
    case 3: type = .object([RawMember(key: key("@type"), value: .string(string("blob")))])
    case 4: type = .string(string("blobs"))
    default: type = .array([.string(string("blob"))])
    }
    let typeKey = random.percent(80) ? "@type" : random.pick(["@Type", "type", "@type "])
    var members = [
      RawMember(key: key(typeKey), value: type),
      RawMember(key: key("digest"), value: digestValue()),
    ]
    if depth < 6 && random.percent(50) {
      members.append(RawMember(key: key(randomKey(topLevel: false)), value: blob(depth: depth + 1)))
    }
    members.shuffle(using: &random)
    return .object(members)
  }

  // MARK: Keys and strings

  mutating func randomKey(topLevel: Bool) -> String {
    let key: String
    switch random.below(10) {
    case 0, 1, 2, 3: key = random.pick(Self.words)
    case 4: key = random.pick(Self.awkwardKeys) + random.pick(Self.awkwardKeys)
    default: key = random.pick(Self.awkwardKeys)
    }
    // A top-level `_attachments` is placed on purpose, not by chance.
    return topLevel && key == "_attachments" ? "attachments" : key
  }

  /// Random text with escapes worth preserving.
  mutating func randomText() -> String {
    var text = ""
    for _ in 0..<random.below(8) {
      text += random.pick([
        "a", "Z", " ", "é", "ü", "日", "😀", "𝄞", "\"", "\\", "/", "\n", "\t", "\u{0}", "\u{8}",
        "\u{C}", "\r", "\u{1B}", "\u{7F}", "\u{2028}", "\u{FFFD}", "word", "~", ".", "[",
      ])
    }
    return text
  }

  /// A key token for `text`, escaped at random.
  mutating func key(_ text: String) -> RawString { string(text) }

  /// A string token for `text`: mandatory escapes always, and with some probability optional
  /// ones (`\u00e9`, `\u00E9`, `\/`, surrogate pairs, `\u0040`), sometimes a lone surrogate.
  mutating func string(_ text: String) -> RawString {
    let optional = random.percent(30) ? random.below(60) + 10 : 0
    let loneSurrogate = random.percent(1)
    let utf8 = Array(text.utf8)
    if optional == 0 && !loneSurrogate
      && !utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }
      )
    {
      return RawString(token: [UInt8(ascii: "\"")] + utf8 + [UInt8(ascii: "\"")])
    }
    var token = Array("\"".utf8)
    func hex(_ unit: UInt32, upper: Bool) -> [UInt8] {
      let digits = upper ? Self.upperHex : Self.lowerHex
      return [
        UInt8(ascii: "\\"), UInt8(ascii: "u"), digits[Int(unit >> 12 & 0xF)],
        digits[Int(unit >> 8 & 0xF)], digits[Int(unit >> 4 & 0xF)], digits[Int(unit & 0xF)],
      ]
    }
    for scalar in text.unicodeScalars {
      let value = scalar.value
      let escape = random.below(100) < optional
      let upper = random.percent(30)
      switch value {
      case 0x22:
        token += escape ? hex(value, upper: upper) : Array("\\\"".utf8)
      case 0x5C:
        token += escape ? hex(value, upper: upper) : Array("\\\\".utf8)
      case 0x2F:
        token +=
          escape ? (random.percent(50) ? Array("\\/".utf8) : hex(value, upper: upper)) : [0x2F]
      case 0x08, 0x0C, 0x0A, 0x0D, 0x09:
        let short: UInt8 =
          switch value {
          case 0x08: UInt8(ascii: "b")
          case 0x0C: UInt8(ascii: "f")
          case 0x0A: UInt8(ascii: "n")
          case 0x0D: UInt8(ascii: "r")
          default: UInt8(ascii: "t")
          }
        token += escape ? hex(value, upper: upper) : [UInt8(ascii: "\\"), short]
      case 0..<0x20:
        token += hex(value, upper: upper)
      case 0x10000...:
        if escape {
          let offset = value - 0x10000
          token +=
            hex(0xD800 + (offset >> 10), upper: upper)
            + hex(0xDC00 + (offset & 0x3FF), upper: upper)
        } else {
          token += Array(String(scalar).utf8)
        }
      default:
        token += escape ? hex(value, upper: upper) : Array(String(scalar).utf8)
      }
    }
    if loneSurrogate {
      // A lone surrogate: valid JSON syntax, kept as written.
      token += hex(random.pick([0xD800, 0xDBFF, 0xDC00, 0xDFFF]), upper: random.percent(50))
    }
    token += Array("\"".utf8)
    return RawString(token: token)
  }
}
