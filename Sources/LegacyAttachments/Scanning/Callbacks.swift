import CYajl

@inline(__always)
private func state(_ context: UnsafeMutableRawPointer?) -> UnsafeMutablePointer<ScanState> {
  context.unsafelyUnwrapped.assumingMemoryBound(to: ScanState.self)
}

/// The yajl callback table. Each callback forwards to ``ScanState`` through the context pointer;
/// they live in the library (not in `main.swift`) so that they are plain C functions with no actor
/// checks, and they return 0 to stop the parse.
enum ScanCallbacks {
  static func make() -> yajl_callbacks {
    var callbacks = yajl_callbacks()
    callbacks.yajl_null = { context in
      state(context).pointee.scalar(.null) ? 1 : 0
    }
    callbacks.yajl_boolean = { context, _ in
      state(context).pointee.scalar(.boolean) ? 1 : 0
    }
    // Only `yajl_number` is set, so numbers arrive as written, never converted.
    callbacks.yajl_number = { context, text, count in
      state(context).pointee.scalar(
        .number, text: UnsafeRawPointer(text)?.assumingMemoryBound(to: UInt8.self), count: count)
        ? 1 : 0
    }
    callbacks.yajl_string = { context, bytes, count in
      state(context).pointee.scalar(.string, text: bytes, count: count) ? 1 : 0
    }
    callbacks.yajl_start_map = { context in
      state(context).pointee.open(isArray: false) ? 1 : 0
    }
    callbacks.yajl_map_key = { context, bytes, count in
      state(context).pointee.key(bytes.unsafelyUnwrapped, count: count) ? 1 : 0
    }
    callbacks.yajl_end_map = { context in
      state(context).pointee.close() ? 1 : 0
    }
    callbacks.yajl_start_array = { context in
      state(context).pointee.open(isArray: true) ? 1 : 0
    }
    callbacks.yajl_end_array = { context in
      state(context).pointee.close() ? 1 : 0
    }
    return callbacks
  }
}
