// Op benchmarks (issue 3 workloads), with the machine's limits and,
// when built with LibTorch, LibTorch's numbers in the same run: per-op overhead with and without a
// tape, element-wise a*b+a and exp, reductions, matmul. compare.py turns the JSON into ratios.
//   build/benchmarks/bench_ops --benchmark_format=json > ops.json && benchmarks/compare.py ops.json
#include <algorithm>

#include <benchmark/benchmark.h>
#include <cblas.h>

#include <tapeflow/tapeflow.hpp>

#include "bench_start.hpp"
#include "kernels/cpu/fusion.hpp"
#include "limits.hpp"
#include "torch_cases.hpp"

namespace tf = tapeflow;

namespace {

constexpr int64_t k16M = int64_t{1} << 24;

// ---- 1. per-op overhead ----

void BM_tapeflow_add_1elem(benchmark::State& state) {
    auto a = tf::constant({1.f});
    auto b = tf::constant({2.f});
    for (auto _ : state)
        benchmark::DoNotOptimize(a + b);
}

// 100 chained adds recorded on a tape, then the backward pass: time per op.
void BM_tapeflow_add_chain_fwd_bwd(benchmark::State& state) {
    auto x = tf::constant({1.f});
    auto b = tf::constant({2.f});
    for (auto _ : state) {
        tf::GradientTape tape;
        tape.watch(x);
        tf::Tensor y = x;
        for (int i = 0; i < 100; ++i)
            y = y + b;
        benchmark::DoNotOptimize(tape.gradient(y, x));
    }
    state.SetItemsProcessed(state.iterations() * 100);
}

// ---- 2. element-wise, bytes counted as read + written once (12 B/elem for a*b+a, 8 for exp) ----

// Results are read (raw_data) inside the loop: a large element-wise result is computed when first
// read (NOTE [Deferred element-wise fusion]), and reading it is what a user does.
void BM_tapeflow_mul_add(benchmark::State& state) {
    const int64_t n = state.range(0);
    auto a = tf::random::uniform({n}, 0, 1, tf::float32, 1);
    auto b = tf::random::uniform({n}, 0, 1, tf::float32, 2);
    for (auto _ : state)
        benchmark::DoNotOptimize((a * b + a).raw_data());
    state.SetBytesProcessed(state.iterations() * n * 12);
}

// The same with fusion off: two passes over memory, the temporary a*b written and read back.
void BM_tapeflow_mul_add_unfused(benchmark::State& state) {
    const int64_t saved = tf::cpu::fusion::fusion_min_elements();
    tf::cpu::fusion::set_fusion_min_elements(-1);
    BM_tapeflow_mul_add(state);
    tf::cpu::fusion::set_fusion_min_elements(saved);
}

void BM_tapeflow_exp(benchmark::State& state) {
    const int64_t n = state.range(0);
    auto a = tf::random::uniform({n}, 0, 1, tf::float32, 1);
    for (auto _ : state)
        benchmark::DoNotOptimize(tf::exp(a).raw_data());
    state.SetBytesProcessed(state.iterations() * n * 8);
}

// ---- 3. reductions (4 B/elem read) ----

void BM_tapeflow_sum_all(benchmark::State& state) {
    auto a = tf::random::uniform({k16M}, 0, 1, tf::float32, 1);
    for (auto _ : state)
        benchmark::DoNotOptimize(tf::reduce_sum(a));
    state.SetBytesProcessed(state.iterations() * k16M * 4);
}

void BM_tapeflow_sum_axis1(benchmark::State& state) {
    auto a = tf::random::uniform({4096, 4096}, 0, 1, tf::float32, 1);
    for (auto _ : state)
        benchmark::DoNotOptimize(tf::reduce_sum(a, 1));
    state.SetBytesProcessed(state.iterations() * k16M * 4);
}

// ---- 4. matmul (2 n^3 flops) ----

void BM_tapeflow_matmul(benchmark::State& state) {
    const int64_t n = state.range(0);
    auto a = tf::random::uniform({n, n}, 0, 1, tf::float32, 1);
    auto b = tf::random::uniform({n, n}, 0, 1, tf::float32, 2);
    for (auto _ : state)
        benchmark::DoNotOptimize(tf::matmul(a, b));
    state.counters["GFLOPS"] = benchmark::Counter(2.0 * n * n * n,
                                                  benchmark::Counter::kIsIterationInvariantRate,
                                                  benchmark::Counter::kIs1000);
}

// ---- aggregation methods: one tensor feeding 64 consumers; peak live gradient bytes per method
// ----

void BM_tapeflow_aggregation(benchmark::State& state) {
    const auto method = static_cast<tf::AggregationMethod>(state.range(0));
    const int64_t n = 1 << 18;  // 1 MiB per contribution
    int64_t peak = 0;
    for (auto _ : state) {
        auto x = tf::ones({n});
        tf::GradientTape tape;
        tape.watch(x);
        std::vector<tf::Tensor> terms;
        for (int k = 0; k < 64; ++k)
            terms.push_back(x * static_cast<float>(k + 1));
        auto y = tf::reduce_sum(tf::add_n(terms));
        terms.clear();
        tf::GradientOptions options;
        options.aggregation_method = method;
        tf::reset_peak_memory_stats();
        const int64_t base = tf::memory_stats().bytes_in_use;
        benchmark::DoNotOptimize(tape.gradient(y, x, options));
        peak = std::max(peak, tf::memory_stats().peak_bytes_in_use - base);
    }
    state.counters["peak_gradient_MiB"] = static_cast<double>(peak) / (1 << 20);
}

}  // namespace

