// parallel_for: splits [0, n) into contiguous chunks run on the CPU threads (OpenMP). Small ranges
// run inline on the caller, so tiny ops pay no threading cost. The chunking depends only on n and
// the grain and the thread count, never on timing; kernels whose results must not depend on the
// thread count (random numbers, reductions) compute each element from its index alone.
#pragma once

#include <algorithm>
#include <cstdint>

namespace tapeflow {

/// Number of CPU threads kernels may use (tapeflow::num_threads(): set_num_threads, else
/// OMP_NUM_THREADS, else the core count).
int cpu_threads();

/// Calls body(begin, end) over [0, n) in chunks of at least `grain` elements, in parallel when
/// there is more than one chunk.
template <class Body>
void parallel_for(int64_t n, int64_t grain, Body&& body) {
    if (n <= 0) return;
    grain = std::max<int64_t>(grain, 1);
    const int64_t chunks = std::min<int64_t>((n + grain - 1) / grain, cpu_threads());
    if (chunks <= 1) {
        body(int64_t{0}, n);
        return;
    }
    const int64_t step = (n + chunks - 1) / chunks;
#pragma omp parallel for schedule(static) num_threads(static_cast <int>(chunks))
    for (int64_t c = 0; c < chunks; ++c) {
        const int64_t begin = c * step;
        const int64_t end = std::min(n, begin + step);
        if (begin < end) body(begin, end);
    }
}

}  // namespace tapeflow
