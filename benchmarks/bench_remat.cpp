// Gradient checkpointing (tf::recompute_grad, issue 30) on the training step of
// samples/transformer_model.hpp, each block checkpointed or not: the step's peak tensor memory
// (tf::memory_stats' peak counter over one warm step, printed and put in the report's context) and
// its time (Google Benchmark), for the sample's model (2 blocks) and a deeper one (8 blocks).
//   build/benchmarks/bench_remat --benchmark_format=json > remat.json
#include <cstdio>
#include <string>
#include <tuple>

#include <benchmark/benchmark.h>
#include <omp.h>

#include <tapeflow/tapeflow.hpp>

#include "transformer_model.hpp"

namespace tf = tapeflow;
namespace lm = transformer_model;

namespace {

constexpr int64_t kVocab = 96, kBatch = 32;

// One model with its data and optimizer; step() is one Adam step on the batch.
struct Trainer {
    explicit Trainer(int64_t layers) : optimizer(3e-3) {
        tf::random::set_seed(7);
        model = lm::make_model(kVocab, layers);
        std::tie(xs, ys) = lm::random_batch(kVocab, kBatch);
    }
    float step(bool checkpoint) {
        return optimizer.minimize([&] { return lm::loss_of(model, xs, ys, checkpoint); })
            .item<float>();
    }
    lm::Model model;
    tf::train::AdamOptimizer optimizer;
    tf::Tensor xs, ys;
};

// Peak tensor bytes above what was in use before, over one step after a warm-up step (the
// optimizer's slots exist by then).
int64_t step_peak_bytes(int64_t layers, bool checkpoint) {
    Trainer trainer(layers);
    trainer.step(checkpoint);
    const int64_t before = tf::memory_stats().bytes_in_use;
    tf::reset_peak_memory_stats();
    trainer.step(checkpoint);
    return tf::memory_stats().peak_bytes_in_use - before;
}

void report_peaks(int64_t layers) {
    const double plain = static_cast<double>(step_peak_bytes(layers, false)) / (1 << 20);
    const double remat = static_cast<double>(step_peak_bytes(layers, true)) / (1 << 20);
    const std::string name = "lm_step_peak_MiB_" + std::to_string(layers) + "_blocks";
    benchmark::AddCustomContext(name + "_plain", fmt::format("{:.2f}", plain));
    benchmark::AddCustomContext(name + "_recompute_grad", fmt::format("{:.2f}", remat));
    std::fprintf(stderr,
                 "transformer LM step, %lld blocks: peak %.2f MiB plain, %.2f MiB with "
                 "recompute_grad (ratio %.3f)\n",
                 static_cast<long long>(layers),
                 plain,
                 remat,
                 remat / plain);
}

void BM_lm_step(benchmark::State& state) {
    const int64_t layers = state.range(0);
    const bool checkpoint = state.range(1) != 0;
    Trainer trainer(layers);
    for (auto _ : state)
        benchmark::DoNotOptimize(trainer.step(checkpoint));
    state.counters["tokens_per_s"] = benchmark::Counter(
        static_cast<double>(kBatch * lm::kContext), benchmark::Counter::kIsIterationInvariantRate);
}

}  // namespace

int main(int argc, char** argv) {
    tf::set_num_threads(1);
    omp_set_num_threads(1);
    benchmark::Initialize(&argc, argv);
    benchmark::AddCustomContext("threads", "1");
    for (const int64_t layers : {lm::kLayers, int64_t{8}})
        report_peaks(layers);
    for (const int64_t layers : {lm::kLayers, int64_t{8}}) {
        for (const int64_t checkpoint : {0, 1}) {
            benchmark::RegisterBenchmark(fmt::format("transformer/lm_train_step/{}_blocks/{}",
                                                     layers,
                                                     checkpoint != 0 ? "recompute_grad" : "plain")
                                             .c_str(),
                                         BM_lm_step)
                ->Args({layers, checkpoint})
                ->UseRealTime()
                ->Unit(benchmark::kMillisecond);
        }
    }
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
