// The machine's limits, measured in the same run as the ops: STREAM-style triad and read bandwidth
// (OpenMP over the same threads as tapeflow) and OpenBLAS sgemm called directly.
#pragma once

#include <benchmark/benchmark.h>

namespace limits {

void BM_triad(benchmark::State& state);  // c = a + s*b, 12 B/elem
void BM_read(benchmark::State& state);   // sum of a, 4 B/elem
void BM_sgemm(benchmark::State& state);  // n x n x n, GFLOPS counter

}  // namespace limits
