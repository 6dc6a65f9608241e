// Shared pieces of the .cu files: the C++ type of each Elem, 16-bit float loads and stores in the
// float compute type, the element-type switch, launch geometry and the index-plan walk.
#pragma once

#include <cstdint>
#include <type_traits>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels/shared/type_sets.hpp"
#include "launch.hpp"

namespace tapeflow::cuda_launch {

inline constexpr int kThreads = 256;
/// Elements per thread in the linear kernels: independent loads in flight hide memory latency.
inline constexpr int kUnroll = 4;

template <class T>
inline constexpr bool kIsHalf = std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>;

/// The type a stored T computes in: float for the 16-bit floats.
template <class T>
using compute_t = std::conditional_t<kIsHalf<T>, float, T>;

template <class T>
__device__ __forceinline__ compute_t<T> load(T v) {
    if constexpr (kIsHalf<T>) {
        return static_cast<float>(v);
    } else {
        return v;
    }
}

template <class T, class C>
__device__ __forceinline__ T store(C v) {
    if constexpr (std::is_same_v<T, __half>) {
        return __float2half_rn(static_cast<float>(v));
    } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
        return __float2bfloat16_rn(static_cast<float>(v));
    } else {
        return static_cast<T>(v);
    }
}

/// Whether S (a device element type) belongs to the kernel table's dtype set K.
template <ew::TypeSet K, class S>
constexpr bool in_type_set() {
    return ew::type_in_set(K,
                           std::is_floating_point_v<S> || kIsHalf<S>,
                           std::is_same_v<S, int32_t> || std::is_same_v<S, int64_t>,
                           std::is_same_v<S, bool>);
}

template <class T>
struct Tag {
    using type = T;
};

/// f(Tag<T>{}) for the C++ type T of `elem` (bool is stored as one byte, 0 or 1).
template <class F>
cudaError_t visit_elem(Elem elem, F&& f) {
    switch (elem) {
        case Elem::f32:
            return f(Tag<float>{});
        case Elem::f64:
            return f(Tag<double>{});
        case Elem::i32:
            return f(Tag<int32_t>{});
        case Elem::i64:
            return f(Tag<int64_t>{});
        case Elem::u8:
            return f(Tag<uint8_t>{});
        case Elem::b8:
            return f(Tag<bool>{});
        case Elem::f16:
            return f(Tag<__half>{});
        case Elem::bf16:
            return f(Tag<__nv_bfloat16>{});
    }
    return cudaErrorInvalidValue;
}

/// Blocks for n elements at kThreads x per_thread elements a block.
inline unsigned blocks_for(int64_t n, int per_thread = kUnroll) {
    const int64_t per_block = static_cast<int64_t>(kThreads) * per_thread;
    return static_cast<unsigned>((n + per_block - 1) / per_block);
}

/// Grid of a grid-stride loop over n elements (one per thread, capped; the loop covers the rest).
inline constexpr unsigned kMaxGridBlocks = 1U << 20;
inline unsigned grid_for(int64_t n) {
    const unsigned b = blocks_for(n, 1);
    return b < kMaxGridBlocks ? b : kMaxGridBlocks;
}

/// for (i = this thread's first index; i < n; i += threads in the grid)
#define TAPEFLOW_FOR_EACH(i, n)                                                            \
    for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < (n); \
         i += static_cast<int64_t>(gridDim.x) * blockDim.x)

/// The coordinates (image, row, column, channel) of element idx of a row-major
/// [images, height, width, channels] tensor: the NHWC kernels' one-thread-per-element index.
struct Nhwc {
    int64_t n, h, w, c;
};
__device__ __forceinline__ Nhwc nhwc_of(int64_t idx,
                                        int64_t height,
                                        int64_t width,
                                        int64_t channels) {
    const int64_t pixel = idx / channels;
    return {pixel / (width * height), (pixel / width) % height, pixel % width, idx % channels};
}

/// f(Tag<T>{}) for float32/float64 (the nn ops' dtypes); cudaErrorInvalidValue otherwise.
template <class F>
cudaError_t visit_real(Elem elem, F&& f) {
    if (elem == Elem::f32) return f(Tag<float>{});
    if (elem == Elem::f64) return f(Tag<double>{});
    return cudaErrorInvalidValue;
}

/// Operand offsets of index i over the first `rank` dimensions of `plan` (row-major).
template <int N>
__device__ __forceinline__ void offsets_over(const IndexPlan<N>& plan,
                                             int rank,
                                             int64_t i,
                                             int64_t (&off)[N]) {
#pragma unroll
    for (int k = 0; k < N; ++k)
        off[k] = 0;
    for (int d = rank - 1; d >= 0; --d) {
        const int64_t size = plan.dims[d];
        const int64_t q = i / size;
        const int64_t idx = i - q * size;
        i = q;
#pragma unroll
        for (int k = 0; k < N; ++k)
            off[k] += idx * plan.strides[k][d];
    }
}

/// Operand offsets of output element i under `plan` (row-major over plan.dims).
template <int N>
__device__ __forceinline__ void plan_offsets(const IndexPlan<N>& plan,
                                             int64_t i,
                                             int64_t (&off)[N]) {
    offsets_over(plan, plan.rank, i, off);
}

/// Row-wise walks: a plan whose innermost dimension is at least this long runs as rows (outer index
/// from blockIdx.y, inner from x), which needs no division per element.
inline constexpr int64_t kMinRowLength = 64;

/// Operand offsets of the start of row `row` (the plan's dimensions but the last, row-major).
template <int N>
__device__ __forceinline__ void row_offsets(const IndexPlan<N>& plan,
                                            int64_t row,
                                            int64_t (&off)[N]) {
    if (plan.rank == 2) {  // the common case: no division
#pragma unroll
        for (int k = 0; k < N; ++k)
            off[k] = row * plan.strides[k][0];
        return;
    }
    offsets_over(plan, plan.rank - 1, row, off);
}

/// Grid of a row-wise walk: x covers a row (kThreads x kUnroll elements a block), y the rows
/// (kernels loop past 65535).
inline dim3 row_grid(const int64_t rows, const int64_t cols) {
    const int64_t per_block = static_cast<int64_t>(kThreads) * kUnroll;
    return dim3(static_cast<unsigned>((cols + per_block - 1) / per_block),
                static_cast<unsigned>(rows < 65535 ? rows : 65535));
}

/// Whether `plan` should run row-wise (rank >= 2, long innermost dimension).
template <int N>
inline bool use_rows(const IndexPlan<N>& plan) {
    return plan.rank >= 2 && plan.dims[plan.rank - 1] >= kMinRowLength;
}

}  // namespace tapeflow::cuda_launch
