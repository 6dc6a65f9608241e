// CUDA kernels of the element-wise unary ops: one linear kernel template over the functors of
// lib/kernels/shared/elementwise_functors.hpp (the CPU's math, compiled for the device),
// instantiated for the dtypes the CPU registers each op for.
#include "device_common.cuh"
#include "kernels/shared/elementwise_functors.hpp"

namespace tapeflow::cuda_launch {
namespace {

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

enum class Set { floats, signed_numbers, bools };

template <Set K, class S>
constexpr bool in_set() {
    constexpr bool is_float = std::is_floating_point_v<S> || kIsHalf<S>;
    if constexpr (K == Set::floats) return is_float;
    if constexpr (K == Set::signed_numbers) {
        return is_float || std::is_same_v<S, int32_t> || std::is_same_v<S, int64_t>;
    }
    return std::is_same_v<S, uint8_t>;  // bools: logical_not runs on the bytes
}

template <class F, Set K>
cudaError_t run(Elem elem, const void* in, void* out, int64_t n, cudaStream_t stream) {
    if (K == Set::bools) elem = Elem::u8;
    return visit_elem(elem, [&](auto tag) {
        using S = typename decltype(tag)::type;
        if constexpr (!in_set<K, S>()) {
            return cudaErrorInvalidValue;
        } else {
            unary_kernel<F, S><<<blocks_for(n), kThreads, 0, stream>>>(static_cast<const S*>(in),
                                                                      static_cast<S*>(out), n);
            return cudaGetLastError();
        }
    });
}

}  // namespace

cudaError_t unary(Unary op, Elem elem, const void* in, void* out, int64_t n, cudaStream_t stream) {
    if (n == 0) return cudaSuccess;
    namespace f = tapeflow::ew;
    constexpr auto kSigned = Set::signed_numbers;
    constexpr auto kFloat = Set::floats;
    switch (op) {
        case Unary::negative: return run<f::Negative, kSigned>(elem, in, out, n, stream);
        case Unary::abs: return run<f::Abs, kSigned>(elem, in, out, n, stream);
        case Unary::sign: return run<f::Sign, kSigned>(elem, in, out, n, stream);
        case Unary::square: return run<f::Square, kSigned>(elem, in, out, n, stream);
        case Unary::round: return run<f::Round, kSigned>(elem, in, out, n, stream);
        case Unary::reciprocal: return run<f::Reciprocal, kFloat>(elem, in, out, n, stream);
        case Unary::exp: return run<f::Exp, kFloat>(elem, in, out, n, stream);
        case Unary::expm1: return run<f::Expm1, kFloat>(elem, in, out, n, stream);
        case Unary::log: return run<f::Log, kFloat>(elem, in, out, n, stream);
        case Unary::log1p: return run<f::Log1p, kFloat>(elem, in, out, n, stream);
        case Unary::sqrt: return run<f::Sqrt, kFloat>(elem, in, out, n, stream);
        case Unary::rsqrt: return run<f::Rsqrt, kFloat>(elem, in, out, n, stream);
        case Unary::sin: return run<f::Sin, kFloat>(elem, in, out, n, stream);
        case Unary::cos: return run<f::Cos, kFloat>(elem, in, out, n, stream);
        case Unary::tanh: return run<f::Tanh, kFloat>(elem, in, out, n, stream);
        case Unary::sigmoid: return run<f::Sigmoid, kFloat>(elem, in, out, n, stream);
        case Unary::erf: return run<f::Erf, kFloat>(elem, in, out, n, stream);
        case Unary::floor: return run<f::Floor, kFloat>(elem, in, out, n, stream);
        case Unary::ceil: return run<f::Ceil, kFloat>(elem, in, out, n, stream);
        case Unary::softplus: return run<f::Softplus, kFloat>(elem, in, out, n, stream);
        case Unary::logical_not: return run<f::LogicalNot, Set::bools>(elem, in, out, n, stream);
    }
    return cudaErrorInvalidValue;
}

}  // namespace tapeflow::cuda_launch
