// CUDA kernels of gather (also gather_nd, through row ids), one_hot, the segment sums
// (unsorted_segment_sum, scatter_nd) and mirror_pad_grad's folds: one thread per element. Index
// validation happens on the host before the launch (ops_cuda_array.cpp). Segment sums add with
// atomics, so the order of the additions (and the last bits of float sums) may differ from the
// CPU's.
#include "device_common.cuh"

namespace tapeflow::cuda_launch {
namespace {

// out[((bo * m) + j) * inner + c] = params[(bo * n + idx[b * m + j]) * inner + c], b = bo / outer.
template <class E, class I>
__global__ void gather_kernel(const E* params,
                              const I* idx,
                              E* out,
                              int64_t total,
                              int64_t outer,
                              int64_t n,
                              int64_t inner,
                              int64_t m) {
    const int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (e >= total) return;
    const int64_t c = e % inner;
    const int64_t r = e / inner;
    const int64_t j = r % m;
    const int64_t bo = r / m;
    const int64_t b = bo / outer;
    out[e] = params[(bo * n + static_cast<int64_t>(idx[b * m + j])) * inner + c];
}

template <class E>
cudaError_t gather_typed(const void* params,
                         const void* indices,
                         Elem index_elem,
                         void* out,
                         int64_t total,
                         int64_t outer,
                         int64_t n,
                         int64_t inner,
                         int64_t m,
                         cudaStream_t stream) {
    const unsigned blocks = blocks_for(total, 1);
    if (index_elem == Elem::i64) {
        gather_kernel<E, int64_t>
            <<<blocks, kThreads, 0, stream>>>(static_cast<const E*>(params),
                                              static_cast<const int64_t*>(indices),
                                              static_cast<E*>(out),
                                              total,
                                              outer,
                                              n,
                                              inner,
                                              m);
    } else {
        gather_kernel<E, int32_t>
            <<<blocks, kThreads, 0, stream>>>(static_cast<const E*>(params),
                                              static_cast<const int32_t*>(indices),
                                              static_cast<E*>(out),
                                              total,
                                              outer,
                                              n,
                                              inner,
                                              m);
    }
    return cudaGetLastError();
}

template <class E, class I>
__global__ void one_hot_kernel(
    const I* idx, E* out, int64_t total, int64_t depth, int64_t inner, E on, E off) {
    const int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (e >= total) return;
    const int64_t i = e % inner;
    const int64_t t = e / inner;
    const int64_t k = t % depth;
    const int64_t o = t / depth;
    out[e] = static_cast<int64_t>(idx[o * inner + i]) == k ? on : off;
}

template <class E>
cudaError_t one_hot_typed(const void* indices,
                          Elem index_elem,
                          void* out,
                          int64_t total,
                          int64_t depth,
                          int64_t inner,
                          uint64_t on,
                          uint64_t off,
                          cudaStream_t stream) {
    const unsigned blocks = blocks_for(total, 1);
    auto* o = static_cast<E*>(out);
    const auto e_on = static_cast<E>(on);
    const auto e_off = static_cast<E>(off);
    switch (index_elem) {
        case Elem::i64:
            one_hot_kernel<E, int64_t><<<blocks, kThreads, 0, stream>>>(
                static_cast<const int64_t*>(indices), o, total, depth, inner, e_on, e_off);
            break;
        case Elem::i32:
            one_hot_kernel<E, int32_t><<<blocks, kThreads, 0, stream>>>(
                static_cast<const int32_t*>(indices), o, total, depth, inner, e_on, e_off);
            break;
        default:
            one_hot_kernel<E, uint8_t><<<blocks, kThreads, 0, stream>>>(
                static_cast<const uint8_t*>(indices), o, total, depth, inner, e_on, e_off);
            break;
    }
    return cudaGetLastError();
}

__device__ __forceinline__ void atomic_add(float* p, float v) {
    atomicAdd(p, v);
}
__device__ __forceinline__ void atomic_add(double* p, double v) {
    atomicAdd(p, v);
}
__device__ __forceinline__ void atomic_add(int32_t* p, int32_t v) {
    atomicAdd(p, v);
}
__device__ __forceinline__ void atomic_add(int64_t* p, int64_t v) {  // wraps like the CPU's sum
    atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
}

// acc[ids[e / width] * width + e % width] += data[e]; ids outside [0, rows) are dropped.
template <class T, class A, class I>
__global__ void segment_sum_kernel(
    const T* data, const I* ids, A* acc, int64_t total, int64_t width, int64_t rows) {
    const int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (e >= total) return;
    const int64_t r = e / width;
    const auto id = static_cast<int64_t>(ids[r]);
    if (id < 0 || id >= rows) return;
    atomic_add(acc + id * width + (e - r * width), static_cast<A>(load(data[e])));
}

// mirror_pad_grad, one padded axis: out [outer, narrow, inner] from in [outer, wide, inner], where
// out[o, i, c] sums the entries whose mirror map lands on i in increasing order (left mirror, i
// itself, right mirror): the CPU kernel's order, so the sums are identical.
template <class In, class Out>
__global__ void mirror_fold_kernel(const In* in,
                                   Out* out,
                                   int64_t total,
                                   int64_t narrow,
                                   int64_t wide,
                                   int64_t inner,
                                   int64_t before,
                                   int offset) {
    const int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (e >= total) return;
    const int64_t c = e % inner;
    const int64_t r = e / inner;
    const int64_t i = r % narrow;
    const In* src = in + (r / narrow) * wide * inner + c;
    compute_t<In> acc = 0;
    const int64_t left = before + offset - 1 - i;  // padded index mirrored onto i from the left
    if (left >= 0 && left < before) acc += load(src[left * inner]);
    acc += load(src[(before + i) * inner]);
    const int64_t right = before + 2 * narrow - 1 - offset - i;
    if (right >= before + narrow && right < wide) acc += load(src[right * inner]);
    out[e] = store<Out>(acc);
}

}  // namespace

cudaError_t mirror_fold(Elem in_elem,
                        Elem out_elem,
                        const void* in,
                        void* out,
                        int64_t outer,
                        int64_t narrow,
                        int64_t wide,
                        int64_t inner,
                        int64_t before,
                        int offset,
                        cudaStream_t stream) {
    const int64_t total = outer * narrow * inner;
    if (total == 0) return cudaSuccess;
    return visit_elem(in_elem, [&](auto in_tag) {
        using In = typename decltype(in_tag)::type;
        return visit_elem(out_elem, [&](auto out_tag) {
            using Out = typename decltype(out_tag)::type;
            if constexpr (std::is_same_v<In, bool> || std::is_same_v<Out, bool> ||
                          !std::is_same_v<compute_t<In>, compute_t<Out>>) {
                return cudaErrorInvalidValue;
            } else {
                mirror_fold_kernel<In, Out>
                    <<<blocks_for(total, 1), kThreads, 0, stream>>>(static_cast<const In*>(in),
                                                                    static_cast<Out*>(out),
                                                                    total,
                                                                    narrow,
                                                                    wide,
                                                                    inner,
                                                                    before,
                                                                    offset);
                return cudaGetLastError();
            }
        });
    });
}

cudaError_t segment_sum(Elem elem,
                        const void* data,
                        const void* ids,
                        Elem id_elem,
                        void* acc,
                        int64_t total,
                        int64_t width,
                        int64_t rows,
                        cudaStream_t stream) {
    if (total == 0 || width == 0) return cudaSuccess;
    return visit_elem(elem, [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (std::is_same_v<T, bool>) {
            return cudaErrorInvalidValue;
        } else {
            // uint8 sums in int32 (no byte atomics); the caller's cast wraps it mod 256 as the CPU
            using A = std::conditional_t<std::is_same_v<T, uint8_t>, int32_t, compute_t<T>>;
            const unsigned blocks = blocks_for(total, 1);
            if (id_elem == Elem::i64) {
                segment_sum_kernel<T, A, int64_t>
                    <<<blocks, kThreads, 0, stream>>>(static_cast<const T*>(data),
                                                      static_cast<const int64_t*>(ids),
                                                      static_cast<A*>(acc),
                                                      total,
                                                      width,
                                                      rows);
            } else {
                segment_sum_kernel<T, A, int32_t>
                    <<<blocks, kThreads, 0, stream>>>(static_cast<const T*>(data),
                                                      static_cast<const int32_t*>(ids),
                                                      static_cast<A*>(acc),
                                                      total,
                                                      width,
                                                      rows);
            }
            return cudaGetLastError();
        }
    });
}

cudaError_t gather(const void* params,
                   const void* indices,
                   Elem index_elem,
                   void* out,
                   int element_size,
                   int64_t total,
                   int64_t outer,
                   int64_t n,
                   int64_t inner,
                   int64_t m,
                   cudaStream_t stream) {
    if (total == 0) return cudaSuccess;
    switch (element_size) {
        case 1:
            return gather_typed<uint8_t>(
                params, indices, index_elem, out, total, outer, n, inner, m, stream);
        case 2:
            return gather_typed<uint16_t>(
                params, indices, index_elem, out, total, outer, n, inner, m, stream);
        case 4:
            return gather_typed<uint32_t>(
                params, indices, index_elem, out, total, outer, n, inner, m, stream);
        default:
            return gather_typed<uint64_t>(
                params, indices, index_elem, out, total, outer, n, inner, m, stream);
    }
}

cudaError_t one_hot(const void* indices,
                    Elem index_elem,
                    void* out,
                    int element_size,
                    int64_t total,
                    int64_t depth,
                    int64_t inner,
                    uint64_t on,
                    uint64_t off,
                    cudaStream_t stream) {
    if (total == 0) return cudaSuccess;
    switch (element_size) {
        case 1:
            return one_hot_typed<uint8_t>(
                indices, index_elem, out, total, depth, inner, on, off, stream);
        case 2:
            return one_hot_typed<uint16_t>(
                indices, index_elem, out, total, depth, inner, on, off, stream);
        case 4:
            return one_hot_typed<uint32_t>(
                indices, index_elem, out, total, depth, inner, on, off, stream);
        default:
            return one_hot_typed<uint64_t>(
                indices, index_elem, out, total, depth, inner, on, off, stream);
    }
}

}  // namespace tapeflow::cuda_launch
