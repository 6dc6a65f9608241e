// Helpers of the CPU index-copy kernels (slicing_cpu.cpp, gather_cpu.cpp): parallel grain sizes,
// byte copies of one element, and TensorFlow's way of naming a bad index's position.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace tapeflow::cpu::index_copy {

inline constexpr int64_t kGrainBytes = 1 << 17;  // bytes per chunk before a copy loop goes parallel
inline constexpr int64_t kGrain = 1 << 15;       // elements per chunk for the typed loops

using Dims = std::vector<int64_t>;

inline int64_t product(const Dims& dims, std::size_t from, std::size_t to) {
    int64_t n = 1;
    for (std::size_t i = from; i < to; ++i)
        n *= dims[i];
    return n;
}

// Chunk length (in units of `unit_bytes`) that makes a parallel chunk about kGrainBytes.
inline int64_t grain_for(int64_t unit_bytes) {
    return std::max<int64_t>(1, kGrainBytes / std::max<int64_t>(unit_bytes, 1));
}

// Copies `bytes` bytes; the fixed sizes of single elements compile to one move.
inline void copy_bytes(char* dst, const char* src, std::size_t bytes) {
    switch (bytes) {
        case 1:
            *dst = *src;
            return;
        case 2:
            std::memcpy(dst, src, 2);
            return;
        case 4:
            std::memcpy(dst, src, 4);
            return;
        case 8:
            std::memcpy(dst, src, 8);
            return;
        default:
            std::memcpy(dst, src, bytes);
    }
}

// "[1,2]" for flat position `flat` of a tensor of `dims` ("" for a scalar), as TensorFlow's
// SliceDebugString names a bad index.
inline std::string position(const Dims& dims, int64_t flat) {
    if (dims.empty()) return "";
    Dims coords(dims.size());
    for (std::size_t d = dims.size(); d-- > 0;) {
        coords[d] = dims[d] == 0 ? 0 : flat % dims[d];
        flat = dims[d] == 0 ? 0 : flat / dims[d];
    }
    return fmt::format("[{}]", fmt::join(coords, ","));
}

}  // namespace tapeflow::cpu::index_copy
