// Plain-C++ limits for the ratios in compare.py (see limits.hpp). Buffers are 64-byte aligned and
// touched once before timing, so page faults are not measured.
#include "limits.hpp"

#include <cstdlib>
#include <memory>

#include <cblas.h>
#include <omp.h>

namespace limits {
namespace {

struct FreeDeleter {
    void operator()(float* p) const { std::free(p); }
};
using Buffer = std::unique_ptr<float[], FreeDeleter>;

Buffer make(int64_t n, float value) {
    Buffer b(static_cast<float*>(std::aligned_alloc(64, ((n * 4 + 63) / 64) * 64)));
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; ++i)
        b[i] = value;
    return b;
}

}  // namespace

void BM_triad(benchmark::State& state) {
    const int64_t n = state.range(0);
    Buffer a = make(n, 1.f), b = make(n, 2.f), c = make(n, 0.f);
    const float s = 3.f;
    for (auto _ : state) {
        float* __restrict pc = c.get();
        const float* __restrict pa = a.get();
        const float* __restrict pb = b.get();
#pragma omp parallel for schedule(static)
        for (int64_t i = 0; i < n; ++i)
            pc[i] = pa[i] + s * pb[i];
        benchmark::ClobberMemory();
    }
    state.SetBytesProcessed(state.iterations() * n * 12);
}

void BM_read(benchmark::State& state) {
    const int64_t n = state.range(0);
    Buffer a = make(n, 1.f);
    for (auto _ : state) {
        float total = 0;
        const float* __restrict pa = a.get();
#pragma omp parallel for simd schedule(static) reduction(+ : total)
        for (int64_t i = 0; i < n; ++i)
            total += pa[i];
        benchmark::DoNotOptimize(total);
    }
    state.SetBytesProcessed(state.iterations() * n * 4);
}

void BM_sgemm(benchmark::State& state) {
    const int n = static_cast<int>(state.range(0));
    Buffer a = make(int64_t{n} * n, 0.5f), b = make(int64_t{n} * n, 0.25f),
           c = make(int64_t{n} * n, 0.f);
    for (auto _ : state) {
        cblas_sgemm(CblasRowMajor,
                    CblasNoTrans,
                    CblasNoTrans,
                    n,
                    n,
                    n,
                    1.f,
                    a.get(),
                    n,
                    b.get(),
                    n,
                    0.f,
                    c.get(),
                    n);
        benchmark::ClobberMemory();
    }
    state.counters["GFLOPS"] = benchmark::Counter(2.0 * n * n * n,
                                                  benchmark::Counter::kIsIterationInvariantRate,
                                                  benchmark::Counter::kIs1000);
}

}  // namespace limits
