/// What the document path found in an input, or in the pieces of one converted so far: for the
/// report of an input in which it found no document (``DocumentHandler/noDocument(_:findings:)``).
struct PathFindings: BitwiseCopyable, Equatable {
  /// Documents found.
  var documents = 0
  /// Whether there was an input value at all (where the path's first step applies).
  var sawInputValue = false
  /// Whether a value below an input value was on the path: the path's first step matched (a
  /// member it names, or an array it iterates). An input where it never did is likely not the
  /// envelope the path describes, such as documents one after another read with
  /// `--format changes`; the report says so.
  var pathEntered = false

  /// Whether there were input values and the path's first step matched none of them.
  var firstStepUnmatched: Bool { sawInputValue && !pathEntered }

  /// Adds what another piece of the input found.
  mutating func add(_ other: PathFindings) {
    documents += other.documents
    sawInputValue = sawInputValue || other.sawInputValue
    pathEntered = pathEntered || other.pathEntered
  }
}
