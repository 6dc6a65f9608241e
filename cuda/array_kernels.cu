// CUDA kernels of the creation ops: fill (by element size) and cast (every dtype pair, with
// tf.cast's conversion rules, the same as convert_element on the CPU).
#include <cmath>
#include <limits>

#include "device_common.cuh"

namespace tapeflow::cuda_launch {
namespace {

template <class Bits>
__global__ void fill_bits_kernel(Bits* out, int64_t n, Bits pattern) {
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) out[i] = pattern;
}

template <class Bits>
cudaError_t fill_typed(void* out, int64_t n, uint64_t pattern, cudaStream_t stream) {
    fill_bits_kernel<Bits><<<blocks_for(n, 1), kThreads, 0, stream>>>(
        static_cast<Bits*>(out), n, static_cast<Bits>(pattern));
    return cudaGetLastError();
}

// tf.cast: to bool is x != 0; float to integer truncates toward zero, saturating at the integer's
// range, NaN gives 0; 16-bit floats convert through float.
template <class To, class From>
__device__ __forceinline__ To convert(From value) {
    if constexpr (std::is_same_v<To, From>) {
        return value;
    } else if constexpr (kIsHalf<From>) {
        return convert<To>(static_cast<float>(value));
    } else if constexpr (kIsHalf<To>) {
        return store<To>(static_cast<float>(value));
    } else if constexpr (std::is_same_v<To, bool>) {
        return value != From(0);
    } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
        if (value != value) return To(0);
        constexpr auto lo = static_cast<From>(std::numeric_limits<To>::min());
        constexpr auto hi = static_cast<From>(std::numeric_limits<To>::max());
        if (value <= lo) return std::numeric_limits<To>::min();
        if (value >= hi) return std::numeric_limits<To>::max();
        return static_cast<To>(value);
    } else {
        return static_cast<To>(value);
    }
}

template <class To, class From>
__global__ void cast_kernel(const From* in, To* out, int64_t n) {
    const int64_t base = static_cast<int64_t>(blockIdx.x) * blockDim.x * kUnroll + threadIdx.x;
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
        const int64_t i = base + static_cast<int64_t>(u) * blockDim.x;
        if (i < n) out[i] = convert<To>(in[i]);
    }
}

}  // namespace

cudaError_t fill_bits(
    void* out, int64_t n, uint64_t pattern, int element_size, cudaStream_t stream) {
    if (n == 0) return cudaSuccess;
    switch (element_size) {
        case 1:
            return fill_typed<uint8_t>(out, n, pattern, stream);
        case 2:
            return fill_typed<uint16_t>(out, n, pattern, stream);
        case 4:
            return fill_typed<uint32_t>(out, n, pattern, stream);
        default:
            return fill_typed<uint64_t>(out, n, pattern, stream);
    }
}

cudaError_t cast(Elem from, Elem to, const void* in, void* out, int64_t n, cudaStream_t stream) {
    if (n == 0) return cudaSuccess;
    return visit_elem(from, [&](auto from_tag) {
        using F = typename decltype(from_tag)::type;
        return visit_elem(to, [&](auto to_tag) {
            using T = typename decltype(to_tag)::type;
            cast_kernel<T, F><<<blocks_for(n), kThreads, 0, stream>>>(
                static_cast<const F*>(in), static_cast<T*>(out), n);
            return cudaGetLastError();
        });
    });
}

}  // namespace tapeflow::cuda_launch