// Registration order = report order: each workload's tapeflow case, then its limit, then LibTorch.
int main(int argc, char** argv) {
    start_side_by_side(&argc, argv, torch_cases::available());

    benchmark::RegisterBenchmark("overhead/add_1elem/tapeflow", BM_tapeflow_add_1elem);
    torch_cases::register_overhead();
    benchmark::RegisterBenchmark("overhead/add_chain_fwd_bwd/tapeflow",
                                 BM_tapeflow_add_chain_fwd_bwd);
    torch_cases::register_overhead_tape();

    for (int64_t n : {int64_t{1} << 16, int64_t{1} << 20, k16M}) {
        const std::string size = std::to_string(n);
        benchmark::RegisterBenchmark(("elementwise/mul_add/" + size + "/tapeflow").c_str(),
                                     BM_tapeflow_mul_add)
            ->Arg(n)
            ->UseRealTime();
        benchmark::RegisterBenchmark(("elementwise/mul_add/" + size + "/tapeflow_unfused").c_str(),
                                     BM_tapeflow_mul_add_unfused)
            ->Arg(n)
            ->UseRealTime();
        benchmark::RegisterBenchmark(("elementwise/mul_add/" + size + "/limit_triad").c_str(),
                                     limits::BM_triad)
            ->Arg(n)
            ->UseRealTime();
        torch_cases::register_mul_add(n);
        benchmark::RegisterBenchmark(("elementwise/exp/" + size + "/tapeflow").c_str(),
                                     BM_tapeflow_exp)
            ->Arg(n)
            ->UseRealTime();
        torch_cases::register_exp(n);
    }
    benchmark::RegisterBenchmark("reduce/sum_all/tapeflow", BM_tapeflow_sum_all)->UseRealTime();
    benchmark::RegisterBenchmark("reduce/sum_all/limit_read", limits::BM_read)
        ->Arg(k16M)
        ->UseRealTime();
    torch_cases::register_sum_all();
    benchmark::RegisterBenchmark("reduce/sum_axis1/tapeflow", BM_tapeflow_sum_axis1)->UseRealTime();
    benchmark::RegisterBenchmark("reduce/sum_axis1/limit_read", limits::BM_read)
        ->Arg(k16M)
        ->UseRealTime();
    torch_cases::register_sum_axis1();
    for (int64_t n : {256, 1024, 2048}) {
        const std::string size = std::to_string(n);
        benchmark::RegisterBenchmark(("matmul/" + size + "/tapeflow").c_str(), BM_tapeflow_matmul)
            ->Arg(n)
            ->UseRealTime();
        benchmark::RegisterBenchmark(("matmul/" + size + "/limit_sgemm").c_str(), limits::BM_sgemm)
            ->Arg(n)
            ->UseRealTime();
        torch_cases::register_matmul(n);
    }
    benchmark::RegisterBenchmark("aggregation/add_n/tapeflow", BM_tapeflow_aggregation)
        ->Arg(static_cast<int>(tf::AggregationMethod::add_n));
    benchmark::RegisterBenchmark("aggregation/default/tapeflow", BM_tapeflow_aggregation)
        ->Arg(static_cast<int>(tf::AggregationMethod::default_));
    benchmark::RegisterBenchmark("aggregation/experimental_tree/tapeflow", BM_tapeflow_aggregation)
        ->Arg(static_cast<int>(tf::AggregationMethod::experimental_tree));
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
