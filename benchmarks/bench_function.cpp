// tf::function (issue 28): eager vs replayed, LibTorch's eager step in the same run. Per op on
// 1-element tensors (a chain of 100 adds), the tutorial network's Adam step, the medium MLP's Adam
// step, the transformer LM's training step (time and peak tensor memory), Keras fit on the digits
// convnet (8 steps, run_eagerly vs compiled), and the cost of a trace (first call: run + record +
// plan) against a replay.
//   build/benchmarks/bench_function --benchmark_repetitions=5 --benchmark_report_aggregates_only

#include <benchmark/benchmark.h>

#include <tapeflow/tapeflow.hpp>

#include "bench_start.hpp"
#include "torch_train_cases.hpp"
#include "train_models.hpp"
#include "transformer_model.hpp"

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

// The transformer LM's step (samples/transformer_model.hpp, as bench_transformer), with the peak
// tensor memory of one step above what is live before it (the allocator's counter).
void BM_lm_step(benchmark::State& state) {
    namespace tm = transformer_model;
    constexpr int64_t kVocab = 96, kBatch = 32;  // as bench_transformer
    tf::random::set_seed(7);
    const tm::Model model = tm::make_model(kVocab);
    tf::train::AdamOptimizer optimizer(3e-3);
    const std::pair<tf::Tensor, tf::Tensor> batch = tm::random_batch(kVocab, kBatch);
    const tf::Tensor& xs = batch.first;
    const tf::Tensor& ys = batch.second;
    auto eager = [&] {
        return optimizer.minimize([&] { return tm::loss_of(model, xs, ys); });
    };
    auto traced = tf::function(eager);
    const bool use_function = state.range(0) == 1;
    auto step = [&] {
        return use_function ? traced() : eager();
    };
    step();
    tf::reset_peak_memory_stats();
    const int64_t base = tf::memory_stats().bytes_in_use;
    step();
    state.counters["peak_MiB"] =
        static_cast<double>(tf::memory_stats().peak_bytes_in_use - base) / (1 << 20);
    for (auto _ : state)
        benchmark::DoNotOptimize(step());
}

// Keras fit on the digits convnet (batch 32 of 8x8x1, Adam): 8 steps per iteration.
void BM_keras_fit(benchmark::State& state) {
    namespace kl = tf::keras::layers;
    auto conv = [](int64_t filters) {
        return std::make_shared<kl::Conv2D>(
            filters, 3, kl::Conv2DOptions{.padding = "same", .activation = "relu"});
    };
    tf::random::set_seed(1);
    tf::keras::Sequential model({conv(16),
                                 std::make_shared<kl::MaxPooling2D>(2, std::nullopt, "same"),
                                 conv(32),
                                 std::make_shared<kl::MaxPooling2D>(2, std::nullopt, "same"),
                                 std::make_shared<kl::Flatten>(),
                                 std::make_shared<kl::Dense>(10)});
    model.compile(std::make_shared<tf::keras::optimizers::Adam>(),
                  std::make_shared<tf::keras::losses::SparseCategoricalCrossentropy>(
                      tf::keras::losses::CrossentropyOptions{.from_logits = true}),
                  {},
                  {.run_eagerly = state.range(0) == 0});
    const tf::Tensor x = tf::random::uniform({32 * 8, 8, 8, 1});
    const tf::Tensor y = tf::cast(tf::random::uniform({32 * 8}, 0, 10), tf::int32);
    const tf::keras::FitOptions options{
        .batch_size = 32, .epochs = 1, .verbose = 0, .shuffle = false};
    model.fit(x, y, options);
    for (auto _ : state)
        model.fit(x, y, options);
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
    benchmark::RegisterBenchmark("function/lm_train_step/eager", BM_lm_step)->Arg(0)->UseRealTime();
    benchmark::RegisterBenchmark("function/lm_train_step/function", BM_lm_step)
        ->Arg(1)
        ->UseRealTime();
    benchmark::RegisterBenchmark("function/keras_fit_convnet_8_steps/eager", BM_keras_fit)
        ->Arg(0)
        ->UseRealTime();
    benchmark::RegisterBenchmark("function/keras_fit_convnet_8_steps/function", BM_keras_fit)
        ->Arg(1)
        ->UseRealTime();
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
