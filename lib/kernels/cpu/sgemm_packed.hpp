// A cache-blocked, packed float32 gemm (the BLIS loop order) for the matmul kernels, so that large
// float32 products run at the CPU's vector width whatever the installed OpenBLAS detects
// (OpenBLAS 0.3.21 takes some AVX-512 CPUs for Prescott and runs its SSE3 kernel). B is packed in
// [KC x NR] panels, A in [MR x KC] panels of an [MC x KC] block, and an MR x NR register tile of
// C stays in registers over each KC slice (block_gemm.hpp's register tile, reading the packed
// panels; each KC slice continues C's sums, so every element is summed over k in order).
// Header-only so that each ISA set of the including kernel file gets its own copy
// (lib/kernels/isa/meson.build); the packing buffers belong to the call, no state.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <new>

#include <xsimd/xsimd.hpp>

#include "kernels/cpu/block_gemm.hpp"

namespace tapeflow::cpu {

namespace sgemm_detail {

using Batch = xsimd::batch<float>;
inline constexpr int kW = static_cast<int>(Batch::size);
inline constexpr int kNV = 2;  // NR = 2 batches: 16 columns (AVX2), 32 (AVX-512)
inline constexpr int kNR = kNV * kW;
inline constexpr int kMR = kW >= 16 ? 12 : 6;  // accumulators: 24 of 32 zmm, 12 of 16 ymm
inline constexpr int64_t kKC = 256;            // a B micro-panel (KC x NR) stays in L1/L2
inline constexpr int64_t kMC = kMR * 16;       // an A block (MC x KC) stays in L2
inline constexpr int64_t kNC = 2048;           // a B block (KC x NC) stays in L3

// Packing buffers on 64-byte boundaries: each k step's NR floats of B are then whole cache lines
// (with new[]'s 16-byte alignment every other 32-byte load split a line).
struct AlignedDelete {
    void operator()(float* p) const { ::operator delete[](p, std::align_val_t{64}); }
};
using PackBuffer = std::unique_ptr<float[], AlignedDelete>;
inline PackBuffer pack_buffer(int64_t floats) {
    return PackBuffer(static_cast<float*>(
        ::operator new[](static_cast<std::size_t>(floats) * sizeof(float), std::align_val_t{64})));
}

// op(A)(i, p) and op(B)(p, j) of row-major A and B with the BLAS transpose flags.
struct Operands {
    const float* a;
    int64_t lda;
    bool ta;
    const float* b;
    int64_t ldb;
    bool tb;
};

// A panel `width` wide from `runs` runs of kc contiguous floats (run j at first + j * ld) as
// column j of the p-major panel; the columns from `runs` on are zeros.
inline void pack_runs(
    const float* first, int64_t ld, int64_t runs, int64_t width, int64_t kc, float* dst) {
    for (int64_t j = 0; j < width; ++j) {
        if (j < runs) {
            const float* src = first + j * ld;
            for (int64_t p = 0; p < kc; ++p)
                dst[p * width + j] = src[p];
        } else {
            for (int64_t p = 0; p < kc; ++p)
                dst[p * width + j] = 0.0F;
        }
    }
}

// B rows [pc, pc + kc), columns [jc, jc + nc) as NR-wide panels, p-major inside a panel; the last
// panel is padded with zeros.
inline void pack_b(const Operands& o, int64_t pc, int64_t kc, int64_t jc, int64_t nc, float* dst) {
    for (int64_t jr = 0; jr < nc; jr += kNR, dst += kc * kNR) {
        const int64_t nr = std::min<int64_t>(kNR, nc - jr);
        if (!o.tb && nr == kNR) {  // whole panel: NV vector copies per row of k
            for (int64_t p = 0; p < kc; ++p) {
                const float* src = o.b + (pc + p) * o.ldb + jc + jr;
#pragma GCC unroll 4
                for (int v = 0; v < kNV; ++v)
                    Batch::load_unaligned(src + v * kW).store_aligned(dst + p * kNR + v * kW);
            }
        } else if (!o.tb) {
            for (int64_t p = 0; p < kc; ++p) {
                float* out = std::copy_n(o.b + (pc + p) * o.ldb + jc + jr, nr, dst + p * kNR);
                std::fill(out, dst + (p + 1) * kNR, 0.0F);
            }
        } else {  // B stored [n, k]: read each column's run of k contiguously
            pack_runs(o.b + (jc + jr) * o.ldb + pc, o.ldb, nr, kNR, kc, dst);
        }
    }
}

// A rows [ic, ic + mc), columns [pc, pc + kc) as MR-tall panels, p-major inside a panel; the last
// panel is padded with zeros.
inline void pack_a(const Operands& o, int64_t ic, int64_t mc, int64_t pc, int64_t kc, float* dst) {
    for (int64_t ir = 0; ir < mc; ir += kMR, dst += kc * kMR) {
        const int64_t mr = std::min<int64_t>(kMR, mc - ir);
        if (o.ta) {  // A stored [k, m]: each p's MR values are contiguous
            for (int64_t p = 0; p < kc; ++p) {
                float* out = std::copy_n(o.a + (pc + p) * o.lda + ic + ir, mr, dst + p * kMR);
                std::fill(out, dst + (p + 1) * kMR, 0.0F);
            }
        } else if (mr == kMR) {  // whole panel: MR row streams, contiguous writes
            const float* src = o.a + (ic + ir) * o.lda + pc;
            for (int64_t p = 0; p < kc; ++p) {
#pragma GCC unroll 12
                for (int i = 0; i < kMR; ++i)
                    dst[p * kMR + i] = src[i * o.lda + p];
            }
        } else {  // a partial panel of rows: each row's run of k, as pack_b's transposed case
            pack_runs(o.a + (ic + ir) * o.lda + pc, o.lda, mr, kMR, kc, dst);
        }
    }
}

// Starts loading the C tile after the one at rows ic + ir, columns jn.. (the next rows of the
// block, else the next column panel's first rows) while this tile computes: at 1024 and above C
// lives in L3, and each KC slice reads and writes it once more.
inline void prefetch_next_tile(
    const float* c, int64_t ldc, int64_t ic, int64_t mc, int64_t jn, int64_t ncl, int64_t ir) {
    int64_t row = ir + kMR;
    int64_t col = jn;
    int64_t cols = std::min<int64_t>(kNR, ncl);
    if (row >= mc) {
        if (ncl <= kNR) return;
        row = 0;
        col = jn + kNR;
        cols = std::min<int64_t>(kNR, ncl - kNR);
    }
    const int64_t rows = std::min<int64_t>(kMR, mc - row);
    for (int64_t i = 0; i < rows; ++i) {
        const float* r = c + (ic + row + i) * ldc + col;
        __builtin_prefetch(r, 1, 3);
        __builtin_prefetch(r + cols - 1, 1, 3);
        if constexpr (kNR > 16) __builtin_prefetch(r + 16, 1, 3);
    }
}

}  // namespace sgemm_detail

/// C = op(A) op(B), or C += op(A) op(B) with `accumulate` (beta 1; else C is only written),
/// row-major with leading dimensions as in BLAS. Single-threaded; callers slice large products
/// over their threads. Accumulating continues C's sums as each KC slice does, so summing several
/// products into C gives the bits one product over their concatenated k would.
inline void packed_sgemm(bool ta,
                         bool tb,
                         int64_t m,
                         int64_t n,
                         int64_t k,
                         const float* a,
                         int64_t lda,
                         const float* b,
                         int64_t ldb,
                         bool accumulate,
                         float* c,
                         int64_t ldc) {
    using namespace sgemm_detail;
    if (m <= 0 || n <= 0 || (k <= 0 && accumulate)) return;
    if (k <= 0) {
        for (int64_t i = 0; i < m; ++i)
            std::fill(c + i * ldc, c + i * ldc + n, 0.0F);
        return;
    }
    const Operands o{a, lda, ta, b, ldb, tb};
    const int64_t kc_max = std::min(k, kKC);
    const int64_t nc_max = (std::min(n, kNC) + kNR - 1) / kNR * kNR;
    const int64_t mc_max = (std::min(m, kMC) + kMR - 1) / kMR * kMR;
    const PackBuffer packed_b = pack_buffer(kc_max * nc_max);
    const PackBuffer packed_a = pack_buffer(kc_max * mc_max);
    alignas(64) float edge[kMR * kNR];  // a partial tile of C, worked on whole
    for (int64_t jc = 0; jc < n; jc += kNC) {
        const int64_t nc = std::min(kNC, n - jc);
        for (int64_t pc = 0; pc < k; pc += kKC) {
            const int64_t kc = std::min(kKC, k - pc);
            const bool add = accumulate || pc > 0;
            pack_b(o, pc, kc, jc, nc, packed_b.get());
            for (int64_t ic = 0; ic < m; ic += kMC) {
                const int64_t mc = std::min(kMC, m - ic);
                pack_a(o, ic, mc, pc, kc, packed_a.get());
                for (int64_t jr = 0; jr < nc; jr += kNR) {
                    const int64_t nr = std::min<int64_t>(kNR, nc - jr);
                    const float* bp = packed_b.get() + jr * kc;
                    for (int64_t ir = 0; ir < mc; ir += kMR) {
                        const int64_t mr = std::min<int64_t>(kMR, mc - ir);
                        const float* ap = packed_a.get() + ir * kc;
                        float* ct = c + (ic + ir) * ldc + jc + jr;
                        prefetch_next_tile(c, ldc, ic, mc, jc + jr, nc - jr, ir);
                        // A(i, p) = ap[i + p * MR], B(p, j) = bp[p * NR + j]
                        if (mr == kMR && nr == kNR) {
                            block_gemm_detail::tile<kMR, kNV>(
                                kc, ap, 1, kMR, bp, kNR, ct, ldc, add);
                            continue;
                        }
                        for (int64_t i = 0; add && i < mr; ++i)
                            std::copy(ct + i * ldc, ct + i * ldc + nr, edge + i * kNR);
                        block_gemm_detail::tile<kMR, kNV>(kc, ap, 1, kMR, bp, kNR, edge, kNR, add);
                        for (int64_t i = 0; i < mr; ++i)
                            std::copy(edge + i * kNR, edge + i * kNR + nr, ct + i * ldc);
                    }
                }
            }
        }
    }
}

}  // namespace tapeflow::cpu
