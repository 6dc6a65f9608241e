// CPU thread count for kernels: set_num_threads, else OpenMP's (OMP_NUM_THREADS or the cores).
#include "core/parallel.hpp"

#include <atomic>

#include <fmt/format.h>
#include <omp.h>

#include <tapeflow/core/error.hpp>
#include <tapeflow/core/threads.hpp>

namespace tapeflow {
namespace {
std::atomic<int> chosen_threads{0};  // 0: not set, follow OpenMP
}  // namespace

int cpu_threads() {
    const int chosen = chosen_threads.load(std::memory_order_relaxed);
    return chosen > 0 ? chosen : omp_get_max_threads();
}

int num_threads() {
    return cpu_threads();
}

void set_num_threads(int n) {
    if (n < 1) {
        throw errors::InvalidArgumentError(
            fmt::format("set_num_threads: the thread count must be at least 1, got {}", n));
    }
    chosen_threads.store(n, std::memory_order_relaxed);
}

}  // namespace tapeflow
