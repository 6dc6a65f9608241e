// OpenBLAS gemm wrappers and the calling-thread guard (see blas.hpp).
#include "kernels/cpu/blas.hpp"

#include <cblas.h>

#include <mutex>
#include <type_traits>

namespace tapeflow::cpu {

template <class T>
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda,
          const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
    const auto ta = trans_a ? CblasTrans : CblasNoTrans;
    const auto tb = trans_b ? CblasTrans : CblasNoTrans;
    const auto i = [](int64_t v) { return static_cast<blasint>(v); };
    if constexpr (std::is_same_v<T, float>) {
        cblas_sgemm(CblasRowMajor, ta, tb, i(m), i(n), i(k), 1.0F, a, i(lda), b, i(ldb), beta, c,
                    i(ldc));
    } else {
        cblas_dgemm(CblasRowMajor, ta, tb, i(m), i(n), i(k), 1.0, a, i(lda), b, i(ldb), beta, c,
                    i(ldc));
    }
}

template void gemm<float>(bool, bool, int64_t, int64_t, int64_t, const float*, int64_t,
                          const float*, int64_t, float, float*, int64_t);
template void gemm<double>(bool, bool, int64_t, int64_t, int64_t, const double*, int64_t,
                           const double*, int64_t, double, double*, int64_t);

namespace {
std::mutex guard_mutex;
int guard_users = 0;
int saved_threads = 1;
}  // namespace

BlasOnCallingThread::BlasOnCallingThread() {
    const std::lock_guard lock(guard_mutex);
    if (guard_users++ == 0) {
        saved_threads = openblas_get_num_threads();
        openblas_set_num_threads(1);
    }
}

BlasOnCallingThread::~BlasOnCallingThread() {
    const std::lock_guard lock(guard_mutex);
    if (--guard_users == 0) openblas_set_num_threads(saved_threads);
}

}  // namespace tapeflow::cpu
