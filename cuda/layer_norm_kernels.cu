// CUDA kernels of LayerNorm and LayerNormGrad over the rows of [rows, cols]: one block per row
// (its statistics by warp-shuffle block sums, in float32 for the 16-bit types), the backward's
// column sums as per-chunk partials added in chunk order (deterministic, no atomics).
#include <cmath>

#include "device_common.cuh"
#include "launch_fused.hpp"
#include "warp_reduce.cuh"

namespace tapeflow::cuda_launch {
namespace {

constexpr int kRowThreads = 256;
constexpr int64_t kMaxPartials = 64;  // row chunks of the dgamma/dbeta partial sums

/// The sum of v over the block (every thread calls it; blockDim.x == kRowThreads).
template <class C>
__device__ C block_sum(C v) {
    __shared__ C partial[kRowThreads / 32];
    v = warp_sum(v);
    const int lane = threadIdx.x % 32;
    const int warp = threadIdx.x / 32;
    if (lane == 0) partial[warp] = v;
    __syncthreads();
    C total = 0;
#pragma unroll
    for (int w = 0; w < kRowThreads / 32; ++w)
        total += partial[w];
    __syncthreads();  // partial is reused by the next call
    return total;
}

template <class T, class C>
__global__ void layer_norm_kernel(const T* x,
                                  const T* gamma,
                                  const T* beta,
                                  C eps,
                                  T* y,
                                  C* mean,
                                  C* rstd,
                                  int64_t rows,
                                  int64_t cols) {
    for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
        const T* xr = x + r * cols;
        C s = 0;
        for (int64_t j = threadIdx.x; j < cols; j += blockDim.x)
            s += load(xr[j]);
        const C m = block_sum(s) / static_cast<C>(cols);
        C v = 0;
        for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
            const C d = load(xr[j]) - m;
            v += d * d;
        }
        const C inv = C(1) / sqrt(block_sum(v) / static_cast<C>(cols) + eps);
        for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
            y[r * cols + j] = store<T>((load(xr[j]) - m) * inv * load(gamma[j]) + load(beta[j]));
        }
        if (threadIdx.x == 0) {
            mean[r] = m;
            rstd[r] = inv;
        }
    }
}

// dx = rstd (g gamma - mean(g gamma) - xhat mean(g gamma xhat)), one block per row.
template <class T, class C>
__global__ void layer_norm_dx_kernel(const T* dy,
                                     const T* x,
                                     const T* gamma,
                                     const C* mean,
                                     const C* rstd,
                                     T* dx,
                                     int64_t rows,
                                     int64_t cols) {
    for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
        const T* g = dy + r * cols;
        const T* xr = x + r * cols;
        const C m = mean[r];
        const C s = rstd[r];
        C a = 0, b = 0;
        for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
            const C gg = load(g[j]) * load(gamma[j]);
            a += gg;
            b += gg * (load(xr[j]) - m) * s;
        }
        a = block_sum(a) / static_cast<C>(cols);
        b = block_sum(b) / static_cast<C>(cols);
        for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
            const C xhat = (load(xr[j]) - m) * s;
            dx[r * cols + j] = store<T>(s * (load(g[j]) * load(gamma[j]) - a - xhat * b));
        }
    }
}

// partial[chunk] = (sum over the chunk's rows of g xhat, of g): thread per column, y per chunk.
template <class T, class C>
__global__ void layer_norm_partials_kernel(const T* dy,
                                           const T* x,
                                           const C* mean,
                                           const C* rstd,
                                           C* partial,
                                           int64_t rows,
                                           int64_t cols,
                                           int64_t chunk) {
    const int64_t j = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (j >= cols) return;
    const int64_t r0 = blockIdx.y * chunk;
    const int64_t r1 = r0 + chunk < rows ? r0 + chunk : rows;
    C sg = 0, sb = 0;
    for (int64_t r = r0; r < r1; ++r) {
        const C g = load(dy[r * cols + j]);
        sg += g * (load(x[r * cols + j]) - mean[r]) * rstd[r];
        sb += g;
    }
    partial[(2 * blockIdx.y) * cols + j] = sg;
    partial[(2 * blockIdx.y + 1) * cols + j] = sb;
}

