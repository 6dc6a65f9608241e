// Benchmarks of the ops of current models, tapeflow and (when built with it) LibTorch in the same
// run, forward + backward: einsum "bqhd,bkhd->bhqk" (attention logits, B=8, T=S=256, N=4, H=32),
// a 3x3 depthwise convolution (SAME, [8, 56, 56, 64]) and a 3x3 stride-2 transposed convolution
// ([8, 16, 16, 64] -> [8, 32, 32, 32]).
//   build/benchmarks/bench_models --benchmark_format=json > models.json && benchmarks/compare.py
//   models.json
#include <benchmark/benchmark.h>

#include <tapeflow/tapeflow.hpp>

#include "bench_start.hpp"
#include "torch_model_cases.hpp"

namespace tf = tapeflow;

namespace {

// Forward, then the gradients of sum(y * g) for every input.
template <class F>
void fwd_bwd(benchmark::State& state, const std::vector<tf::Tensor>& inputs, F f) {
    const tf::Tensor g = tf::random::normal(f(inputs).shape(), 0, 1, tf::float32, 9);
    for (auto _ : state) {
        tf::GradientTape tape;
        for (const auto& t : inputs)
            tape.watch(t);
        const tf::Tensor y = f(inputs);
        auto grads = tape.gradient(tf::reduce_sum(y * g), inputs);
        benchmark::DoNotOptimize(grads[0].dense().raw_data());
    }
}

void BM_einsum(benchmark::State& state) {
    fwd_bwd(state,
            {tf::random::normal({8, 256, 4, 32}, 0, 1, tf::float32, 1),
             tf::random::normal({8, 256, 4, 32}, 0, 1, tf::float32, 2)},
            [](const std::vector<tf::Tensor>& in) { return tf::einsum("bqhd,bkhd->bhqk", in); });
}

void BM_depthwise(benchmark::State& state) {
    fwd_bwd(state,
            {tf::random::normal({8, 56, 56, 64}, 0, 1, tf::float32, 3),
             tf::random::normal({3, 3, 64, 1}, 0, 1, tf::float32, 4)},
            [](const std::vector<tf::Tensor>& in) {
                return tf::nn::depthwise_conv2d(in[0], in[1], 1, "SAME");
            });
}

void BM_conv_transpose(benchmark::State& state) {
    fwd_bwd(state,
            {tf::random::normal({8, 16, 16, 64}, 0, 1, tf::float32, 5),
             tf::random::normal({3, 3, 32, 64}, 0, 1, tf::float32, 6)},
            [](const std::vector<tf::Tensor>& in) {
                return tf::nn::conv2d_transpose(in[0], in[1], {8, 32, 32, 32}, 2, "SAME");
            });
}

void add(const char* name, void (*fn)(benchmark::State&)) {
    benchmark::RegisterBenchmark(name, fn)->UseRealTime()->Unit(benchmark::kMillisecond);
}

}  // namespace

int main(int argc, char** argv) {
    start_side_by_side(&argc, argv, torch_cases::available());
    add("models/einsum_bqhd_bkhd/tapeflow", BM_einsum);
    torch_model_cases::register_einsum();
    add("models/depthwise_3x3/tapeflow", BM_depthwise);
    torch_model_cases::register_depthwise();
    add("models/conv2d_transpose_3x3_s2/tapeflow", BM_conv_transpose);
    torch_model_cases::register_conv_transpose();
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
