// CUDA kernels of DotProductAttention and its backward, FlashAttention-2's tiling: the forward
// keeps a block's query rows in shared memory, streams key/value tiles through shared memory and
// runs the online softmax per row (one warp per row, one key per lane: the warp's max and sum by
// shuffles, the accumulator spread over the lanes along H); only each row's log-sum-exp is
// written besides the output. The backward recomputes the probabilities from it, in two kernels
// without atomics: dq by query rows (streaming keys) and dk, dv by key rows (streaming queries).
// Values compute in float32 (float64 for float64). Masked logits and fully masked rows follow the
// CPU kernels (lib/kernels/cpu/attention_cpu.cpp): -inf, and the -inf log-sum-exp marker.
#include <cmath>

#include "device_common.cuh"
#include "launch_fused.hpp"
#include "warp_reduce.cuh"

namespace tapeflow::cuda_launch {
namespace {

constexpr int kWarps = 4;                     // warps per block
constexpr int kRowsPerWarp = 4;               // query (or key) rows per warp
constexpr int kRows = kWarps * kRowsPerWarp;  // rows per block
constexpr int kTile = 32;                     // streamed keys (or queries) per tile: one per lane

template <class C>
__device__ __forceinline__ C neg_inf() {
    return -static_cast<C>(INFINITY);
}

// Element (row r, column j) of head (bi, ni) of a [B, L, N, H] tensor.
__device__ __forceinline__ int64_t
at(const AttentionParams& p, int64_t len, int64_t bi, int64_t ni, int64_t r, int64_t j) {
    return ((bi * len + r) * p.n + ni) * p.h + j;
}

// The finished logit of (t, s) from the raw product qk: scale, bias, -inf where masked.
template <class T, class C>
__device__ __forceinline__ C
logit(const AttentionParams& p, int64_t bi, int64_t ni, int64_t t, int64_t s, C qk) {
    if (t >= p.t || s >= p.s || (p.causal && s > t)) return neg_inf<C>();
    if (p.mask != nullptr &&
        !p.mask[bi * p.mask_st[0] + ni * p.mask_st[1] + t * p.mask_st[2] + s * p.mask_st[3]]) {
        return neg_inf<C>();
    }
    C x = qk * static_cast<C>(p.scale);
    if (p.bias != nullptr) {
        x += load(static_cast<const T*>(
            p.bias)[bi * p.bias_st[0] + ni * p.bias_st[1] + t * p.bias_st[2] + s * p.bias_st[3]]);
    }
    return x;
}

// Loads rows [r0, r0 + rows) of head (bi, ni) into smem [rows][ld] (zeros past len).
template <class T, class C>
__device__ void load_rows(const T* src,
                          const AttentionParams& p,
                          int64_t len,
                          int64_t bi,
                          int64_t ni,
                          int64_t r0,
                          int rows,
                          C* dst,
                          int ld) {
    for (int i = threadIdx.x; i < rows * p.h; i += blockDim.x) {
        const int r = i / static_cast<int>(p.h);
        const int j = i % static_cast<int>(p.h);
        dst[r * ld + j] = r0 + r < len ? load(src[at(p, len, bi, ni, r0 + r, j)]) : C(0);
    }
}

template <class C>
__device__ __forceinline__ C dot(const C* a, const C* b, int64_t h) {
    C sum = 0;
    for (int64_t j = 0; j < h; ++j)
        sum += a[j] * b[j];
    return sum;
}

// acc[c] += sum_j w_j tile[j][lane + 32 c], where lane j holds w_j (the row-times-tile product
// that every kernel here accumulates).
template <int kHc, class C>
__device__ __forceinline__ void accumulate(
    C (&acc)[kHc], C w, const C* tile, int ld, int64_t h, int lane) {
    for (int j = 0; j < kTile; ++j) {
        const C wj = __shfl_sync(0xffffffffU, w, j);
#pragma unroll
        for (int c = 0; c < kHc; ++c) {
            const int col = lane + 32 * c;
            if (col < h) acc[c] += wj * tile[j * ld + col];
        }
    }
}

// Writes the lanes' parts of row r of head (bi, ni) of a [B, L, N, H] tensor.
template <class T, int kHc, class C>
__device__ __forceinline__ void store_row(T* dst,
                                          const AttentionParams& p,
                                          int64_t len,
                                          int64_t bi,
                                          int64_t ni,
                                          int64_t r,
                                          const C (&acc)[kHc],
                                          int lane) {
#pragma unroll
    for (int c = 0; c < kHc; ++c) {
        const int col = lane + 32 * c;
        if (col < p.h) dst[at(p, len, bi, ni, r, col)] = store<T>(acc[c]);
    }
}

// Keys [0, end) can be unmasked for rows [t0, t0 + rows) (causal without a mask: none is fully
// masked, so tiles right of the band are skipped).
__device__ __forceinline__ int64_t key_end(const AttentionParams& p, int64_t t0) {
    const int64_t band = t0 + kRows;
    return p.causal && p.mask == nullptr && band < p.s ? band : p.s;
}

// grid (query blocks, b * n); shared: q [kRows][h], k and v tiles [kTile][h + 1].
template <class T, int kHc>
__global__ void attention_fwd_kernel(
    AttentionParams p, const T* q, const T* k, const T* v, T* out, compute_t<T>* lse) {
    using C = compute_t<T>;
    extern __shared__ unsigned char smem_raw[];
    C* qs = reinterpret_cast<C*>(smem_raw);
    const int ld = static_cast<int>(p.h) + 1;
    C* ks = qs + kRows * p.h;
    C* vs = ks + kTile * ld;
    const int64_t head = blockIdx.y;
    const int64_t bi = head / p.n, ni = head % p.n;
    const int64_t t0 = static_cast<int64_t>(blockIdx.x) * kRows;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    load_rows(q, p, p.t, bi, ni, t0, kRows, qs, static_cast<int>(p.h));
    C m[kRowsPerWarp], l[kRowsPerWarp], acc[kRowsPerWarp][kHc];
#pragma unroll
    for (int r = 0; r < kRowsPerWarp; ++r) {
        m[r] = neg_inf<C>();
        l[r] = 0;
#pragma unroll
        for (int c = 0; c < kHc; ++c)
            acc[r][c] = 0;
    }
    const int64_t end = key_end(p, t0);
    for (int64_t s0 = 0; s0 < end; s0 += kTile) {
        __syncthreads();
        load_rows(k, p, p.s, bi, ni, s0, kTile, ks, ld);
        load_rows(v, p, p.s, bi, ni, s0, kTile, vs, ld);
        __syncthreads();
#pragma unroll
        for (int r = 0; r < kRowsPerWarp; ++r) {
            const int row = warp * kRowsPerWarp + r;
            const int64_t t = t0 + row;
            const C x = logit<T>(p, bi, ni, t, s0 + lane, dot(qs + row * p.h, ks + lane * ld, p.h));
            const C m_new = fmax(m[r], warp_max(x));
            if (m_new == neg_inf<C>()) continue;  // every key so far masked
            const C e = exp(x - m_new);
            const C alpha = exp(m[r] - m_new);
            l[r] = l[r] * alpha + warp_sum(e);
            m[r] = m_new;
#pragma unroll
            for (int c = 0; c < kHc; ++c)
                acc[r][c] *= alpha;
            accumulate(acc[r], e, vs, ld, p.h, lane);
        }
    }
#pragma unroll
    for (int r = 0; r < kRowsPerWarp; ++r) {
        const int64_t t = t0 + warp * kRowsPerWarp + r;
        if (t >= p.t) continue;
        const bool all_masked = m[r] == neg_inf<C>();
        for (int c = 0; c < kHc; ++c) {
            const int h = lane + 32 * c;
            if (h >= p.h) continue;
            if (all_masked) {  // the mean of the values, as Keras' uniform softmax gives
                C sum = 0;
                for (int64_t s = 0; s < p.s; ++s)
                    sum += load(v[at(p, p.s, bi, ni, s, h)]);
                acc[r][c] = p.s > 0 ? sum / static_cast<C>(p.s) : C(0);
            } else {
                acc[r][c] /= l[r];
            }
        }
        store_row(out, p, p.t, bi, ni, t, acc[r], lane);
        if (lane == 0) lse[head * p.t + t] = all_masked ? m[r] : m[r] + log(l[r]);
    }
}

// d[row] = sum_h dout * out, one warp per row.
template <class T>
__global__ void attention_rowdot_kernel(AttentionParams p,
                                        const T* dout,
                                        const T* out,
                                        compute_t<T>* d) {
    using C = compute_t<T>;
    const int64_t row = blockIdx.x * static_cast<int64_t>(kWarps) + threadIdx.x / 32;
    if (row >= p.b * p.n * p.t) return;
    const int64_t head = row / p.t, t = row % p.t;
    const int64_t bi = head / p.n, ni = head % p.n;
    C sum = 0;
    for (int64_t h = threadIdx.x % 32; h < p.h; h += 32) {
        const int64_t i = at(p, p.t, bi, ni, t, h);
        sum += load(dout[i]) * load(out[i]);
    }
    sum = warp_sum(sum);
    if (threadIdx.x % 32 == 0) d[row] = sum;
}

// The probability and the logit gradient of (t, s) for lane s: p and ds = p (dp - d).
template <class T, class C>
__device__ __forceinline__ void prob_and_grad(const AttentionParams& p,
                                              int64_t bi,
                                              int64_t ni,
                                              int64_t t,
                                              int64_t s,
                                              C qk,
                                              C row_lse,
                                              C dp,
                                              C d,
                                              C& prob,
                                              C& ds) {
    if (t >= p.t || s >= p.s) {
        prob = 0, ds = 0;
    } else if (row_lse == neg_inf<C>()) {  // fully masked row: uniform, no logit gradient
        prob = C(1) / static_cast<C>(p.s), ds = 0;
    } else {
        prob = exp(logit<T>(p, bi, ni, t, s, qk) - row_lse);
        ds = prob * (dp - d);
    }
}

// dq (and dbias) by query rows: grid (query blocks, b * n); shared: q and dout [kRows][h], k and v
// tiles [kTile][h + 1].
template <class T, int kHc>
__global__ void attention_dq_kernel(AttentionParams p,
                                    const T* dout,
                                    const T* q,
                                    const T* k,
                                    const T* v,
                                    const compute_t<T>* lse,
                                    const compute_t<T>* d,
                                    T* dq,
                                    T* dbias) {
    using C = compute_t<T>;
    extern __shared__ unsigned char smem_raw[];
    C* qs = reinterpret_cast<C*>(smem_raw);
    const int ld = static_cast<int>(p.h) + 1;
    C* dos = qs + kRows * p.h;
    C* ks = dos + kRows * p.h;
    C* vs = ks + kTile * ld;
    const int64_t head = blockIdx.y;
    const int64_t bi = head / p.n, ni = head % p.n;
    const int64_t t0 = static_cast<int64_t>(blockIdx.x) * kRows;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    load_rows(q, p, p.t, bi, ni, t0, kRows, qs, static_cast<int>(p.h));
    load_rows(dout, p, p.t, bi, ni, t0, kRows, dos, static_cast<int>(p.h));
    C acc[kRowsPerWarp][kHc];
    C row_lse[kRowsPerWarp], row_d[kRowsPerWarp];
#pragma unroll
    for (int r = 0; r < kRowsPerWarp; ++r) {
        const int64_t t = t0 + warp * kRowsPerWarp + r;
        row_lse[r] = t < p.t ? lse[head * p.t + t] : C(0);
        row_d[r] = t < p.t ? d[head * p.t + t] : C(0);
#pragma unroll
        for (int c = 0; c < kHc; ++c)
            acc[r][c] = 0;
    }
    const int64_t end = dbias != nullptr ? p.s : key_end(p, t0);  // dbias: every cell written
    const C scale = static_cast<C>(p.scale);
    for (int64_t s0 = 0; s0 < end; s0 += kTile) {
        __syncthreads();
        load_rows(k, p, p.s, bi, ni, s0, kTile, ks, ld);
        load_rows(v, p, p.s, bi, ni, s0, kTile, vs, ld);
        __syncthreads();
#pragma unroll
        for (int r = 0; r < kRowsPerWarp; ++r) {
            const int row = warp * kRowsPerWarp + r;
            const int64_t t = t0 + row;
            const int64_t s = s0 + lane;
            C prob, ds;
            prob_and_grad<T>(p,
                             bi,
                             ni,
                             t,
                             s,
                             dot(qs + row * p.h, ks + lane * ld, p.h),
                             row_lse[r],
                             dot(dos + row * p.h, vs + lane * ld, p.h),
                             row_d[r],
                             prob,
                             ds);
            if (dbias != nullptr && t < p.t && s < p.s) {
                dbias[(head * p.t + t) * p.s + s] = store<T>(ds);
            }
            accumulate(acc[r], ds * scale, ks, ld, p.h, lane);
        }
    }
#pragma unroll
    for (int r = 0; r < kRowsPerWarp; ++r) {
        const int64_t t = t0 + warp * kRowsPerWarp + r;
        if (t < p.t) store_row(dq, p, p.t, bi, ni, t, acc[r], lane);
    }
}

// dk, dv by key rows: grid (key blocks, b * n); shared: k and v [kRows][h], q and dout tiles
// [kTile][h + 1], the tile's lse and d.
template <class T, int kHc>
__global__ void attention_dkv_kernel(AttentionParams p,
                                     const T* dout,
                                     const T* q,
                                     const T* k,
                                     const T* v,
                                     const compute_t<T>* lse,
                                     const compute_t<T>* d,
                                     T* dk,
                                     T* dv) {
    using C = compute_t<T>;
    extern __shared__ unsigned char smem_raw[];
    C* ks = reinterpret_cast<C*>(smem_raw);
    const int ld = static_cast<int>(p.h) + 1;
    C* vs = ks + kRows * p.h;
    C* qs = vs + kRows * p.h;
    C* dos = qs + kTile * ld;
    C* tile_lse = dos + kTile * ld;
    C* tile_d = tile_lse + kTile;
    const int64_t head = blockIdx.y;
    const int64_t bi = head / p.n, ni = head % p.n;
    const int64_t s0 = static_cast<int64_t>(blockIdx.x) * kRows;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    load_rows(k, p, p.s, bi, ni, s0, kRows, ks, static_cast<int>(p.h));
    load_rows(v, p, p.s, bi, ni, s0, kRows, vs, static_cast<int>(p.h));
    C ak[kRowsPerWarp][kHc], av[kRowsPerWarp][kHc];
#pragma unroll
    for (int r = 0; r < kRowsPerWarp; ++r) {
#pragma unroll
        for (int c = 0; c < kHc; ++c)
            ak[r][c] = av[r][c] = 0;
    }
    // Causal without a mask: queries before s0 see none of these keys.
    const int64_t first = p.causal && p.mask == nullptr ? s0 / kTile * kTile : 0;
    const C scale = static_cast<C>(p.scale);
    for (int64_t t0 = first; t0 < p.t; t0 += kTile) {
        __syncthreads();
        load_rows(q, p, p.t, bi, ni, t0, kTile, qs, ld);
        load_rows(dout, p, p.t, bi, ni, t0, kTile, dos, ld);
        if (threadIdx.x < kTile) {
            const int64_t t = t0 + threadIdx.x;
            tile_lse[threadIdx.x] = t < p.t ? lse[head * p.t + t] : C(0);
            tile_d[threadIdx.x] = t < p.t ? d[head * p.t + t] : C(0);
        }
        __syncthreads();
#pragma unroll
        for (int r = 0; r < kRowsPerWarp; ++r) {
            const int row = warp * kRowsPerWarp + r;
            const int64_t s = s0 + row;
            const int64_t t = t0 + lane;
            C prob, ds;
            prob_and_grad<T>(p,
                             bi,
                             ni,
                             t,
                             s,
                             dot(qs + lane * ld, ks + row * p.h, p.h),
                             tile_lse[lane],
                             dot(dos + lane * ld, vs + row * p.h, p.h),
                             tile_d[lane],
                             prob,
                             ds);
            accumulate(av[r], prob, dos, ld, p.h, lane);
            accumulate(ak[r], ds * scale, qs, ld, p.h, lane);
        }
    }
#pragma unroll
    for (int r = 0; r < kRowsPerWarp; ++r) {
        const int64_t s = s0 + warp * kRowsPerWarp + r;
        if (s >= p.s) continue;
        store_row(dk, p, p.s, bi, ni, s, ak[r], lane);
        store_row(dv, p, p.s, bi, ni, s, av[r], lane);
    }
}

unsigned blocks_of(int64_t rows) {
    return static_cast<unsigned>((rows + kRows - 1) / kRows);
}

// f(tag, chunks) with H / 32 rounded up to a power of two (1, 2 or 4).
template <class F>
cudaError_t visit_head(Elem elem, int64_t h, F&& f) {
    if (h > kMaxAttentionHead) return cudaErrorInvalidValue;
    if (elem != Elem::f32 && elem != Elem::f64 && elem != Elem::f16 && elem != Elem::bf16) {
        return cudaErrorInvalidValue;
    }
    return visit_elem(elem, [&](auto tag) -> cudaError_t {
        using T = typename decltype(tag)::type;
        if constexpr (std::is_floating_point_v<T> || kIsHalf<T>) {
            if (h <= 32) return f(tag, std::integral_constant<int, 1>{});
            if (h <= 64) return f(tag, std::integral_constant<int, 2>{});
            return f(tag, std::integral_constant<int, 4>{});
        }
        return cudaErrorInvalidValue;
    });
}

template <class Kernel>
cudaError_t allow_smem(Kernel kernel, std::size_t bytes) {
    return bytes > 48 * 1024
               ? cudaFuncSetAttribute(
                     kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes))
               : cudaSuccess;
}

}  // namespace

