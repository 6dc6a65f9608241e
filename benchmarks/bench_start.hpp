// The start every side-by-side benchmark program shares: Google Benchmark's flags, the thread count
// and whether LibTorch runs in the report's context, and LibTorch on tapeflow's thread count.
#pragma once

#include <string>

#include <benchmark/benchmark.h>
#include <omp.h>

#include "torch_cases.hpp"

inline void start_side_by_side(int* argc, char** argv, bool libtorch_available) {
    benchmark::Initialize(argc, argv);
    const int threads = omp_get_max_threads();
    benchmark::AddCustomContext("threads", std::to_string(threads));
    benchmark::AddCustomContext("libtorch", libtorch_available ? "yes" : "no");
    torch_cases::set_threads(threads);
}
