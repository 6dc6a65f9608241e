// deflate_pieces(): zlib's deflate loop, shared by zip members and gzip files.
#include "io/deflate.hpp"

#include <algorithm>

#include <zlib.h>

#include <tapeflow/core/error.hpp>

namespace tapeflow::io {

std::string deflate_pieces(const std::vector<std::string_view>& pieces, DeflateFraming framing) {
    // zlib's window bits: negative for a raw stream, 16 + 15 for a gzip header and trailer.
    const int window_bits = framing == DeflateFraming::raw ? -15 : 16 + 15;
    z_stream z{};
    if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, window_bits, 8, Z_DEFAULT_STRATEGY) !=
        Z_OK)
        throw errors::ResourceExhaustedError("zlib: deflateInit2 failed");
    std::string out;
    char buf[1 << 16];
    for (std::size_t i = 0; i <= pieces.size(); ++i) {
        std::string_view p = i < pieces.size() ? pieces[i] : std::string_view();
        const bool last = i == pieces.size();
        int rc = Z_OK;
        do {
            const std::size_t n = std::min<std::size_t>(p.size(), 1u << 30);
            z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(p.data()));
            z.avail_in = static_cast<uInt>(n);
            do {
                z.next_out = reinterpret_cast<Bytef*>(buf);
                z.avail_out = sizeof buf;
                rc = deflate(&z, last ? Z_FINISH : Z_NO_FLUSH);
                out.append(buf, sizeof buf - z.avail_out);
            } while (z.avail_out == 0 || (last && rc != Z_STREAM_END));
            p.remove_prefix(n);
        } while (!p.empty());
    }
    deflateEnd(&z);
    return out;
}

}  // namespace tapeflow::io
