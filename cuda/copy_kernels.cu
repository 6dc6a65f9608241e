// The one data-movement kernel behind transpose, slice, strided_slice(_grad), pad, tile,
// broadcast_to, concat/stack and split/unstack: a strided walk over an index space that writes
// out[strides[0] . idx] = in[strides[1] . idx]; and mirror_pad's per-axis mirror map. Elements
// move as 1/2/4/8-byte words, so one instantiation per element size serves every dtype.
// ops_cuda_array.cpp builds the plans. Transposes that swap the last two (merged) axes use a
// tiled shared-memory kernel instead, so that both sides are read and written along rows.
#include <algorithm>

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

// The same walk by rows (long innermost dimension): no per-element index arithmetic.
template <class E>
__global__ void strided_copy_rows(E* out, const E* in, int64_t rows, IndexPlan<2> plan) {
    const int inner = plan.rank - 1;
    const int64_t cols = plan.dims[inner];
    const int64_t so = plan.strides[0][inner], si = plan.strides[1][inner];
    const int64_t base = static_cast<int64_t>(blockIdx.x) * blockDim.x * kUnroll + threadIdx.x;
    for (int64_t row = blockIdx.y; row < rows; row += gridDim.y) {
        int64_t off[2];
        row_offsets(plan, row, off);
        E v[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
            const int64_t c = base + static_cast<int64_t>(u) * blockDim.x;
            if (c < cols) v[u] = in[off[1] + c * si];
        }
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
            const int64_t c = base + static_cast<int64_t>(u) * blockDim.x;
            if (c < cols) out[off[0] + c * so] = v[u];
        }
    }
}

template <class E>
cudaError_t copy_typed(
    void* out, const void* in, int64_t n, const IndexPlan<2>& plan, cudaStream_t stream) {
    if (use_rows(plan)) {
        const int64_t cols = plan.dims[plan.rank - 1];
        strided_copy_rows<E><<<row_grid(n / cols, cols), kThreads, 0, stream>>>(
            static_cast<E*>(out), static_cast<const E*>(in), n / cols, plan);
        return cudaGetLastError();
    }
    strided_copy_kernel<E><<<blocks_for(n, 1), kThreads, 0, stream>>>(
        static_cast<E*>(out), static_cast<const E*>(in), n, plan);
    return cudaGetLastError();
}

// Batched 2-D transpose in 32x32 tiles through shared memory: in [batch, rows, cols] to out
// [batch, cols, rows], reads and writes both along rows (coalesced); the +1 column avoids bank
// conflicts. Grid: x = column tiles, y = row tiles, z = batches (y and z loop past the grid limit).
constexpr int kTile = 32;
constexpr int kTileRows = 8;

template <class E>
__global__ void transpose_tiled_kernel(
    const E* in, E* out, int64_t batch, int64_t rows, int64_t cols) {
    __shared__ E tile[kTile][kTile + 1];
    const int64_t c0 = static_cast<int64_t>(blockIdx.x) * kTile;
    for (int64_t b = blockIdx.z; b < batch; b += gridDim.z) {
        const E* src = in + b * rows * cols;
        E* dst = out + b * rows * cols;
        for (int64_t r0 = static_cast<int64_t>(blockIdx.y) * kTile; r0 < rows;
             r0 += static_cast<int64_t>(gridDim.y) * kTile) {
            const int64_t c = c0 + threadIdx.x;
            for (int k = threadIdx.y; k < kTile; k += kTileRows) {
                const int64_t r = r0 + k;
                if (r < rows && c < cols) tile[k][threadIdx.x] = src[r * cols + c];
            }
            __syncthreads();
            const int64_t r = r0 + threadIdx.x;  // now threads run along the output's rows
            for (int k = threadIdx.y; k < kTile; k += kTileRows) {
                const int64_t oc = c0 + k;
                if (r < rows && oc < cols) dst[oc * rows + r] = tile[threadIdx.x][k];
            }
            __syncthreads();
        }
    }
}

template <class E>
cudaError_t transpose_typed(
    void* out, const void* in, int64_t batch, int64_t rows, int64_t cols, cudaStream_t stream) {
    const auto tiles = [](int64_t n, int64_t limit) {
        return static_cast<unsigned>(std::min<int64_t>((n + kTile - 1) / kTile, limit));
    };
    const dim3 grid(static_cast<unsigned>((cols + kTile - 1) / kTile),
                    tiles(rows, 65535),
                    static_cast<unsigned>(std::min<int64_t>(batch, 65535)));
    transpose_tiled_kernel<E><<<grid, dim3(kTile, kTileRows), 0, stream>>>(
        static_cast<const E*>(in), static_cast<E*>(out), batch, rows, cols);
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
        const int64_t src =
            j < 0 ? -j - 1 + p.offset : (j >= size ? 2 * size - 1 - p.offset - j : j);
        off += src * stride;
        stride *= size;
    }
    out[i] = in[off];
}

template <class E>
cudaError_t mirror_typed(
    void* out, const void* in, int64_t n, const MirrorPlan& plan, cudaStream_t stream) {
    mirror_pad_kernel<E><<<blocks_for(n, 1), kThreads, 0, stream>>>(
        static_cast<E*>(out), static_cast<const E*>(in), n, plan);
    return cudaGetLastError();
}

}  // namespace

cudaError_t mirror_pad(void* out,
                       const void* in,
                       int element_size,
                       int64_t n,
                       const MirrorPlan& plan,
                       cudaStream_t stream) {
    if (n == 0) return cudaSuccess;
    switch (element_size) {
        case 1:
            return mirror_typed<uint8_t>(out, in, n, plan, stream);
        case 2:
            return mirror_typed<uint16_t>(out, in, n, plan, stream);
        case 4:
            return mirror_typed<uint32_t>(out, in, n, plan, stream);
        default:
            return mirror_typed<uint64_t>(out, in, n, plan, stream);
    }
}

cudaError_t transpose_last2(void* out,
                            const void* in,
                            int element_size,
                            int64_t batch,
                            int64_t rows,
                            int64_t cols,
                            cudaStream_t stream) {
    if (batch == 0 || rows == 0 || cols == 0) return cudaSuccess;
    switch (element_size) {
        case 1:
            return transpose_typed<uint8_t>(out, in, batch, rows, cols, stream);
        case 2:
            return transpose_typed<uint16_t>(out, in, batch, rows, cols, stream);
        case 4:
            return transpose_typed<uint32_t>(out, in, batch, rows, cols, stream);
        default:
            return transpose_typed<uint64_t>(out, in, batch, rows, cols, stream);
    }
}

cudaError_t strided_copy(
    void* out, const void* in, int element_size, const IndexPlan<2>& plan, cudaStream_t stream) {
    int64_t n = 1;
    for (int d = 0; d < plan.rank; ++d)
        n *= plan.dims[d];
    if (n == 0) return cudaSuccess;
    switch (element_size) {
        case 1:
            return copy_typed<uint8_t>(out, in, n, plan, stream);
        case 2:
            return copy_typed<uint16_t>(out, in, n, plan, stream);
        case 4:
            return copy_typed<uint32_t>(out, in, n, plan, stream);
        default:
            return copy_typed<uint64_t>(out, in, n, plan, stream);
    }
}

}  // namespace tapeflow::cuda_launch
