// The one data-movement kernel behind transpose, slice, strided_slice(_grad), pad, tile,
// broadcast_to, concat/stack and split/unstack: a strided walk over an index space that writes
// out[strides[0] . idx] = in[strides[1] . idx]; and mirror_pad's per-axis mirror map. Elements
// move as 1/2/4/8-byte words, so one instantiation per element size serves every dtype.
// ops_cuda_array.cpp builds the plans.
#include "device_common.cuh"

namespace tapeflow::cuda_launch {
namespace {

template <class E>
__global__ void strided_copy_kernel(E* out, const E* in, int64_t n, IndexPlan<2> plan) {
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int64_t off[2];
    plan_offsets(plan, i, off);
    out[off[0]] = in[off[1]];
}

template <class E>
cudaError_t copy_typed(void* out, const void* in, int64_t n, const IndexPlan<2>& plan,
                       cudaStream_t stream) {
    strided_copy_kernel<E><<<blocks_for(n, 1), kThreads, 0, stream>>>(
        static_cast<E*>(out), static_cast<const E*>(in), n, plan);
    return cudaGetLastError();
}

// The same mirror map as the CPU's mirror_maps(), per axis.
template <class E>
__global__ void mirror_pad_kernel(E* out, const E* in, int64_t n, MirrorPlan p) {
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int64_t rest = i, off = 0, stride = 1;
    for (int d = p.rank - 1; d >= 0; --d) {
        const int64_t q = rest / p.out_dims[d];
        const int64_t j = rest - q * p.out_dims[d] - p.before[d];
        rest = q;
        const int64_t size = p.in_dims[d];
        const int64_t src = j < 0 ? -j - 1 + p.offset : (j >= size ? 2 * size - 1 - p.offset - j : j);
        off += src * stride;
        stride *= size;
    }
    out[i] = in[off];
}

template <class E>
cudaError_t mirror_typed(void* out, const void* in, int64_t n, const MirrorPlan& plan, cudaStream_t stream) {
    mirror_pad_kernel<E><<<blocks_for(n, 1), kThreads, 0, stream>>>(static_cast<E*>(out),
                                                                    static_cast<const E*>(in), n, plan);
    return cudaGetLastError();
}

}  // namespace

cudaError_t mirror_pad(void* out, const void* in, int element_size, int64_t n, const MirrorPlan& plan,
                       cudaStream_t stream) {
    if (n == 0) return cudaSuccess;
    switch (element_size) {
        case 1: return mirror_typed<uint8_t>(out, in, n, plan, stream);
        case 2: return mirror_typed<uint16_t>(out, in, n, plan, stream);
        case 4: return mirror_typed<uint32_t>(out, in, n, plan, stream);
        default: return mirror_typed<uint64_t>(out, in, n, plan, stream);
    }
}

cudaError_t strided_copy(void* out, const void* in, int element_size, const IndexPlan<2>& plan,
                         cudaStream_t stream) {
    int64_t n = 1;
    for (int d = 0; d < plan.rank; ++d) n *= plan.dims[d];
    if (n == 0) return cudaSuccess;
    switch (element_size) {
        case 1: return copy_typed<uint8_t>(out, in, n, plan, stream);
        case 2: return copy_typed<uint16_t>(out, in, n, plan, stream);
        case 4: return copy_typed<uint32_t>(out, in, n, plan, stream);
        default: return copy_typed<uint64_t>(out, in, n, plan, stream);
    }
}

}  // namespace tapeflow::cuda_launch
