// Typed OpenBLAS gemm for the CPU kernels, and a guard for kernels that spread many independent
// gemms over tapeflow's own threads. OpenBLAS (the pthreads build Debian ships) has its own
// thread pool; when our threads each call a multi-threaded gemm the two pools fight over the
// cores (measured: conv forward 2-4x slower than one thread). Under the guard OpenBLAS runs each
// call on the calling thread; the previous setting comes back when the last guard ends.
#pragma once

#include <cstdint>

namespace tapeflow::cpu {

/// C = op(A) op(B) + beta C, row-major, with explicit leading dimensions. T is float or double.
template <class T>
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda,
          const T* b, int64_t ldb, T beta, T* c, int64_t ldc);

/// While one exists (in any thread), OpenBLAS runs every gemm on its calling thread.
/// Results do not change: OpenBLAS never splits the k sum across threads.
class BlasOnCallingThread {
public:
    BlasOnCallingThread();
    ~BlasOnCallingThread();
    BlasOnCallingThread(const BlasOnCallingThread&) = delete;
    BlasOnCallingThread& operator=(const BlasOnCallingThread&) = delete;
};

}  // namespace tapeflow::cpu
