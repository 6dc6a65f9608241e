// The optional rank-4 operands of the attention ops (bias and mask, broadcast to [B, N, T, S]),
// addressed the same way by the CPU kernels and the CUDA glue.
#pragma once

#include <array>
#include <cstdint>

#include <tapeflow/core/shape.hpp>

namespace tapeflow {

/// Element strides of a rank-4 operand broadcast to [B, N, T, S] (0 along its size-1 dims).
inline std::array<int64_t, 4> broadcast_strides4(const Shape& s) {
    std::array<int64_t, 4> st{};
    int64_t step = 1;
    for (int d = 3; d >= 0; --d) {
        st[static_cast<std::size_t>(d)] = s[d] == 1 ? 0 : step;
        step *= s[d];
    }
    return st;
}

}  // namespace tapeflow
