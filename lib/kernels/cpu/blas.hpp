// Typed OpenBLAS gemm for the CPU kernels, and what kernels that spread gemms over tapeflow's own
// threads call first. OpenBLAS (the pthreads build Debian ships) has its own thread pool; when our
// threads each call a multi-threaded gemm the two pools fight over the cores (measured: conv
// forward 2-4x slower than one thread). So tapeflow runs OpenBLAS on its calling threads.
// The kernels reach these through gemm_route.hpp, which picks OpenBLAS or tapeflow's own gemms.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "core/parallel.hpp"

namespace tapeflow::cpu {

/// C = op(A) op(B) + beta C, row-major, with explicit leading dimensions. T is float or double.
template <class T>
void gemm(bool trans_a,
          bool trans_b,
          int64_t m,
          int64_t n,
          int64_t k,
          const T* a,
          int64_t lda,
          const T* b,
          int64_t ldb,
          T beta,
          T* c,
          int64_t ldc);

/// From this call on, OpenBLAS runs every gemm on its calling thread (one OpenBLAS thread), and it
/// stays so: tapeflow never asks OpenBLAS for threads (it slices large products over its own). It
/// is not switched back after each kernel because raising OpenBLAS's count wakes its pool, whose
/// threads then spin on the cores that tapeflow's threads compute on (the Keras convnet's 2-thread
/// step took 3x its 1-thread time). A program that calls OpenBLAS itself sets its own count
/// before its calls. Results do not change: OpenBLAS never splits the k sum across threads.
void blas_on_calling_thread();

/// Calls body(begin, end) over [0, units) on tapeflow's threads, each unit's gemms on the thread
/// that runs it (OpenBLAS on its caller), so a unit's result never depends on thread counts.
template <class Body>
void parallel_gemms(int64_t units, const Body& body) {
    if (units > 1) blas_on_calling_thread();
    parallel_for(units, 1, body);
}

/// Whether large float32 products should run tapeflow's packed sgemm (sgemm_packed.hpp; the
/// kernel sets built with AVX2 and FMA ask) rather than OpenBLAS. OpenBLAS's own AVX2/AVX-512
/// kernels are faster, but OpenBLAS picks its kernel from the CPU model it recognises, and on CPUs
/// it does not know (virtual "Intel Xeon Processor" models among them) it falls back to SSE3
/// Prescott, 3x slower than the packed sgemm. So: OpenBLAS when its core has AVX2 kernels
/// (openblas_get_corename: Haswell, Zen, SkylakeX, Cooperlake, SapphireRapids), else packed.
/// TAPEFLOW_SGEMM=packed|openblas overrides the choice (read at every call: tests switch it);
/// any other value is warned about once and ignored.
bool prefer_packed_sgemm();

/// OpenBLAS runs a gemm with m*n*k at most this on the calling thread (GEMM_MULTITHREAD_THRESHOLD
/// 4 x SMP_THRESHOLD_MIN 65536): below it one thread is faster, above it slicing pays.
inline constexpr double kThreadedGemmMnk = 262144.0;

/// How a sliced gemm cuts C = op(A) op(B): `count` slices along the longer of m and n (rows of
/// op(A) and C where m >= n, else columns of op(B) and C), each `length` long but the last.
struct GemmSlices {
    int64_t count = 1;  // 1: one whole gemm
    int64_t length = 0;
};

/// The cut of an m x n x k product, fixed by its shape alone, never by the thread count: OpenBLAS
/// rounds an element differently from one call geometry to another (its edge tiles and its
/// small-matrix kernels depend on the call's m and n; seen with its Cooperlake kernels), so each
/// element must come from the same call however many threads share the slices. Products up to
/// kThreadedGemmMnk stay whole; slices are multiples of 16 (every gemm's register tile), at least
/// kMinSlice long and kThreadedGemmMnk / 4 multiply-adds (OpenBLAS's per-thread minimum), at most
/// kMaxSlices. The count aimed at is a multiple of 4 where there are 4 or more, so that 2 or 4
/// threads share them evenly; rounding the length up to the tile may then leave up to 3 fewer.
inline GemmSlices gemm_slices(int64_t m, int64_t n, int64_t k) {
    constexpr int64_t kTile = 16, kMinSlice = 128, kMaxSlices = 32;
    const double mnk = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
    if (mnk <= kThreadedGemmMnk) return {};
    const int64_t longer = std::max(m, n);
    const double per_unit = mnk / static_cast<double>(longer);  // one row or column's work
    const auto min_len = std::max<int64_t>(
        kMinSlice, static_cast<int64_t>(std::ceil(kThreadedGemmMnk / 4.0 / per_unit)));
    int64_t count = std::min(kMaxSlices, longer / min_len);
    if (count >= 4) count -= count % 4;
    if (count < 2) return {};
    const int64_t length = ((longer + count - 1) / count + kTile - 1) / kTile * kTile;
    return {(longer + length - 1) / length, length};
}

/// Runs the slices of `slices` (gemm_slices of m x n; one slice: the whole product on the caller):
/// slice_gemm(m, n, a, b, c) computes one slice's product (its rows of op(A) and C, or its columns
/// of op(B) and C). `on_threads`: the slices are shared by tapeflow's threads, else run in order on
/// the caller; the bits are the same.
template <class T, class SliceGemm>
void for_each_slice(const GemmSlices& slices,
                    bool on_threads,
                    bool ta,
                    bool tb,
                    int64_t m,
                    int64_t n,
                    const T* a,
                    int64_t lda,
                    const T* b,
                    int64_t ldb,
                    T* c,
                    int64_t ldc,
                    const SliceGemm& slice_gemm) {
    if (slices.count == 1) {
        slice_gemm(m, n, a, b, c);
        return;
    }
    const int64_t longer = std::max(m, n);
    const auto run = [&](int64_t begin, int64_t end) {
        for (int64_t s = begin; s < end; ++s) {
            const int64_t lo = s * slices.length;
            const int64_t len = std::min(longer, lo + slices.length) - lo;
            if (m >= n) {
                slice_gemm(len, n, ta ? a + lo : a + lo * lda, b, c + lo * ldc);
            } else {
                slice_gemm(m, len, a, tb ? b + lo * ldb : b + lo, c + lo);
            }
        }
    };
    if (on_threads) {
        parallel_for(slices.count, 1, run);
    } else {
        run(0, slices.count);
    }
}

/// gemm with C = op(A) op(B) (beta 0) cut as gemm_slices says, the slices on tapeflow's threads
/// (`on_threads`) or in order on the caller; a product of one slice runs whole on the caller.
template <class T>
void parallel_gemm(bool trans_a,
                   bool trans_b,
                   int64_t m,
                   int64_t n,
                   int64_t k,
                   const T* a,
                   int64_t lda,
                   const T* b,
                   int64_t ldb,
                   T* c,
                   int64_t ldc,
                   bool on_threads = true);

}  // namespace tapeflow::cpu
