// CUDA kernels of the array ops.
#include "launch.hpp"

namespace tapeflow::cuda_launch {
namespace {

constexpr int kThreads = 256;

template <class Bits>
__global__ void fill_bits_kernel(Bits* out, int64_t n, Bits pattern) {
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) out[i] = pattern;
}

template <class Bits>
cudaError_t fill_typed(void* out, int64_t n, uint64_t pattern) {
    const auto blocks = static_cast<unsigned>((n + kThreads - 1) / kThreads);
    fill_bits_kernel<Bits><<<blocks, kThreads>>>(static_cast<Bits*>(out), n, static_cast<Bits>(pattern));
    return cudaGetLastError();
}

}  // namespace

cudaError_t fill_bits(void* out, int64_t n, uint64_t pattern, int element_size) {
    if (n == 0) return cudaSuccess;
    switch (element_size) {
        case 1: return fill_typed<uint8_t>(out, n, pattern);
        case 2: return fill_typed<uint16_t>(out, n, pattern);
        case 4: return fill_typed<uint32_t>(out, n, pattern);
        default: return fill_typed<uint64_t>(out, n, pattern);
    }
}

}  // namespace tapeflow::cuda_launch
