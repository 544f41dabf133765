/// The spelling among `words` closest to `typed` (within a third of its length), for a "did you
/// mean" after a value that is none of them.
func closest(to typed: String, among words: [String]) -> String? {
  let best = words.map { (editDistance(Array(typed), Array($0)), $0) }.min { $0.0 < $1.0 }
  guard let best, best.0 <= max(1, best.1.count / 3) else { return nil }
  return best.1
}

/// The Damerau-Levenshtein distance (adjacent swaps count one) between two spellings.
func editDistance(_ a: [Character], _ b: [Character]) -> Int {
  if a.isEmpty { return b.count }
  if b.isEmpty { return a.count }
  var previous2 = [Int](repeating: 0, count: b.count + 1)
  var previous = Array(0...b.count)
  var current = [Int](repeating: 0, count: b.count + 1)
  for i in 1...a.count {
    current[0] = i
    for j in 1...b.count {
      let cost = a[i - 1] == b[j - 1] ? 0 : 1
      current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
      if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
        current[j] = min(current[j], previous2[j - 2] + 1)
      }
    }
    (previous2, previous, current) = (previous, current, previous2)
  }
  return previous[b.count]
}

/// Splits bundled short flags as getopt does: `-kj2` is `-k -j2`, `-kj 2` is `-k -j 2`. The
/// value of an option (`--revpos -5`, `-j -1`) and everything after `--` stay as they are.
func unbundledShortFlags(_ arguments: [String]) -> [String] {
  var result: [String] = []
  var optionsEnded = false
  var valueNext = false
  for argument in arguments {
    if valueNext {
      result.append(argument)
      valueNext = false
      continue
    }
    if optionsEnded || argument == "-" || !argument.hasPrefix("-") {
      result.append(argument)
      continue
    }
    if argument == "--" {
      optionsEnded = true
      result.append(argument)
      continue
    }
    if argument.hasPrefix("--") || argument.count == 2 {
      result.append(argument)
      valueNext = !argument.contains("=") && OptionSpec.named(argument)?.takesValue == true
      continue
    }
    var letters = argument.dropFirst()
    while let letter = letters.first {
      letters = letters.dropFirst()
      guard let spec = OptionSpec.named("-\(letter)") else {
        result.append("-\(letter)")  // unknown: the parser says so
        break
      }
      if spec.takesValue {
        result.append("-\(letter)" + letters)
        valueNext = letters.isEmpty
        break
      }
      result.append("-\(letter)")
    }
  }
  return result
}
