import Glibc
import LegacyAttachments

/// The `--progress` line on standard error: drawn only when standard error is a terminal, at
/// most a few times a second, and cleared at the end.
final class ProgressLine {
  private let enabled = SystemFileDescriptor.standardError.isTerminal
  private var input = ""
  private var size: Int? = nil
  private var started = 0.0
  private var lastDrawn = 0.0
  private var drawn = false

  func begin(input name: String, descriptor: SystemFileDescriptor) {
    input = name
    size = (try? descriptor.status()).flatMap { $0.isRegularFile ? Int($0.size) : nil }
    started = monotonicSeconds()
    lastDrawn = 0
  }

  func update(bytes: Int, statistics: ConversionStatistics) {
    guard enabled else { return }
    let now = monotonicSeconds()
    guard now - lastDrawn >= 0.25 else { return }
    lastDrawn = now
    let elapsed = max(now - started, 0.001)
    let rate = Double(bytes) / elapsed
    var line =
      "\(input): \(formatted(Double(bytes) / 1_048_576, digits: 1)) MiB, "
      + "\(statistics.documents) documents, \(formatted(rate / 1_048_576, digits: 1)) MiB/s"
    if let size, size > 0 {
      let percent = min(100, Double(bytes) * 100 / Double(size))
      let left = rate > 0 ? Double(size - bytes) / rate : 0
      line += ", \(formatted(percent, digits: 0))%"
      if elapsed >= 0.25 { line += ", \(formatted(left, digits: 0)) s left" }
    }
    printRaw("\r\u{1B}[K" + line)
    drawn = true
  }

  func clear() {
    guard drawn else { return }
    printRaw("\r\u{1B}[K")
    drawn = false
  }

  private func printRaw(_ text: String) {
    var text = text
    text.withUTF8 { _ = SystemFileDescriptor.standardError.writeAll(UnsafeRawBufferPointer($0)) }
  }
}
