// zlib's init calls are macros that pass the library's version and stream size, which Swift cannot
// import: these inline wrappers give them fixed signatures, for the gzip format (window bits + 16).
#ifndef HERALD_CZLIB_SHIM_H
#define HERALD_CZLIB_SHIM_H

#include <zlib.h>

static inline int herald_deflate_init_gzip(z_stream *stream, int level) {
    return deflateInit2(stream, level, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY);
}

static inline int herald_inflate_init_gzip(z_stream *stream) {
    return inflateInit2(stream, 15 + 16);
}

#endif
