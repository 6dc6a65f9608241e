// One deflate stream over several pieces of memory, in the framing a caller's file format wants:
// raw (zip members) or gzip (the profiler's .trace.json.gz).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tapeflow::io {

enum class DeflateFraming { raw, gzip };

/// The pieces, in order, deflated at zlib's default level as one stream.
std::string deflate_pieces(const std::vector<std::string_view>& pieces, DeflateFraming framing);

}  // namespace tapeflow::io
