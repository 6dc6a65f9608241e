// LibTorch workloads for bench_models (see torch_model_cases.hpp), written as LibTorch users write
// them (NCHW, the layout its CPU convolutions use). Compiled as C++17 in its own library.
#include "torch_model_cases.hpp"

#include <benchmark/benchmark.h>

#include "libtorch_case.hpp"

#ifdef TAPEFLOW_BENCH_TORCH
#include <torch/torch.h>

namespace torch_model_cases {
namespace {

// Forward, then the gradients of sum(y * g) for every input.
template <class F>
void fwd_bwd(benchmark::State& state, std::vector<torch::Tensor> inputs, F f) {
    for (auto& t : inputs)
        t.requires_grad_(true);
    const torch::Tensor g = torch::randn(f(inputs).sizes());
    for (auto _ : state) {
        const torch::Tensor y = f(inputs);
        auto grads = torch::autograd::grad({y}, inputs, {g});
        benchmark::DoNotOptimize(grads[0].data_ptr());
    }
}

void einsum(benchmark::State& state) {
    fwd_bwd(state,
            {torch::randn({8, 256, 4, 32}), torch::randn({8, 256, 4, 32})},
            [](const std::vector<torch::Tensor>& in) {
                return torch::einsum("bqhd,bkhd->bhqk", {in[0], in[1]});
            });
}

void depthwise(benchmark::State& state) {
    fwd_bwd(state,
            {torch::randn({8, 64, 56, 56}), torch::randn({64, 1, 3, 3})},
            [](const std::vector<torch::Tensor>& in) {
                return torch::conv2d(in[0], in[1], {}, 1, 1, 1, 64);
            });
}

void conv_transpose(benchmark::State& state) {
    // padding 1, output_padding 1: 16 -> 32, as TensorFlow's SAME with output_shape 32.
    fwd_bwd(state,
            {torch::randn({8, 64, 16, 16}), torch::randn({64, 32, 3, 3})},
            [](const std::vector<torch::Tensor>& in) {
                return torch::conv_transpose2d(in[0], in[1], {}, 2, 1, 1);
            });
}

}  // namespace

void register_einsum() {
    benchmark::RegisterBenchmark("models/einsum_bqhd_bkhd/libtorch",
                                 torch_cases::libtorch_case(einsum))
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
}
void register_depthwise() {
    benchmark::RegisterBenchmark("models/depthwise_3x3/libtorch",
                                 torch_cases::libtorch_case(depthwise))
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
}
void register_conv_transpose() {
    benchmark::RegisterBenchmark("models/conv2d_transpose_3x3_s2/libtorch",
                                 torch_cases::libtorch_case(conv_transpose))
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
}

}  // namespace torch_model_cases

#else  // built without LibTorch

namespace torch_model_cases {
void register_einsum() {}
void register_depthwise() {}
void register_conv_transpose() {}
}  // namespace torch_model_cases

#endif
