// parallel_for: splits [0, n) into contiguous chunks run on the CPU threads (tapeflow's pool,
// lib/core/parallel.cpp). Small ranges run inline on the caller, so tiny ops pay no threading cost.
// The chunking depends only on n, the grain and the thread count, never on timing; kernels whose
// results must not depend on the thread count (random numbers, reductions) compute each element
// from its index alone, so which thread runs a chunk never matters.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

namespace tapeflow {

/// Number of CPU threads kernels may use (tapeflow::num_threads(): set_num_threads, else
/// OMP_NUM_THREADS, else the core count).
int cpu_threads();

namespace detail {
/// Runs run(ctx, c) for every c in [0, chunks) on the pool's threads and the caller; returns when
/// all are done and rethrows the first exception one of them raised.
void run_chunks(int64_t chunks, void (*run)(void* ctx, int64_t chunk), void* ctx);
}  // namespace detail

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
    struct Range {
        std::remove_reference_t<Body>* body;
        int64_t n, step;
    } range{&body, n, (n + chunks - 1) / chunks};
    detail::run_chunks(
        chunks,
        [](void* ctx, int64_t c) {
            const auto& r = *static_cast<Range*>(ctx);
            const int64_t begin = c * r.step;
            const int64_t end = std::min(r.n, begin + r.step);
            if (begin < end) (*r.body)(begin, end);
        },
        &range);
}

}  // namespace tapeflow
