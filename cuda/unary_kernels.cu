// CUDA kernels of the element-wise unary ops: one linear kernel template over the functors of
// lib/kernels/shared/elementwise_functors.hpp (the CPU's math, compiled for the device), with the
// switch over Op generated from the unary kernel table (kernels/shared/unary_ops.def), so each op
// is instantiated for the dtypes the CPU registers it for; plus logical_not on the bool bytes.
#include "device_common.cuh"
#include "kernels/shared/elementwise_functors.hpp"

namespace tapeflow::cuda_launch {
namespace {

using ew::TypeSet;

template <class F, class S>
__global__ void unary_kernel(const S* in, S* out, int64_t n) {
    const F f{};
    const int64_t base = static_cast<int64_t>(blockIdx.x) * blockDim.x * kUnroll + threadIdx.x;
    S v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {  // all loads first: kUnroll requests in flight
        const int64_t i = base + static_cast<int64_t>(u) * blockDim.x;
        if (i < n) v[u] = in[i];
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
        const int64_t i = base + static_cast<int64_t>(u) * blockDim.x;
        if (i < n) out[i] = store<S>(f(load(v[u])));
    }
}

template <TypeSet K, class S>
constexpr bool in_set() {
    if constexpr (K == TypeSet::bools) {
        return std::is_same_v<S, uint8_t>;  // logical_not runs on the bytes
    } else {
        return in_type_set<K, S>();
    }
}

template <class F, TypeSet K>
cudaError_t run(Elem elem, const void* in, void* out, int64_t n, cudaStream_t stream) {
    if (K == TypeSet::bools) elem = Elem::u8;
    return visit_elem(elem, [&](auto tag) {
        using S = typename decltype(tag)::type;
        if constexpr (!in_set<K, S>()) {
            return cudaErrorInvalidValue;
        } else {
            unary_kernel<F, S><<<blocks_for(n), kThreads, 0, stream>>>(
                static_cast<const S*>(in), static_cast<S*>(out), n);
            return cudaGetLastError();
        }
    });
}

}  // namespace

cudaError_t unary(Op op, Elem elem, const void* in, void* out, int64_t n, cudaStream_t stream) {
    if (n == 0) return cudaSuccess;
    switch (op) {
#define TFL_UNARY(name, functor, dtypes, cost) \
    case Op::name:                             \
        return run<ew::functor, TypeSet::dtypes>(elem, in, out, n, stream);
#include "kernels/shared/unary_ops.def"
#undef TFL_UNARY
        case Op::logical_not:
            return run<ew::LogicalNot, TypeSet::bools>(elem, in, out, n, stream);
        default:
            return cudaErrorInvalidValue;
    }
}

}  // namespace tapeflow::cuda_launch
