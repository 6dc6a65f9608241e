// nn benchmarks, tapeflow and (when built with it) LibTorch in the same run: the conv training
// step of the reference conv workload — input [32, 28, 28, 1] -> conv 3x3x32 (+ bias)
// -> relu -> conv 3x3x64 (+ bias) -> mean, forward + backward, VALID padding as torch's default;
// and 2x2 stride 2 max pooling of [32, 28, 28, 32] (NHWC; LibTorch: NCHW), forward alone and
// forward + backward of the sum.
//   build/benchmarks/bench_nn --benchmark_format=json > nn.json && benchmarks/compare.py nn.json
#include <benchmark/benchmark.h>

#include <tapeflow/tapeflow.hpp>

#include "bench_start.hpp"
#include "torch_cases.hpp"

namespace tf = tapeflow;

namespace {

// Forward + backward flops: conv1 forward and filter gradient, conv2 forward and both gradients
// (the input needs no gradient), as the anchor counts them.
constexpr double kConvStepFlops =
    2 * (2.0 * 32 * 26 * 26 * 32 * 9) + 3 * (2.0 * 32 * 24 * 24 * 64 * 32 * 9);

void BM_tapeflow_conv_step(benchmark::State& state) {
    const tf::Tensor x = tf::random::normal({32, 28, 28, 1}, 0, 1, tf::float32, 3);
    const tf::Tensor w1 = tf::random::normal({3, 3, 1, 32}, 0, 0.3, tf::float32, 4);
    const tf::Tensor b1 = tf::zeros({32});
    const tf::Tensor w2 = tf::random::normal({3, 3, 32, 64}, 0, 0.06, tf::float32, 5);
    const tf::Tensor b2 = tf::zeros({64});
    const std::vector<tf::Tensor> params = {w1, b1, w2, b2};
    for (auto _ : state) {
        tf::GradientTape tape;
        for (const auto& p : params)
            tape.watch(p);
        const tf::Tensor h = tf::nn::relu(tf::nn::bias_add(tf::nn::conv2d(x, w1, 1, "VALID"), b1));
        const tf::Tensor y =
            tf::reduce_mean(tf::nn::bias_add(tf::nn::conv2d(h, w2, 1, "VALID"), b2));
        benchmark::DoNotOptimize(tape.gradient(y, params));
    }
    state.counters["GFLOPS"] = benchmark::Counter(
        kConvStepFlops, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
}

// backward: the gradient of sum(y) too (tapeflow: a scatter of ones to each window's maximum).
void BM_tapeflow_max_pool(benchmark::State& state, bool backward) {
    const tf::Tensor x = tf::random::normal({32, 28, 28, 32}, 0, 1, tf::float32, 3);
    for (auto _ : state) {
        if (!backward) {
            benchmark::DoNotOptimize(tf::nn::max_pool2d(x, 2, 2, "VALID"));
            continue;
        }
        tf::GradientTape tape;
        tape.watch(x);
        const tf::Tensor y = tf::reduce_sum(tf::nn::max_pool2d(x, 2, 2, "VALID"));
        benchmark::DoNotOptimize(tape.gradient(y, x));
    }
}

}  // namespace

int main(int argc, char** argv) {
    start_side_by_side(&argc, argv, torch_cases::available());
    benchmark::RegisterBenchmark("nn/conv_step/tapeflow", BM_tapeflow_conv_step)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
    torch_cases::register_conv_step(kConvStepFlops);
    benchmark::RegisterBenchmark("nn/max_pool/tapeflow", BM_tapeflow_max_pool, false)
        ->UseRealTime()
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark("nn/max_pool_step/tapeflow", BM_tapeflow_max_pool, true)
        ->UseRealTime()
        ->Unit(benchmark::kMicrosecond);
    torch_cases::register_max_pool();
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
