// Which kernel runs a float32 or float64 gemm of the CPU kernels (matmul, conv2d, attention): the
// one place that chooses between tapeflow's packed sgemm (sgemm_packed.hpp), the unpacked register
// tile (block_gemm.hpp) and OpenBLAS (blas.hpp).
//
// float32 products of at least kPackedSgemmMnk multiply-adds run the packed sgemm in the kernel
// sets built with AVX2 and FMA (x86-64-v3 and v4) when OpenBLAS did not pick an AVX2 kernel for
// this CPU (prefer_packed_sgemm, blas.hpp): near the vector units' peak, 3x OpenBLAS's SSE3
// Prescott fallback, below OpenBLAS's own AVX2 kernels. Smaller products, the baseline and v2 sets
// (SSE has no FMA) and float64 go to OpenBLAS (or its small loop). Attention's block products have
// their own entry (routed_block_gemm). Every choice keeps each element's sum over k in order on one
// thread, and a sliced product is cut by its shape alone (gemm_slices), so results do not depend on
// the thread count.
//
// Header-only: the kernel files that include it are in the ISA dispatch set
// (lib/kernels/isa/meson.build), so each set compiles its own copy with its own kPackedSgemm.
// No state here; prefer_packed_sgemm's lives in blas.cpp (baseline, once per process).
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "core/parallel.hpp"
#include "kernels/cpu/blas.hpp"
#include "kernels/cpu/block_gemm.hpp"
#include "kernels/cpu/sgemm_packed.hpp"

namespace tapeflow::cpu {

#if defined(__AVX2__) && defined(__FMA__)
constexpr bool kPackedSgemm = true;
#else
constexpr bool kPackedSgemm = false;
#endif
// Below this many multiply-adds OpenBLAS (or its small loop) is faster than packing. It is also
// below OpenBLAS's own threading threshold (kThreadedGemmMnk), so a product sent to OpenBLAS only
// for its size never starts OpenBLAS's threads.
constexpr double kPackedSgemmMnk = 32768.0;

/// Whether a T product of m x n x k runs the packed sgemm (else OpenBLAS).
template <class T>
bool runs_packed_sgemm(int64_t m, int64_t n, int64_t k) {
    if constexpr (std::is_same_v<T, float> && kPackedSgemm) {
        return static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) >=
                   kPackedSgemmMnk &&
               prefer_packed_sgemm();
    } else {
        return false;
    }
}

/// C = op(A) op(B) + beta C with beta 0 or 1 (0: C is only written), row-major with leading
/// dimensions as in BLAS, on the calling thread.
template <class T>
void routed_gemm(bool ta,
                 bool tb,
                 int64_t m,
                 int64_t n,
                 int64_t k,
                 const T* a,
                 int64_t lda,
                 const T* b,
                 int64_t ldb,
                 T beta,
                 T* c,
                 int64_t ldc) {
    if constexpr (std::is_same_v<T, float>) {
        if (runs_packed_sgemm<T>(m, n, k)) {
            packed_sgemm(ta, tb, m, n, k, a, lda, b, ldb, beta != 0.0F, c, ldc);
            return;
        }
    }
    gemm<T>(ta, tb, m, n, k, a, lda, b, ldb, beta, c, ldc);
}

/// C = op(A) op(B) (beta 0) cut as gemm_slices (blas.hpp) says, never along k: the slices on
/// tapeflow's threads (`on_threads`) or in order on the calling thread, with the same bits.
template <class T>
void routed_parallel_gemm(bool ta,
                          bool tb,
                          int64_t m,
                          int64_t n,
                          int64_t k,
                          const T* a,
                          int64_t lda,
                          const T* b,
                          int64_t ldb,
                          T* c,
                          int64_t ldc,
                          bool on_threads = true) {
    if constexpr (std::is_same_v<T, float>) {
        if (runs_packed_sgemm<T>(m, n, k)) {
            const auto slice_gemm =
                [&](int64_t rows, int64_t cols, const T* as, const T* bs, T* cs) {
                    packed_sgemm(ta, tb, rows, cols, k, as, lda, bs, ldb, false, cs, ldc);
                };
            for_each_slice(
                gemm_slices(m, n, k), on_threads, ta, tb, m, n, a, lda, b, ldb, c, ldc, slice_gemm);
            return;
        }
    }
    parallel_gemm<T>(ta, tb, m, n, k, a, lda, b, ldb, c, ldc, on_threads);
}

/// parallel_gemms (blas.hpp) for units whose routed gemms are at most m x n x k each: OpenBLAS is
/// held to its calling thread only when it runs them (a smaller last block that falls to OpenBLAS
/// is below its threading threshold, kPackedSgemmMnk).
template <class T, class Body>
void parallel_routed_gemms(int64_t units, int64_t m, int64_t n, int64_t k, const Body& body) {
    if (runs_packed_sgemm<T>(m, n, k)) {
        parallel_for(units, 1, body);
    } else {
        parallel_gemms(units, body);
    }
}

/// Whether routed_block_gemm runs block_gemm.hpp's register tile for T: then it reads op(B)
/// row-major ([k, n]), so a caller with op(B) = B^T passes a transposed copy too.
template <class T>
constexpr bool kBlockTile = std::is_same_v<T, float>;

/// C = op(A) op(B) + beta C (beta 0 or 1) for the block products of the attention kernels (a few
/// hundred rows and columns, inner sizes down to a head's 32), on the calling thread. float32: the
/// unpacked register tile in every set and whatever OpenBLAS detected (at these sizes packing and
/// BLAS dispatch cost as much as the product; the left operand is read in place, transposed or
/// not). float64: OpenBLAS. `b_rows` (row stride ldbr): op(B) row-major, read by the tile only
/// (b itself where tb is false).
template <class T>
void routed_block_gemm(bool ta,
                       bool tb,
                       int64_t m,
                       int64_t n,
                       int64_t k,
                       const T* a,
                       int64_t lda,
                       const T* b,
                       int64_t ldb,
                       const T* b_rows,
                       int64_t ldbr,
                       T beta,
                       T* c,
                       int64_t ldc) {
    if constexpr (kBlockTile<T>) {
        const int64_t ars = ta ? 1 : lda;  // A(i, p) = a[i * ars + p * aks]
        const int64_t aks = ta ? lda : 1;
        const T* rows = tb ? b_rows : b;
        block_gemm(m, n, k, a, ars, aks, rows, tb ? ldbr : ldb, c, ldc, beta != T(0));
    } else {
        gemm<T>(ta, tb, m, n, k, a, lda, b, ldb, beta, c, ldc);
    }
}

/// parallel_gemms for units of routed_block_gemm products: OpenBLAS is held to its calling thread
/// only where it runs them (float64).
template <class T, class Body>
void parallel_block_gemms(int64_t units, const Body& body) {
    if constexpr (kBlockTile<T>) {
        parallel_for(units, 1, body);
    } else {
        parallel_gemms(units, body);
    }
}

}  // namespace tapeflow::cpu
