// A small register-blocked gemm over xsimd batches, for the block products of the attention
// kernels (blocks of at most a few hundred rows and columns, inner sizes such as the head size 32):
// there the packing and dispatch of a full BLAS cost as much as the product, and the BLAS's
// kernel depends on what the installed OpenBLAS detects (the SSE3 kernel on CPUs it does not
// know). Header-only so that each ISA set of the including kernel file gets its own copy
// (lib/kernels/isa/meson.build). No state.
#pragma once

#include <cstdint>
#include <type_traits>

#include <xsimd/xsimd.hpp>
#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace tapeflow::cpu {

namespace block_gemm_detail {

// a * b + c rounded once. xsimd 8's AVX-512 batches have no fma of their own: its generic one is
// a multiply and an add, which -ffp-contract=off (lib/kernels/isa/meson.build) leaves unfused, so
// the v4 set ran two instructions per step and rounded twice (other bits than the v3 set's tile).
template <class B>
inline B fused(const B& a, const B& b, const B& c) {
#if defined(__AVX512F__)
    using T = typename B::value_type;
    if constexpr (sizeof(typename B::register_type) == 64 && std::is_same_v<T, float>) {
        return _mm512_fmadd_ps(a, b, c);
    } else if constexpr (sizeof(typename B::register_type) == 64 && std::is_same_v<T, double>) {
        return _mm512_fmadd_pd(a, b, c);
    } else {
        return xsimd::fma(a, b, c);
    }
#else
    return xsimd::fma(a, b, c);
#endif
}

// One MR x (NV batches) tile of C: the accumulators stay in registers over the whole k loop
// (MR up to 12: sgemm_packed.hpp's AVX-512 tile).
// A(i, p) = a[i * ars + p * aks] (any strides: each element is broadcast), B(p, j) = b[p * ldb +
// j].
template <int MR, int NV, class T>
inline void tile(int64_t k,
                 const T* a,
                 int64_t ars,
                 int64_t aks,
                 const T* b,
                 int64_t ldb,
                 T* c,
                 int64_t ldc,
                 bool accumulate) {
    using B = xsimd::batch<T>;
    constexpr auto W = static_cast<int64_t>(B::size);
    B r[MR][NV];
#pragma GCC unroll 12
    for (int i = 0; i < MR; ++i) {
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v)
            r[i][v] = accumulate ? B::load_unaligned(c + i * ldc + v * W) : B(T(0));
    }
    for (int64_t p = 0; p < k; ++p) {
        B bv[NV];
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v)
            bv[v] = B::load_unaligned(b + p * ldb + v * W);
        const T* ap = a + p * aks;
#pragma GCC unroll 12
        for (int i = 0; i < MR; ++i) {
            const B ai(ap[i * ars]);
#pragma GCC unroll 4
            for (int v = 0; v < NV; ++v)
                r[i][v] = fused(ai, bv[v], r[i][v]);
        }
    }
#pragma GCC unroll 12
    for (int i = 0; i < MR; ++i) {
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v)
            r[i][v].store_unaligned(c + i * ldc + v * W);
    }
}

template <int NV, class T>
inline void column_strip(int64_t m,
                         int64_t k,
                         const T* a,
                         int64_t ars,
                         int64_t aks,
                         const T* b,
                         int64_t ldb,
                         T* c,
                         int64_t ldc,
                         bool accumulate) {
    constexpr int MR = 6;  // 6 x 2 batches: 12 accumulators, 2 B batches and a broadcast
    int64_t i = 0;
    for (; i + MR <= m; i += MR)
        tile<MR, NV>(k, a + i * ars, ars, aks, b, ldb, c + i * ldc, ldc, accumulate);
    const T* ai = a + i * ars;
    T* ci = c + i * ldc;
    switch (m - i) {
        case 5:
            tile<5, NV>(k, ai, ars, aks, b, ldb, ci, ldc, accumulate);
            break;
        case 4:
            tile<4, NV>(k, ai, ars, aks, b, ldb, ci, ldc, accumulate);
            break;
        case 3:
            tile<3, NV>(k, ai, ars, aks, b, ldb, ci, ldc, accumulate);
            break;
        case 2:
            tile<2, NV>(k, ai, ars, aks, b, ldb, ci, ldc, accumulate);
            break;
        case 1:
            tile<1, NV>(k, ai, ars, aks, b, ldb, ci, ldc, accumulate);
            break;
        default:
            break;
    }
}

}  // namespace block_gemm_detail

/// C[m, n] = A B (accumulate: C += A B) with A(i, p) = a[i * ars + p * aks] (so A may be read
/// transposed: ars = 1, aks = its row stride), B row-major [k, n] (ldb), C row-major (ldc).
/// The sum over p runs in order for every element, whatever the tile.
template <class T>
void block_gemm(int64_t m,
                int64_t n,
                int64_t k,
                const T* a,
                int64_t ars,
                int64_t aks,
                const T* b,
                int64_t ldb,
                T* c,
                int64_t ldc,
                bool accumulate) {
    using namespace block_gemm_detail;
    constexpr auto W = static_cast<int64_t>(xsimd::batch<T>::size);
    int64_t j = 0;
    for (; j + 2 * W <= n; j += 2 * W)
        column_strip<2>(m, k, a, ars, aks, b + j, ldb, c + j, ldc, accumulate);
    for (; j + W <= n; j += W)
        column_strip<1>(m, k, a, ars, aks, b + j, ldb, c + j, ldc, accumulate);
    for (; j < n; ++j) {  // the last n % W columns
        for (int64_t i = 0; i < m; ++i) {
            T sum = accumulate ? c[i * ldc + j] : T(0);
            for (int64_t p = 0; p < k; ++p)
                sum += a[i * ars + p * aks] * b[p * ldb + j];
            c[i * ldc + j] = sum;
        }
    }
}

}  // namespace tapeflow::cpu
