// zlib (Debian zlib1g-dev), for gzip as CouchDB writes it: CouchDB stores compressible
// attachments gzip-compressed and labels them with the md5 of that stream. `deflateInit2` and
// `inflateInit2` are macros, which Swift cannot call; the wrappers below call them.
#ifndef CZLIB_SHIM_H
#define CZLIB_SHIM_H

#include <zlib.h>

/// `deflateInit2` with a gzip wrapper (window bits 16 + 15), memory level 8 and the default
/// strategy: what Erlang's `zlib:deflateInit(Z, Level, deflated, 31, 8, default)` asks for.
static inline int czlib_deflate_init_gzip(z_stream *stream, int level) {
  return deflateInit2(stream, level, Z_DEFLATED, 16 + 15, 8, Z_DEFAULT_STRATEGY);
}

/// `inflateInit2` for a gzip stream (window bits 16 + 15).
static inline int czlib_inflate_init_gzip(z_stream *stream) {
  return inflateInit2(stream, 16 + 15);
}

#endif
