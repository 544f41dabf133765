// One call per document against the stream API, on the same documents (issue: "one call per
// document reaches at least 0.9x of the stream API's throughput on 400-byte documents").
//
//   swift build -c release --product PerDocumentBenchmark
//   .build/release/PerDocumentBenchmark [FILE.ndjson|-] [ROUNDS] [none|stream|converter|fresh]
//
// With a third argument only that way runs, once, for valgrind --tool=callgrind, whose
// instruction counts stay stable on a busy machine (`-` for the documents made here); `none`
// only makes the documents, the baseline to subtract.
//
// Without a file, 20,000 documents of about 400 bytes are made here (a user profile with an
// avatar blob and a photo gallery). Each way runs ROUNDS times (default 5); the best round
// counts. Timings are wall-clock: run it on a quiet machine, or read the instruction counts
// with valgrind --tool=callgrind (bench/run.sh does).
import LegacyAttachments

#if canImport(Glibc)
import Glibc
#endif

/// A message on standard error (write(2): the C `stderr` global is not concurrency-safe).
func complain(_ message: String) {
  var text = Array(("PerDocumentBenchmark: " + message + "\n").utf8)
  _ = write(2, &text, text.count)
}

func readFile(_ path: String) -> [UInt8] {
  guard let file = fopen(path, "rb") else {
    complain("cannot open \(path)")
    exit(2)
  }
  defer { fclose(file) }
  var bytes: [UInt8] = []
  var buffer = [UInt8](repeating: 0, count: 1 << 16)
  while true {
    let count = fread(&buffer, 1, buffer.count, file)
    if count == 0 { break }
    bytes += buffer[0..<count]
  }
  return bytes
}

func madeDocuments() -> [[UInt8]] {
  (0..<20_000).map { index in
    Array(
      """
      {"_id":"user::\(index)","_rev":"\(index % 9 + 1)-a1b2c3d4e5f6","type":"user","name":"User number \(index)",\
      "email":"user\(index)@example.com","avatar":{"@type":"blob","content_type":"image/png",\
      "digest":"sha1-2VxL+x3YDg2ptY5dND4U6DrMDhY=","length":\(5000 + index)},\
      "photos":[{"@type":"blob","content_type":"image/jpeg","digest":"sha1-kJ1o5DPc7l2i1J0XGCa3Ek1KzU0=",\
      "length":48211}],"score":12345678901234567890123,"tags":["a","b","c"]}
      """.utf8)
  }
}

let arguments = CommandLine.arguments
let documents: [[UInt8]] =
  arguments.count > 1 && arguments[1] != "-"
  ? readFile(arguments[1]).split(separator: 0x0A).map { Array($0) } : madeDocuments()
let rounds = arguments.count > 2 ? Int(arguments[2]) ?? 5 : 5
let stream = Array(documents.joined(separator: [0x0A]))
let options = ConversionOptions(mode: .push, naming: .litecore)
let meanSize = stream.count / max(1, documents.count)

func best(_ body: () -> Int) -> (seconds: Double, check: Int) {
  var best = Double.infinity
  var check = 0
  let clock = ContinuousClock()
  for _ in 0..<rounds {
    let elapsed = clock.measure { check = body() }
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    best = min(best, seconds)
  }
  return (best, check)
}

if arguments.count > 3 {
  let converter = try! DocumentConverter(options: options)
  var total = 0
  switch arguments[3] {
  case "none": total = stream.count  // the documents made and joined: the baseline to subtract
  case "stream": total = CBLAttachments.convertStream(stream, options: options).output.count
  case "converter":
    for document in documents { total += (try? converter.convert(document))?.bytes.count ?? 0 }
  default:
    for document in documents {
      total += (try? CBLAttachments.convert(document, options: options))?.bytes.count ?? 0
    }
  }
  print("\(arguments[3]): \(total) bytes of output")
  exit(0)
}

let streamed = best {
  CBLAttachments.convertStream(stream, options: options).output.count
}
let converter = try! DocumentConverter(options: options)
let reused = best {
  var total = 0
  for document in documents { total += ((try? converter.convert(document))?.bytes.count ?? 0) + 1 }
  return total
}
let fresh = best {
  var total = 0
  for document in documents {
    total += ((try? CBLAttachments.convert(document, options: options))?.bytes.count ?? 0) + 1
  }
  return total
}
guard reused.check == streamed.check && fresh.check == streamed.check else {
  complain("the three ways wrote different amounts of output")
  exit(1)
}

/// `value` with two decimals.
func fixed(_ value: Double) -> String {
  let hundredths = Int((value * 100).rounded())
  let fraction = hundredths % 100
  return "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction)"
}

func line(_ name: String, _ result: (seconds: Double, check: Int)) {
  let perDocument = result.seconds / Double(documents.count) * 1e6
  let ratio = streamed.seconds / result.seconds
  print(
    name + String(repeating: " ", count: max(1, 36 - name.count))
      + "\(fixed(perDocument)) µs/document  \(fixed(ratio))x the stream")
}
print(
  "\(documents.count) documents of \(meanSize) bytes on average, push --naming litecore, best of \(rounds)"
)
line("stream (convertStream)", streamed)
line("DocumentConverter.convert", reused)
line("CBLAttachments.convert (fresh)", fresh)
