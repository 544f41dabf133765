/// Which rule, if any, cares about a member, by its container's role and its key word: the
/// rules of docs/formats.md for keys, fixed for a run by its options.
///
/// The key callback looks the answer up in a small table, so that the mix of containers in a
/// document (root, nested objects, blobs) costs no unpredictable branch per key.
struct MemberRules: ~Copyable {
  private static let words = 16
  private let table: UnsafeMutablePointer<MemberKey>

  init(options: ConversionOptions) {
    let roles = Int(Role.members.rawValue) + 1
    table = .allocate(capacity: roles * Self.words)
    let needsPointers =
      options.mode == .list || options.mode == .check || options.blobs != nil
      || options.mode == .upgrade || options.updateBlobs
    // A blob's own `stub` and `revpos` stay out of its entry when push writes them itself
    // (`litecore`), and when the entry carries the bytes instead (push with `--blobs`).
    let litecore = options.naming == .litecore || options.blobs != nil
    let carriesBodies = options.blobs != nil || options.mode == .upgrade
    // Push too: an entry it replaces may carry the attachment's bytes (a `data-dropped`
    // warning unless a blob holds the same `data`).
    let tracksData =
      options.mode == .pull || options.mode == .check || options.mode == .push || carriesBodies
      || options.updateBlobs
    let checksEntries = options.mode == .check || carriesBodies
    let upgrades = options.mode == .upgrade
    for role in 0..<roles {
      for word in 0..<Self.words {
        var meaning =
          if let role = Role(rawValue: UInt8(role)), let word = MemberKey(rawValue: UInt8(word)) {
            Self.meaning(
              of: word, in: role, needsPointers: needsPointers, litecore: litecore,
              tracksData: tracksData, checksEntries: checksEntries)
          } else {
            MemberKey.other
          }
        if upgrades && role == Int(Role.document.rawValue) && meaning == .other {
          meaning = .intoCandidate
        }
        table[role * Self.words + word] = meaning
      }
    }
  }

  deinit { table.deallocate() }

  /// What a member whose key is `word` (from ``KeyWord/identify(_:count:)``) means in `role`.
  @inline(__always)
  subscript(role: Role, word: MemberKey) -> MemberKey {
    table[Int(role.rawValue) &* Self.words &+ Int(word.rawValue)]
  }

  /// The rules themselves.
  static func meaning(
    of word: MemberKey, in role: Role, needsPointers: Bool, litecore: Bool, tracksData: Bool,
    checksEntries: Bool
  ) -> MemberKey {
    switch (role, word) {
    case (.attachments, _): .entry
    case (.members, _): .runMember
    case (.candidate, .type), (.candidate, .digest), (.entry, .digest): word
    case (.candidate, .length), (.entry, .length), (.candidate, .contentType),
      (.entry, .contentType):
      needsPointers ? word : .other
    case (.candidate, .revpos), (.candidate, .stub): litecore ? word : .other
    case (.entry, .revpos), (.entry, .stub), (.entry, .encoding), (.entry, .follows):
      checksEntries ? word : .other
    case (.candidate, .data), (.entry, .data): tracksData ? word : .other
    case (.document, .attachments), (.document, .id), (.document, .rev): word
    default: .other
    }
  }
}
