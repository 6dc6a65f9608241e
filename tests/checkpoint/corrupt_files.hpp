// Building checkpoint files byte by byte for the corruption tests and the fuzzer: a valid reference
// checkpoint in memory, and files with a hand-written header.
#pragma once

#include <cstdint>
#include <string>

#include <tapeflow/tapeflow.hpp>

#include "io/crc32c.hpp"

namespace ckpt_test {

/// 8-byte little-endian length + `json` + `data` (no padding: the JSON is used as given).
inline std::string safetensors_bytes(const std::string& json, const std::string& data) {
    std::string out(8, '\0');
    const uint64_t n = json.size();
    for (int i = 0; i < 8; ++i)
        out[static_cast<std::size_t>(i)] = static_cast<char>((n >> (8 * i)) & 0xff);
    return out + json + data;
}

/// CRC32C in the header's notation.
inline std::string crc_hex(const std::string& bytes) {
    char buf[9];
    std::snprintf(buf, sizeof buf, "%08x", tapeflow::io::crc32c(bytes));
    return buf;
}

}  // namespace ckpt_test
