/// Where a `-j` batch starts in the structure of its input: guessed by the reader from the bytes
/// around the cut, and known once the batch before it has been converted. A batch converted from
/// the wrong place is converted again from the right one, so the guess never changes a result.
enum BatchStart: Equatable, Sendable {
  /// Between input values: a line of NDJSON, a new response body.
  case topLevel
  /// `--format list`: after the input's array has closed (anything more is an error).
  case afterList
  /// Inside one envelope that spans batches, among the elements of the first array the path
  /// iterates; `anyWritten` says whether an element of it has been written (the next one then
  /// needs a comma in the output).
  case betweenElements(ElementsPlace, anyWritten: Bool)
}

/// Where among an array's elements the input is, as yajl sees it.
enum ElementsPlace: Equatable, Sendable {
  /// Just after the `[`.
  case afterOpen
  /// Just after an element (a comma or the `]` comes next).
  case afterElement
  /// Just after a comma.
  case afterComma

  /// The place after the input's last byte that is not white space, `last`.
  init(after last: UInt8) {
    switch last {
    case UInt8(ascii: "["): self = .afterOpen
    case UInt8(ascii: ","): self = .afterComma
    default: self = .afterElement
    }
  }
}
