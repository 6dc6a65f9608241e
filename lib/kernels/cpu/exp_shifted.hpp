// exp(x - shift) over a row through xsimd batches, and the row's sum: the inner loop of the softmax
// kernels and of the attention kernels.
#pragma once

#include <algorithm>
#include <cstdint>

#include <xsimd/xsimd.hpp>

namespace tapeflow::cpu {

// out[i] = exp(x[i] - shift); returns the sum. Every element, the tail included, goes through
// the same xsimd exp.
template <class T>
inline T exp_shifted(const T* x, T shift, T* out, int64_t n) {
    using B = xsimd::batch<T>;
    constexpr auto W = static_cast<int64_t>(B::size);
    const B s(shift);
    B acc(T(0));
    int64_t i = 0;
    for (; i + W <= n; i += W) {
        const B e = xsimd::exp(B::load_unaligned(x + i) - s);
        e.store_unaligned(out + i);
        acc += e;
    }
    T sum = xsimd::hadd(acc);
    if (i < n) {
        alignas(64) T buf[W];
        std::fill(buf, buf + W, shift);
        std::copy(x + i, x + n, buf);
        xsimd::exp(B::load_aligned(buf) - s).store_aligned(buf);
        for (int64_t j = 0; j < n - i; ++j) {
            out[i + j] = buf[j];
            sum += buf[j];
        }
    }
    return sum;
}

}  // namespace tapeflow::cpu
