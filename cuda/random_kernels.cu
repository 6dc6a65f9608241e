// CUDA kernels of the random ops: the same per-element Philox functions and affine step as the CPU
// kernels (lib/kernels/shared/philox.hpp, exact_math.hpp), so seeded ops give the CPU's bits on the
// GPU in every dtype. random_shuffle: the permutation comes from the host, the rows move here.
#include "device_common.cuh"
#include "kernels/shared/philox.hpp"

namespace tapeflow::cuda_launch {
namespace {

template <class T>
__global__ void sample_kernel(T* out, int64_t n, RandomParams p, philox::Stream s) {
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const auto index = static_cast<uint64_t>(i);
    if constexpr (std::is_integral_v<T>) {  // uniform integers in [lo, lo + range)
        out[i] = static_cast<T>(p.int_lo + static_cast<int64_t>(philox::uniform_int_at(s, index, p.int_range)));
    } else {
        switch (p.distribution) {
            case Distribution::uniform:
                if constexpr (std::is_same_v<T, double>) {
                    out[i] = philox::affine(p.a, p.b, philox::uniform_double_at(s, index));
                } else {  // float32 and the 16-bit floats compute in float, like the CPU kernel
                    out[i] = store<T>(philox::affine(static_cast<float>(p.a), static_cast<float>(p.b),
                                                     philox::uniform_float_at(s, index)));
                }
                break;
            case Distribution::normal:
                out[i] = store<T>(philox::affine(p.a, p.b, philox::normal_at(s, index)));
                break;
            case Distribution::truncated_normal:
                out[i] = store<T>(philox::affine(p.a, p.b, philox::truncated_normal_at(s, index)));
                break;
        }
    }
}

// out's row i = in's row perm[i], moved in words of W (the widest that divides the row).
template <class W>
__global__ void gather_rows_kernel(const W* in, W* out, const int64_t* perm, int64_t row_words,
                                   int64_t total) {
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= total) return;
    const int64_t row = i / row_words;
    out[i] = in[perm[row] * row_words + (i - row * row_words)];
}

template <class W>
cudaError_t gather_rows(const void* in, void* out, const int64_t* perm, int64_t rows,
                        int64_t row_bytes, cudaStream_t stream) {
    const int64_t row_words = row_bytes / static_cast<int64_t>(sizeof(W));
    const int64_t total = rows * row_words;
    gather_rows_kernel<W><<<blocks_for(total, 1), kThreads, 0, stream>>>(
        static_cast<const W*>(in), static_cast<W*>(out), perm, row_words, total);
    return cudaGetLastError();
}

philox::Stream stream_of(const RandomParams& p) {
    return philox::Stream{
        philox::Key{{static_cast<uint32_t>(p.key), static_cast<uint32_t>(p.key >> 32)}}, p.call};
}

}  // namespace

cudaError_t random(void* out, int64_t n, Elem elem, const RandomParams& params, cudaStream_t stream) {
    if (n == 0) return cudaSuccess;
    const philox::Stream s = stream_of(params);
    const unsigned blocks = blocks_for(n, 1);
    return visit_elem(elem, [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, uint8_t>) {
            return cudaErrorInvalidValue;
        } else {
            sample_kernel<T><<<blocks, kThreads, 0, stream>>>(static_cast<T*>(out), n, params, s);
            return cudaGetLastError();
        }
    });
}

cudaError_t permute_rows(const void* in, void* out, const int64_t* perm, int64_t rows,
                         int64_t row_bytes, cudaStream_t stream) {
    if (rows == 0 || row_bytes == 0) return cudaSuccess;
    const auto address = reinterpret_cast<uintptr_t>(in) | reinterpret_cast<uintptr_t>(out);
    if (row_bytes % 8 == 0 && address % 8 == 0) {
        return gather_rows<uint64_t>(in, out, perm, rows, row_bytes, stream);
    }
    if (row_bytes % 4 == 0 && address % 4 == 0) {
        return gather_rows<uint32_t>(in, out, perm, rows, row_bytes, stream);
    }
    return gather_rows<uint8_t>(in, out, perm, rows, row_bytes, stream);
}

}  // namespace tapeflow::cuda_launch
