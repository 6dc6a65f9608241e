// How every LibTorch case is registered. LibTorch runs its gemms on OpenBLAS's own thread pool (the
// same OpenBLAS as tapeflow's), and tapeflow leaves OpenBLAS on one thread once its kernels have
// run (lib/kernels/cpu/blas.hpp). So each LibTorch case first gives OpenBLAS the run's thread count
// (start_side_by_side's, set by torch_cases::set_threads): both frameworks get the same threads.
#pragma once

#include <benchmark/benchmark.h>

namespace torch_cases {

/// openblas_set_num_threads(the run's thread count).
void use_libtorch_blas_threads();

/// fn, with OpenBLAS given LibTorch's threads before it runs; extra arguments pass through.
template <class Fn>
auto libtorch_case(Fn fn) {
    return [fn](benchmark::State& state, auto&&... args) {
        use_libtorch_blas_threads();
        fn(state, args...);
    };
}

}  // namespace torch_cases
