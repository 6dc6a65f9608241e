// Integer matmul (int32/int64; cuBLAS has no integer gemm for these): 16x16 output tiles, A and B
// tiles staged in shared memory, products summed in the unsigned type so that overflow wraps as
// in the CPU kernel (lib/kernels/cpu/linalg_cpu.cpp). Batches index their operands (broadcasting).
#include <algorithm>

#include "device_common.cuh"

namespace tapeflow::cuda_launch {
namespace {

constexpr int kMmTile = 16;

template <class T>
__global__ void int_matmul_kernel(const T* a,
                                  const T* b,
                                  T* c,
                                  const int64_t* a_batch,
                                  const int64_t* b_batch,
                                  int64_t batch,
                                  int64_t m,
                                  int64_t n,
                                  int64_t k,
                                  bool ta,
                                  bool tb) {
    using U = std::make_unsigned_t<T>;
    __shared__ U as[kMmTile][kMmTile + 1];
    __shared__ U bs[kMmTile][kMmTile + 1];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int64_t col = static_cast<int64_t>(blockIdx.x) * kMmTile + tx;
    for (int64_t z = blockIdx.z; z < batch; z += gridDim.z) {
        const T* pa = a + a_batch[z] * m * k;
        const T* pb = b + b_batch[z] * k * n;
        for (int64_t row0 = static_cast<int64_t>(blockIdx.y) * kMmTile; row0 < m;
             row0 += static_cast<int64_t>(gridDim.y) * kMmTile) {
            const int64_t row = row0 + ty;
            U acc = 0;
            for (int64_t k0 = 0; k0 < k; k0 += kMmTile) {
                const int64_t ka = k0 + tx, kb = k0 + ty;
                as[ty][tx] = row < m && ka < k
                                 ? static_cast<U>(ta ? pa[ka * m + row] : pa[row * k + ka])
                                 : 0;
                bs[ty][tx] = kb < k && col < n
                                 ? static_cast<U>(tb ? pb[col * k + kb] : pb[kb * n + col])
                                 : 0;
                __syncthreads();
#pragma unroll
                for (int p = 0; p < kMmTile; ++p)
                    acc += as[ty][p] * bs[p][tx];
                __syncthreads();
            }
            if (row < m && col < n) c[(z * m + row) * n + col] = static_cast<T>(acc);
        }
    }
}

template <class T>
cudaError_t int_matmul_typed(const void* a,
                             const void* b,
                             void* c,
                             const int64_t* a_batch,
                             const int64_t* b_batch,
                             int64_t batch,
                             int64_t m,
                             int64_t n,
                             int64_t k,
                             bool ta,
                             bool tb,
                             cudaStream_t stream) {
    const dim3 grid(static_cast<unsigned>((n + kMmTile - 1) / kMmTile),
                    static_cast<unsigned>(std::min<int64_t>((m + kMmTile - 1) / kMmTile, 65535)),
                    static_cast<unsigned>(std::min<int64_t>(batch, 65535)));
    int_matmul_kernel<T><<<grid, dim3(kMmTile, kMmTile), 0, stream>>>(static_cast<const T*>(a),
                                                                      static_cast<const T*>(b),
                                                                      static_cast<T*>(c),
                                                                      a_batch,
                                                                      b_batch,
                                                                      batch,
                                                                      m,
                                                                      n,
                                                                      k,
                                                                      ta,
                                                                      tb);
    return cudaGetLastError();
}

}  // namespace

cudaError_t int_matmul(Elem elem,
                       const void* a,
                       const void* b,
                       void* c,
                       const int64_t* a_batch,
                       const int64_t* b_batch,
                       int64_t batch,
                       int64_t m,
                       int64_t n,
                       int64_t k,
                       bool transpose_a,
                       bool transpose_b,
                       cudaStream_t stream) {
    if (batch == 0 || m == 0 || n == 0) return cudaSuccess;
    if (elem == Elem::i32) {
        return int_matmul_typed<int32_t>(
            a, b, c, a_batch, b_batch, batch, m, n, k, transpose_a, transpose_b, stream);
    }
    if (elem == Elem::i64) {
        return int_matmul_typed<int64_t>(
            a, b, c, a_batch, b_batch, batch, m, n, k, transpose_a, transpose_b, stream);
    }
    return cudaErrorInvalidValue;
}

}  // namespace tapeflow::cuda_launch
