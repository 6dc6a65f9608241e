// Training benchmarks (issue 5), tapeflow and LibTorch in one run: one step of the tutorial network
// (2 -> 3 relu -> 1, batch 10, Adam), one step of a medium MLP (784 -> 512 -> 512 -> 10, softmax
// cross-entropy, batch 128, Adam) and its peak RSS over 100 steps (each framework in its own
// program, so neither carries the other's libraries), one Adam update of 10M float32 parameters
// against the STREAM triad, and gate_none's peak gradient memory against gate_op.
//   build/benchmarks/bench_train --benchmark_format=json > train.json && benchmarks/compare.py
//   train.json
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <benchmark/benchmark.h>

#include <tapeflow/tapeflow.hpp>

#include "bench_start.hpp"
#include "limits.hpp"
#include "rss_report.hpp"
#include "torch_cases.hpp"
#include "torch_train_cases.hpp"
#include "train_models.hpp"

namespace tf = tapeflow;

namespace {

using train_models::Dense;
using train_models::Mlp;
using train_models::relu;
using train_models::Tutorial;

constexpr int64_t k10M = 10'000'000;

void BM_tapeflow_tutorial_step(benchmark::State& state) {
    tf::random::set_seed(1);
    Tutorial t;
    for (auto _ : state)
        t.step();
}

void BM_tapeflow_mlp_step(benchmark::State& state) {
    tf::random::set_seed(1);
    Mlp m;
    for (auto _ : state)
        m.step();
}

void BM_tapeflow_adam_10m(benchmark::State& state) {
    const int64_t n = state.range(0);
    tf::Variable p(tf::random::uniform({n}), {.name = "p"});
    const tf::Tensor g = tf::random::uniform({n});
    tf::train::AdamOptimizer opt(0.001);
    for (auto _ : state)
        opt.apply_gradients({{g, p}});
    state.SetBytesProcessed(state.iterations() * n * 28);  // reads var, m, v, g; writes var, m, v
}

// gate_none vs gate_op: peak tensor memory during minimize for 8 layers of 1024x1024 at batch 16,
// where the weight gradients (4 MiB each) dominate what the step allocates.
void BM_tapeflow_gate(benchmark::State& state) {
    tf::random::set_seed(3);
    std::vector<Dense> layers;
    for (int i = 0; i < 8; ++i)
        layers.emplace_back(1024, 1024);
    const tf::Tensor x = tf::random::uniform({16, 1024});
    tf::train::GradientDescentOptimizer opt(1e-4);
    const auto gate = static_cast<tf::train::GateGradients>(state.range(0));
    int64_t peak = 0;
    for (auto _ : state) {
        tf::reset_peak_memory_stats();
        const int64_t base = tf::memory_stats().bytes_in_use;
        opt.minimize(
            [&] {
                tf::Tensor h = x;
                for (const Dense& d : layers)
                    h = relu(d(h));
                return tf::reduce_mean(tf::square(h));
            },
            {},
            {},
            gate);
        peak = std::max(peak, tf::memory_stats().peak_bytes_in_use - base);
    }
    state.counters["peak_step_MiB"] = static_cast<double>(peak) / (1 << 20);
}

// ---- peak RSS over 100 steps, each framework in its own process ----

// Peak RSS of 100 medium-MLP steps, tapeflow's and LibTorch's, each measured by a separate
// program (rss_mlp_tapeflow, rss_mlp_libtorch beside this one) that loads only its framework:
// a forked child of this process would carry both frameworks' libraries.
void measure_rss() {
    const std::string dir = rss_report::own_directory();
    for (const char* who : {"tapeflow", "libtorch"}) {
        const auto rss = rss_report::run_child(dir + "/rss_mlp_" + who);
        if (!rss) continue;  // not built (no LibTorch)
        benchmark::AddCustomContext(fmt::format("mlp_100_steps_peak_rss_MiB_{}", who),
                                    fmt::format("{:.1f}", rss->peak));
        benchmark::AddCustomContext(fmt::format("mlp_100_steps_rss_growth_MiB_{}", who),
                                    fmt::format("{:.1f}", rss->growth));
        std::fprintf(stderr,
                     "mlp 100 steps: %s peak RSS %.1f MiB (+%.1f MiB over its start)\n",
                     who,
                     rss->peak,
                     rss->growth);
    }
}

}  // namespace

int main(int argc, char** argv) {
    start_side_by_side(&argc, argv, torch_train_cases::available());

    // Peak RSS first, before either framework has run anything in this process (skipped with
    // TAPEFLOW_BENCH_SKIP_RSS=1, e.g. under a profiler).
    if (std::getenv("TAPEFLOW_BENCH_SKIP_RSS") == nullptr) measure_rss();

    benchmark::RegisterBenchmark("train/tutorial_step/tapeflow", BM_tapeflow_tutorial_step);
    torch_train_cases::register_tutorial_step();
    benchmark::RegisterBenchmark("train/mlp_step/tapeflow", BM_tapeflow_mlp_step)->UseRealTime();
    torch_train_cases::register_mlp_step();
    benchmark::RegisterBenchmark("train/adam_10M/tapeflow", BM_tapeflow_adam_10m)
        ->Arg(k10M)
        ->UseRealTime();
    benchmark::RegisterBenchmark("train/adam_10M/limit_triad", limits::BM_triad)
        ->Arg(k10M)
        ->UseRealTime();
    torch_train_cases::register_adam_10m(k10M);
    benchmark::RegisterBenchmark("gate/gate_op/tapeflow", BM_tapeflow_gate)
        ->Arg(static_cast<int>(tf::train::GateGradients::gate_op))
        ->UseRealTime();
    benchmark::RegisterBenchmark("gate/gate_none/tapeflow", BM_tapeflow_gate)
        ->Arg(static_cast<int>(tf::train::GateGradients::gate_none))
        ->UseRealTime();
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
