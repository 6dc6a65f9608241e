// CUDA kernels of the random ops: one thread per output group, through the same group functions as
// the CPU kernels (lib/kernels/shared/distributions.hpp), so seeded ops give the CPU's
// (TensorFlow's CPU kernels') bits on the GPU in every dtype. The host makes random_shuffle's
// permutation (the rows move here) and the float64 normals (glibc's log and sincos).
#include "device_common.cuh"
#include "kernels/shared/distributions.hpp"

namespace tapeflow::cuda_launch {
namespace {

__device__ philox::Dist dist_of(Distribution d) {
    return d == Distribution::uniform  ? philox::Dist::uniform
           : d == Distribution::normal ? philox::Dist::normal
                                       : philox::Dist::truncated_normal;
}

template <class T>
__global__ void sample_kernel(T* out, int64_t n, RandomParams p, philox::Generator gen) {
    const int64_t g = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    constexpr int kGroup = philox::group_size(sizeof(T) == 8);
    const int64_t first = g * kGroup;
    if (first >= n) return;
    const auto group = static_cast<uint64_t>(g);
    if constexpr (std::is_integral_v<T>) {
        T values[4];
        philox::uniform_int_group<T>(gen, group, static_cast<T>(p.int_lo), p.int_range, values);
        for (int j = 0; j < kGroup && first + j < n; ++j)
            out[first + j] = values[j];
    } else if constexpr (std::is_same_v<T, double>) {
        double values[2];  // uniform only: float64 normals are drawn on the host (ops_cuda.cpp)
        philox::uniform_double_group(gen, group, p.scale, p.shift, values);
        for (int j = 0; j < kGroup && first + j < n; ++j)
            out[first + j] = values[j];
    } else {
        constexpr philox::Format kFormat = std::is_same_v<T, float>    ? philox::Format::f32
                                           : std::is_same_v<T, __half> ? philox::Format::f16
                                                                       : philox::Format::bf16;
        float values[4];
        philox::sample_group<float>(dist_of(p.distribution),
                                    kFormat,
                                    gen,
                                    group,
                                    static_cast<float>(p.scale),
                                    static_cast<float>(p.shift),
                                    values);
        for (int j = 0; j < kGroup && first + j < n; ++j)
            out[first + j] = store<T>(values[j]);  // exact
    }
}

// out's row i = in's row perm[i], moved in words of W (the widest that divides the row).
template <class W>
__global__ void gather_rows_kernel(
    const W* in, W* out, const int64_t* perm, int64_t row_words, int64_t total) {
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= total) return;
    const int64_t row = i / row_words;
    out[i] = in[perm[row] * row_words + (i - row * row_words)];
}

template <class W>
cudaError_t gather_rows(const void* in,
                        void* out,
                        const int64_t* perm,
                        int64_t rows,
                        int64_t row_bytes,
                        cudaStream_t stream) {
    const int64_t row_words = row_bytes / static_cast<int64_t>(sizeof(W));
    const int64_t total = rows * row_words;
    gather_rows_kernel<W><<<blocks_for(total, 1), kThreads, 0, stream>>>(
        static_cast<const W*>(in), static_cast<W*>(out), perm, row_words, total);
    return cudaGetLastError();
}

}  // namespace

cudaError_t random(
    void* out, int64_t n, Elem elem, const RandomParams& params, cudaStream_t stream) {
    if (n == 0) return cudaSuccess;
    philox::Generator gen = philox::Generator::from_seeds(params.seed, params.seed2);
    gen.skip(params.offset);
    return visit_elem(elem, [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, uint8_t>) {
            return cudaErrorInvalidValue;
        } else {
            constexpr int kGroup = philox::group_size(sizeof(T) == 8);
            const int64_t groups = (n + kGroup - 1) / kGroup;
            sample_kernel<T><<<blocks_for(groups, 1), kThreads, 0, stream>>>(
                static_cast<T*>(out), n, params, gen);
            return cudaGetLastError();
        }
    });
}

cudaError_t permute_rows(const void* in,
                         void* out,
                         const int64_t* perm,
                         int64_t rows,
                         int64_t row_bytes,
                         cudaStream_t stream) {
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
