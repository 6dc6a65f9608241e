// CUDA kernels of the random ops: the same per-element Philox functions as the CPU kernels
// (lib/random/philox.hpp), so seeded ops give the CPU's numbers on the GPU.
#include "launch.hpp"
#include "random/philox.hpp"

namespace tapeflow::cuda_launch {
namespace {

constexpr int kThreads = 256;

template <class T>
__global__ void sample_kernel(T* out, int64_t n, Distribution distribution, philox::Stream s,
                              double a, double b) {
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const auto index = static_cast<uint64_t>(i);
    // a + b * x with explicitly rounded operations: nvcc would contract it into one fma, and the
    // CPU (ISO C++: no contraction) rounds the product and the sum separately.
    switch (distribution) {
        case Distribution::uniform:
            if constexpr (sizeof(T) == 8) {
                out[i] = __dadd_rn(a, __dmul_rn(b, philox::uniform_double_at(s, index)));
            } else {  // float32 computes in float, like the CPU kernel
                out[i] = __fadd_rn(static_cast<float>(a),
                                   __fmul_rn(static_cast<float>(b), philox::uniform_float_at(s, index)));
            }
            break;
        case Distribution::normal:
            out[i] = static_cast<T>(__dadd_rn(a, __dmul_rn(b, philox::normal_at(s, index))));
            break;
        case Distribution::truncated_normal:
            out[i] = static_cast<T>(__dadd_rn(a, __dmul_rn(b, philox::truncated_normal_at(s, index))));
            break;
    }
}

}  // namespace

cudaError_t random(void* out, int64_t n, bool is_double, Distribution distribution, uint64_t key,
                   uint64_t call, double a, double b, cudaStream_t stream) {
    if (n == 0) return cudaSuccess;
    const philox::Stream s{philox::Key{{static_cast<uint32_t>(key), static_cast<uint32_t>(key >> 32)}}, call};
    const auto blocks = static_cast<unsigned>((n + kThreads - 1) / kThreads);
    if (is_double) {
        sample_kernel<double><<<blocks, kThreads, 0, stream>>>(static_cast<double*>(out), n, distribution, s, a, b);
    } else {
        sample_kernel<float><<<blocks, kThreads, 0, stream>>>(static_cast<float*>(out), n, distribution, s, a, b);
    }
    return cudaGetLastError();
}

}  // namespace tapeflow::cuda_launch