cudaError_t attention(Elem elem,
                      const AttentionParams& p,
                      const void* q,
                      const void* k,
                      const void* v,
                      void* out,
                      void* lse,
                      cudaStream_t stream) {
    if (p.b * p.n * p.t == 0) return cudaSuccess;
    return visit_head(elem, p.h, [&](auto tag, auto chunks) -> cudaError_t {
        using T = typename decltype(tag)::type;
        using C = compute_t<T>;
        const std::size_t smem = sizeof(C) * (kRows * p.h + 2 * kTile * (p.h + 1));
        auto kernel = attention_fwd_kernel<T, decltype(chunks)::value>;
        if (const cudaError_t e = allow_smem(kernel, smem); e != cudaSuccess) return e;
        kernel<<<dim3(blocks_of(p.t), static_cast<unsigned>(p.b * p.n)),
                 kWarps * 32,
                 smem,
                 stream>>>(p,
                           static_cast<const T*>(q),
                           static_cast<const T*>(k),
                           static_cast<const T*>(v),
                           static_cast<T*>(out),
                           static_cast<C*>(lse));
        return cudaGetLastError();
    });
}

cudaError_t attention_grad(Elem elem,
                           const AttentionParams& p,
                           const void* dout,
                           const void* q,
                           const void* k,
                           const void* v,
                           const void* out,
                           const void* lse,
                           void* dq,
                           void* dk,
                           void* dv,
                           void* dbias,
                           void* scratch,
                           cudaStream_t stream) {
    return visit_head(elem, p.h, [&](auto tag, auto chunks) -> cudaError_t {
        using T = typename decltype(tag)::type;
        using C = compute_t<T>;
        constexpr int kHc = decltype(chunks)::value;
        const auto* g = static_cast<const T*>(dout);
        const auto* qp = static_cast<const T*>(q);
        const auto* kp = static_cast<const T*>(k);
        const auto* vp = static_cast<const T*>(v);
        const auto* l = static_cast<const C*>(lse);
        auto* d = static_cast<C*>(scratch);
        const unsigned heads = static_cast<unsigned>(p.b * p.n);
        if (p.b * p.n * p.t > 0) {
            const int64_t rows = p.b * p.n * p.t;
            attention_rowdot_kernel<T>
                <<<static_cast<unsigned>((rows + kWarps - 1) / kWarps), kWarps * 32, 0, stream>>>(
                    p, g, static_cast<const T*>(out), d);
            const std::size_t smem = sizeof(C) * (2 * kRows * p.h + 2 * kTile * (p.h + 1));
            auto kernel = attention_dq_kernel<T, kHc>;
            if (const cudaError_t e = allow_smem(kernel, smem); e != cudaSuccess) return e;
            kernel<<<dim3(blocks_of(p.t), heads), kWarps * 32, smem, stream>>>(
                p, g, qp, kp, vp, l, d, static_cast<T*>(dq), static_cast<T*>(dbias));
        }
        if (p.b * p.n * p.s > 0) {
            const std::size_t smem =
                sizeof(C) * (2 * kRows * p.h + 2 * kTile * (p.h + 1) + 2 * kTile);
            auto kernel = attention_dkv_kernel<T, kHc>;
            if (const cudaError_t e = allow_smem(kernel, smem); e != cudaSuccess) return e;
            kernel<<<dim3(blocks_of(p.s), heads), kWarps * 32, smem, stream>>>(
                p, g, qp, kp, vp, l, d, static_cast<T*>(dk), static_cast<T*>(dv));
        }
        return cudaGetLastError();
    });
}

}  // namespace tapeflow::cuda_launch
