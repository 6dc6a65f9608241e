// Size classes of the caching CUDA allocator, in plain C++ so that the CPU tests check them:
// 512-byte steps below 1 MiB (cudaMalloc's own granularity is 512 bytes for small blocks), four
// classes per power of two above, so a reused block wastes at most 25% and a loop of
// slightly different sizes still hits the cache.
#pragma once

#include <cstddef>

namespace tapeflow::cuda_memory {

inline constexpr std::size_t kSmallStep = 512;
inline constexpr std::size_t kLargeFrom = std::size_t{1} << 20;

/// The block size the allocator reserves for a request of `nbytes` (> 0).
inline std::size_t size_class(std::size_t nbytes) {
    if (nbytes < kLargeFrom) return (nbytes + kSmallStep - 1) / kSmallStep * kSmallStep;
    const int top = 63 - __builtin_clzll(nbytes);
    const std::size_t step = std::size_t{1} << (top - 2);
    return (nbytes + step - 1) / step * step;
}

}  // namespace tapeflow::cuda_memory
