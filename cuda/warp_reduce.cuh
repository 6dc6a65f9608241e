// Warp-wide reductions by shuffles (all 32 lanes take part), shared by the fused ops' kernels.
#pragma once

namespace tapeflow::cuda_launch {

template <class C>
__device__ __forceinline__ C warp_sum(C v) {
#pragma unroll
    for (int off = 16; off > 0; off >>= 1)
        v += __shfl_xor_sync(0xffffffffU, v, off);
    return v;
}

template <class C>
__device__ __forceinline__ C warp_max(C v) {
#pragma unroll
    for (int off = 16; off > 0; off >>= 1)
        v = fmax(v, __shfl_xor_sync(0xffffffffU, v, off));
    return v;
}

}  // namespace tapeflow::cuda_launch
