// OpenBLAS gemm wrappers and its one-thread setting (see blas.hpp).
#include "kernels/cpu/blas.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string_view>
#include <type_traits>

#include <cblas.h>

#include <tapeflow/core/logging.hpp>

namespace tapeflow::cpu {

namespace {

// Products up to this many multiply-adds cost less as a plain loop than OpenBLAS's per-call
// overhead (argument checks, dispatch, buffer setup: about 1500 instructions), which dominated the
// matmuls of small networks (the tutorial network's are 10x2 by 2x3).
constexpr int64_t kSmallGemmMnk = 1024;

template <class T>
void small_gemm(bool trans_a,
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
                int64_t ldc) {
    const int64_t a_row = trans_a ? 1 : lda;  // step from A(i, p) to A(i + 1, p)
    const int64_t a_col = trans_a ? lda : 1;  // ... and to A(i, p + 1)
    const int64_t b_row = trans_b ? 1 : ldb;  // step from B(p, j) to B(p + 1, j)
    const int64_t b_col = trans_b ? ldb : 1;
    for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
            T sum = 0;
            for (int64_t p = 0; p < k; ++p)
                sum += a[i * a_row + p * a_col] * b[p * b_row + j * b_col];
            T& out = c[i * ldc + j];
            out = beta == T(0) ? sum : sum + beta * out;  // beta 0: C may hold garbage, never read
        }
    }
}

}  // namespace

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
          int64_t ldc) {
    if (m * n * k <= kSmallGemmMnk) {
        small_gemm(trans_a, trans_b, m, n, k, a, lda, b, ldb, beta, c, ldc);
        return;
    }
    // Every call, not only parallel_gemm's: a product that reached OpenBLAS with its own threads
    // (the process's first conv2d) was cut by their count and gave other bits than later calls.
    blas_on_calling_thread();
    const auto ta = trans_a ? CblasTrans : CblasNoTrans;
    const auto tb = trans_b ? CblasTrans : CblasNoTrans;
    const auto i = [](int64_t v) {
        return static_cast<blasint>(v);
    };
    if constexpr (std::is_same_v<T, float>) {
        cblas_sgemm(
            CblasRowMajor, ta, tb, i(m), i(n), i(k), 1.0F, a, i(lda), b, i(ldb), beta, c, i(ldc));
    } else {
        cblas_dgemm(
            CblasRowMajor, ta, tb, i(m), i(n), i(k), 1.0, a, i(lda), b, i(ldb), beta, c, i(ldc));
    }
}

template void gemm<float>(bool,
                          bool,
                          int64_t,
                          int64_t,
                          int64_t,
                          const float*,
                          int64_t,
                          const float*,
                          int64_t,
                          float,
                          float*,
                          int64_t);
template void gemm<double>(bool,
                           bool,
                           int64_t,
                           int64_t,
                           int64_t,
                           const double*,
                           int64_t,
                           const double*,
                           int64_t,
                           double,
                           double*,
                           int64_t);

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
                   bool on_threads) {
    const auto slice_gemm = [&](int64_t rows, int64_t cols, const T* as, const T* bs, T* cs) {
        gemm<T>(trans_a, trans_b, rows, cols, k, as, lda, bs, ldb, T(0), cs, ldc);
    };
    // Always: OpenBLAS's own threads would cut a whole product by their count.
    blas_on_calling_thread();
    for_each_slice(gemm_slices(m, n, k),
                   on_threads,
                   trans_a,
                   trans_b,
                   m,
                   n,
                   a,
                   lda,
                   b,
                   ldb,
                   c,
                   ldc,
                   slice_gemm);
}

template void parallel_gemm<float>(bool,
                                   bool,
                                   int64_t,
                                   int64_t,
                                   int64_t,
                                   const float*,
                                   int64_t,
                                   const float*,
                                   int64_t,
                                   float*,
                                   int64_t,
                                   bool);
template void parallel_gemm<double>(bool,
                                    bool,
                                    int64_t,
                                    int64_t,
                                    int64_t,
                                    const double*,
                                    int64_t,
                                    const double*,
                                    int64_t,
                                    double*,
                                    int64_t,
                                    bool);

void blas_on_calling_thread() {
    static std::mutex mutex;
    if (openblas_get_num_threads() == 1) return;  // the common case: a read of OpenBLAS's count
    const std::lock_guard lock(mutex);
    if (openblas_get_num_threads() != 1) openblas_set_num_threads(1);
}

bool prefer_packed_sgemm() {
    if (const char* choice = std::getenv("TAPEFLOW_SGEMM"); choice != nullptr && *choice != 0) {
        if (std::strcmp(choice, "packed") == 0) return true;
        if (std::strcmp(choice, "openblas") == 0) return false;
        static std::atomic<bool> warned{false};  // once, not at every matmul
        if (!warned.exchange(true)) {
            logging::warn(
                "TAPEFLOW_SGEMM={} is not packed or openblas; choosing by OpenBLAS's core", choice);
        }
    }
    // OpenBLAS's DYNAMIC_ARCH cores with AVX2 or AVX-512 sgemm kernels; any other core it picked
    // on a CPU that has AVX2 and FMA (this is only asked by such kernel sets) is a fallback.
    static const bool weak_openblas = [] {
        const char* core = openblas_get_corename();
        const std::string_view name = core != nullptr ? core : "";
        constexpr std::array<std::string_view, 5> kStrong = {
            "haswell", "zen", "skylakex", "cooperlake", "sapphirerapids"};
        return std::none_of(kStrong.begin(), kStrong.end(), [&](std::string_view strong) {
            return name.size() == strong.size() &&
                   std::equal(name.begin(), name.end(), strong.begin(), [](char x, char y) {
                       return (x | 0x20) == y;
                   });
        });
    }();
    return weak_openblas;
}

}  // namespace tapeflow::cpu
