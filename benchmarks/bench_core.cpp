// Core costs: the per-call overhead of the op path (validate -> allocate -> dispatch) and the
// throughput of seeded random generation and casts. Run: build/benchmarks/bench_core
#include <benchmark/benchmark.h>

#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;

// One tiny op end to end: the floor every op call pays.
static void BM_FillOneElement(benchmark::State& state) {
    for (auto _ : state)
        benchmark::DoNotOptimize(tf::zeros({1}));
}
BENCHMARK(BM_FillOneElement);

static void BM_CastFloatToDouble(benchmark::State& state) {
    auto x = tf::ones({state.range(0)});
    for (auto _ : state)
        benchmark::DoNotOptimize(x.cast(tf::float64));
    state.SetBytesProcessed(state.iterations() * state.range(0) * (4 + 8));
}
BENCHMARK(BM_CastFloatToDouble)->Arg(1 << 16)->Arg(1 << 24)->UseRealTime();

static void BM_RandomNormal(benchmark::State& state) {
    tf::random::set_seed(1);
    for (auto _ : state)
        benchmark::DoNotOptimize(tf::random::normal({state.range(0)}));
    state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_RandomNormal)->Arg(1 << 16)->Arg(1 << 24)->UseRealTime();

static void BM_RandomUniform(benchmark::State& state) {
    tf::random::set_seed(1);
    for (auto _ : state)
        benchmark::DoNotOptimize(tf::random::uniform({state.range(0)}));
    state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_RandomUniform)->Arg(1 << 24)->UseRealTime();

// N live variables sharing one base name ("Variable", "Variable_1", ...): naming is O(1) amortized
// per variable (NOTE [Variable names]), so the time per variable stays flat as N grows.
static void BM_SameNamedVariables(benchmark::State& state) {
    const tf::Tensor init = tf::constant(1.f);
    for (auto _ : state) {
        std::vector<tf::Variable> vars;
        vars.reserve(static_cast<std::size_t>(state.range(0)));
        for (int64_t i = 0; i < state.range(0); ++i)
            vars.emplace_back(init);
        benchmark::DoNotOptimize(vars.back().name());
    }
    state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_SameNamedVariables)->Arg(1000)->Arg(100000)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
