// The byte copies the shape kernels share (array_ops_cpu.cpp, transpose_cpu.cpp): rows of bytes
// moved with memcpy, split across threads by byte ranges.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

#include <tapeflow/core/tensor.hpp>

#include "core/parallel.hpp"

namespace tapeflow::cpu::array_copy {

inline constexpr int64_t kGrainBytes = int64_t{1} << 16;  // bytes per parallel chunk of a copy

inline char* bytes_of(const Tensor& t) {
    return static_cast<char*>(t.mutable_raw_data());
}

// rows x row_bytes: row r goes from src + r * src_stride to dst + r * dst_stride. The work is cut
// in the flattened byte range, so two huge rows spread over the threads as well as many small ones.
inline void copy_rows(char* dst,
                      int64_t dst_stride,
                      const char* src,
                      int64_t src_stride,
                      int64_t rows,
                      int64_t row_bytes) {
    if (rows <= 0 || row_bytes <= 0) return;
    if (rows == 1 || (dst_stride == row_bytes && src_stride == row_bytes)) {
        parallel_for(rows * row_bytes, kGrainBytes, [&](int64_t begin, int64_t end) {
            std::memcpy(dst + begin, src + begin, static_cast<std::size_t>(end - begin));
        });
        return;
    }
    parallel_for(rows * row_bytes, kGrainBytes, [&](int64_t begin, int64_t end) {
        int64_t r = begin / row_bytes;
        int64_t off = begin % row_bytes;
        while (begin < end) {
            const int64_t n = std::min(row_bytes - off, end - begin);
            std::memcpy(dst + r * dst_stride + off,
                        src + r * src_stride + off,
                        static_cast<std::size_t>(n));
            begin += n;
            ++r;
            off = 0;
        }
    });
}

}  // namespace tapeflow::cpu::array_copy