template <class T, class C>
__global__ void layer_norm_sum_partials_kernel(
    const C* partial, int64_t chunks, int64_t cols, T* dgamma, T* dbeta) {
    TAPEFLOW_FOR_EACH(j, cols) {
        C sg = 0, sb = 0;
        for (int64_t c = 0; c < chunks; ++c) {
            sg += partial[2 * c * cols + j];
            sb += partial[(2 * c + 1) * cols + j];
        }
        dgamma[j] = store<T>(sg);
        dbeta[j] = store<T>(sb);
    }
}

unsigned row_blocks(int64_t rows) {
    return static_cast<unsigned>(rows < 65535 ? rows : 65535);
}

template <class F>
cudaError_t visit_float(Elem elem, F&& f) {
    if (elem == Elem::f32 || elem == Elem::f64 || elem == Elem::f16 || elem == Elem::bf16) {
        return visit_elem(elem, f);
    }
    return cudaErrorInvalidValue;
}

}  // namespace

cudaError_t layer_norm(Elem elem,
                       const void* x,
                       const void* gamma,
                       const void* beta,
                       double epsilon,
                       void* y,
                       void* mean,
                       void* rstd,
                       int64_t rows,
                       int64_t cols,
                       cudaStream_t stream) {
    if (rows == 0) return cudaSuccess;
    return visit_float(elem, [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (std::is_floating_point_v<T> || kIsHalf<T>) {
            using C = compute_t<T>;
            layer_norm_kernel<T, C>
                <<<row_blocks(rows), kRowThreads, 0, stream>>>(static_cast<const T*>(x),
                                                               static_cast<const T*>(gamma),
                                                               static_cast<const T*>(beta),
                                                               static_cast<C>(epsilon),
                                                               static_cast<T*>(y),
                                                               static_cast<C*>(mean),
                                                               static_cast<C*>(rstd),
                                                               rows,
                                                               cols);
            return cudaGetLastError();
        }
        return cudaErrorInvalidValue;
    });
}

int64_t layer_norm_grad_partials(int64_t rows) {
    return rows < kMaxPartials ? (rows > 0 ? rows : 1) : kMaxPartials;
}

cudaError_t layer_norm_grad(Elem elem,
                            const void* dy,
                            const void* x,
                            const void* gamma,
                            const void* mean,
                            const void* rstd,
                            void* dx,
                            void* dgamma,
                            void* dbeta,
                            void* scratch,
                            int64_t rows,
                            int64_t cols,
                            cudaStream_t stream) {
    if (cols == 0) return cudaSuccess;
    return visit_float(elem, [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (std::is_floating_point_v<T> || kIsHalf<T>) {
            using C = compute_t<T>;
            const auto* g = static_cast<const T*>(dy);
            const auto* xs = static_cast<const T*>(x);
            const auto* m = static_cast<const C*>(mean);
            const auto* s = static_cast<const C*>(rstd);
            if (rows > 0) {
                layer_norm_dx_kernel<T, C><<<row_blocks(rows), kRowThreads, 0, stream>>>(
                    g, xs, static_cast<const T*>(gamma), m, s, static_cast<T*>(dx), rows, cols);
            }
            const int64_t chunks = layer_norm_grad_partials(rows);
            const int64_t chunk = (rows + chunks - 1) / chunks;
            auto* partial = static_cast<C*>(scratch);
            const dim3 grid(static_cast<unsigned>((cols + kThreads - 1) / kThreads),
                            static_cast<unsigned>(chunks));
            layer_norm_partials_kernel<T, C>
                <<<grid, kThreads, 0, stream>>>(g, xs, m, s, partial, rows, cols, chunk);
            layer_norm_sum_partials_kernel<T, C><<<grid_for(cols), kThreads, 0, stream>>>(
                partial, chunks, cols, static_cast<T*>(dgamma), static_cast<T*>(dbeta));
            return cudaGetLastError();
        }
        return cudaErrorInvalidValue;
    });
}

}  // namespace tapeflow::cuda_launch
