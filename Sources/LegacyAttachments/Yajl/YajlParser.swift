internal import CYajl

/// What became of bytes handed to the parser.
enum YajlStatus: Equatable {
  /// Everything was parsed (possibly waiting for more input).
  case ok
  /// A callback asked the parser to stop.
  case cancelled
  /// The input is not JSON; ``YajlParser/errorMessage(for:)`` says why.
  case error
}

/// A thin, typed owner of a `yajl_handle` set up for streams of documents.
///
/// The parser cannot be reset after an error; the owner frees it and makes a new one.
struct YajlParser: ~Copyable {
  let handle: yajl_handle

  /// Makes a parser that calls `callbacks` with `context` for every token, accepting any number
  /// of whitespace-separated top-level values. String validation stays on unless
  /// `validateUTF8` is false (the caller then validates the bytes itself).
  init(
    callbacks: UnsafePointer<yajl_callbacks>, context: UnsafeMutableRawPointer, validateUTF8: Bool
  ) {
    handle = yajl_alloc(callbacks, nil, context)
    cyajl_config_flag(handle, yajl_allow_multiple_values, 1)
    if !validateUTF8 { cyajl_config_flag(handle, yajl_dont_validate_strings, 1) }
  }

  deinit { yajl_free(handle) }

  /// Parses `count` bytes at `bytes`, calling back for each token.
  func parse(_ bytes: UnsafePointer<UInt8>, count: Int) -> YajlStatus {
    Self.status(yajl_parse(handle, bytes, count))
  }

  /// Parses `text` without calling back, to put the parser somewhere inside a value (the
  /// callbacks the parser was made with, `callbacks`, are set aside meanwhile).
  func parseWithoutCallbacks(
    _ text: UnsafeBufferPointer<UInt8>, callbacks: UnsafeMutablePointer<yajl_callbacks>
  ) -> YajlStatus {
    let saved = callbacks.pointee
    callbacks.pointee = yajl_callbacks()
    defer { callbacks.pointee = saved }
    return Self.status(yajl_parse(handle, text.baseAddress, text.count))
  }

  /// Tells the parser the input has ended.
  func complete() -> YajlStatus { Self.status(yajl_complete_parse(handle)) }

  /// Offset into the chunk last given to ``parse(_:count:)``: inside a callback, just past the
  /// current token; after an error, where the error was found.
  var bytesConsumed: Int { yajl_get_bytes_consumed(handle) }

  /// yajl's one-line description of the last error, without its "parse error: " prefix.
  func errorMessage(for chunk: UnsafePointer<UInt8>, count: Int) -> String {
    guard let raw = yajl_get_error(handle, 0, chunk, count) else { return "invalid JSON" }
    defer { yajl_free_error(handle, raw) }
    var text = String(cString: raw)
    while text.last == "\n" || text.last == " " { text.removeLast() }
    return text
  }

  private static func status(_ status: yajl_status) -> YajlStatus {
    switch status {
    case yajl_status_ok: .ok
    case yajl_status_client_canceled: .cancelled
    default: .error
    }
  }
}
