// tf::function (issue 28): eager vs replayed, LibTorch's eager step in the same run. Per op on
// 1-element tensors (a chain of 100 adds), the tutorial network's Adam step, the medium MLP's Adam
// step, and the cost of a trace (first call: run + record + plan) against a replay.
//   build/benchmarks/bench_function --benchmark_repetitions=5 --benchmark_report_aggregates_only
#include <benchmark/benchmark.h>

#include <tapeflow/tapeflow.hpp>

#include "bench_start.hpp"
#include "torch_train_cases.hpp"
#include "train_models.hpp"

namespace tf = tapeflow;

namespace {

constexpr int kChain = 100;

tf::Tensor chain(const tf::Tensor& x, const tf::Tensor& d) {
    tf::Tensor y = x;
    for (int i = 0; i < kChain; ++i)
        y = y + d;
    return y;
}

void BM_op_eager(benchmark::State& state) {
    const tf::Tensor x = tf::constant(1.f), d = tf::constant(0.5f);
    for (auto _ : state)
        benchmark::DoNotOptimize(chain(x, d));
    state.SetItemsProcessed(state.iterations() * kChain);  // items/s: ops per second
}

void BM_op_function(benchmark::State& state) {
    const tf::Tensor x = tf::constant(1.f), d = tf::constant(0.5f);
    auto f = tf::function(chain);
    f(x, d);
    for (auto _ : state)
        benchmark::DoNotOptimize(f(x, d));
    state.SetItemsProcessed(state.iterations() * kChain);
}

void BM_tutorial_eager(benchmark::State& state) {
    tf::random::set_seed(1);
    train_models::Tutorial t;
    for (auto _ : state)
        t.step();
}

void BM_tutorial_function(benchmark::State& state) {
    tf::random::set_seed(1);
    train_models::Tutorial t;
    auto step = tf::function([&] { t.step(); });
    step();
    for (auto _ : state)
        step();
}

void BM_mlp_eager(benchmark::State& state) {
    tf::random::set_seed(1);
    train_models::Mlp m;
    for (auto _ : state)
        m.step();
}

void BM_mlp_function(benchmark::State& state) {
    tf::random::set_seed(1);
    train_models::Mlp m;
    auto step = tf::function([&] { m.step(); });
    step();
    for (auto _ : state)
        step();
}

// The first call of a new tf::function on the tutorial step: run eagerly + record + plan.
void BM_tutorial_trace(benchmark::State& state) {
    tf::random::set_seed(1);
    train_models::Tutorial t;
    for (auto _ : state) {
        auto step = tf::function([&] { t.step(); });
        step();
    }
}

}  // namespace

int main(int argc, char** argv) {
    start_side_by_side(&argc, argv, torch_train_cases::available());
    benchmark::RegisterBenchmark("function/op_1elem/eager", BM_op_eager);
    benchmark::RegisterBenchmark("function/op_1elem/function", BM_op_function);
    benchmark::RegisterBenchmark("function/tutorial_step/eager", BM_tutorial_eager);
    benchmark::RegisterBenchmark("function/tutorial_step/function", BM_tutorial_function);
    benchmark::RegisterBenchmark("function/tutorial_step/trace", BM_tutorial_trace);
    torch_train_cases::register_tutorial_step();
    benchmark::RegisterBenchmark("function/mlp_step/eager", BM_mlp_eager)->UseRealTime();
    benchmark::RegisterBenchmark("function/mlp_step/function", BM_mlp_function)->UseRealTime();
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
