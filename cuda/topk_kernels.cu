// CUDA kernel of TopKV2 by ranking: element i of a row goes to output slot rank(i), the number of
// elements of its row that come before it in the CPU kernel's total order (value descending, NaN
// largest, ties to the lower index). The ranks of a row are a permutation, so every slot is
// written once and the result equals the CPU's bit for bit. O(n^2) comparisons per row, read
// through shared-memory tiles: fast for the rows top_k and sort see in models (n up to a few
// thousand); a radix select would scale better for very long rows.
#include "device_common.cuh"
#include "launch_models.hpp"

namespace tapeflow::cuda_launch {
namespace {

template <class C>
__device__ __forceinline__ bool before(C va, int64_t a, C vb, int64_t b) {
    if constexpr (std::is_floating_point_v<C>) {
        const bool na = isnan(va);
        const bool nb = isnan(vb);
        if (na || nb) return na && (!nb || a < b);
    }
    return va > vb || (va == vb && a < b);
}

// One block: kThreads elements of one row (chunk `chunk` of row `row`); grid-stride over blocks.
template <class T>
__global__ void top_k_kernel(
    const T* x, T* values, int32_t* indices, int64_t rows, int64_t n, int64_t k) {
    using C = compute_t<T>;
    __shared__ C tile[kThreads];
    const int64_t chunks = (n + kThreads - 1) / kThreads;
    for (int64_t blk = blockIdx.x; blk < rows * chunks; blk += gridDim.x) {
        const int64_t row = blk / chunks;
        const int64_t i = (blk - row * chunks) * kThreads + threadIdx.x;
        const T* xr = x + row * n;
        const bool mine = i < n;
        const C v = mine ? load(xr[i]) : C(0);
        int64_t rank = 0;
        for (int64_t t0 = 0; t0 < n; t0 += kThreads) {
            __syncthreads();
            if (t0 + threadIdx.x < n) tile[threadIdx.x] = load(xr[t0 + threadIdx.x]);
            __syncthreads();
            const int64_t m = n - t0 < kThreads ? n - t0 : kThreads;
            if (mine) {
                for (int64_t j = 0; j < m; ++j)
                    rank += before(tile[j], t0 + j, v, i) ? 1 : 0;
            }
        }
        if (mine && rank < k) {
            values[row * k + rank] = xr[i];
            indices[row * k + rank] = static_cast<int32_t>(i);
        }
    }
}

}  // namespace

cudaError_t top_k(Elem elem,
                  const void* x,
                  void* values,
                  int32_t* indices,
                  int64_t rows,
                  int64_t n,
                  int64_t k,
                  cudaStream_t stream) {
    if (rows == 0 || k == 0) return cudaSuccess;
    const int64_t blocks = rows * ((n + kThreads - 1) / kThreads);
    const auto grid = static_cast<unsigned>(blocks < kMaxGridBlocks ? blocks : kMaxGridBlocks);
    return visit_elem(elem, [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (std::is_same_v<T, bool>) {
            return cudaErrorInvalidValue;
        } else {
            top_k_kernel<<<grid, kThreads, 0, stream>>>(
                static_cast<const T*>(x), static_cast<T*>(values), indices, rows, n, k);
            return cudaGetLastError();
        }
    });
}

}  // namespace tapeflow::cuda_launch
