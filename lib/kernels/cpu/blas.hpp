// Typed OpenBLAS gemm for the CPU kernels, and what kernels that spread gemms over tapeflow's own
// threads call first. OpenBLAS (the pthreads build Debian ships) has its own thread pool; when our
// threads each call a multi-threaded gemm the two pools fight over the cores (measured: conv
// forward 2-4x slower than one thread). So tapeflow runs OpenBLAS on its calling threads.
// The kernels reach these through gemm_route.hpp, which picks OpenBLAS or tapeflow's own gemms.
#pragma once

#include <algorithm>
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

/// Whether C = op(A) op(B) of m x n x k is worth cutting over `threads` threads (for_each_slice).
inline bool slicing_pays(int64_t threads, int64_t m, int64_t n, int64_t k) {
    return threads > 1 && std::max(m, n) >= 32 &&
           static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) >
               kThreadedGemmMnk;
}

/// C = op(A) op(B) cut into one slice per thread along the longer of m and n (never along k,
/// so every element is one gemm's), slices a multiple of 16 long: slice_gemm(m, n, a, b, c) runs
/// one slice's product (its rows of op(A) and C, or its columns of op(B) and C) on its thread.
template <class T, class SliceGemm>
void for_each_slice(bool ta,
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
    constexpr int64_t kTile = 16;  // a multiple of every gemm's register tile
    const int64_t longer = std::max(m, n);
    const int64_t slice = (longer / cpu_threads() + kTile - 1) / kTile * kTile;
    parallel_for((longer + slice - 1) / slice, 1, [&](int64_t begin, int64_t end) {
        for (int64_t s = begin; s < end; ++s) {
            const int64_t lo = s * slice;
            const int64_t len = std::min(longer, lo + slice) - lo;
            if (m >= n) {
                slice_gemm(len, n, ta ? a + lo : a + lo * lda, b, c + lo * ldc);
            } else {
                slice_gemm(m, len, a, tb ? b + lo * ldb : b + lo, c + lo);
            }
        }
    });
}

/// gemm with C = op(A) op(B) (beta 0) cut into one slice per thread along the longer of m and n,
/// each slice on its own thread; small products run on the caller.
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
                   int64_t ldc);

}  // namespace tapeflow::cpu
