// LibTorch workloads for bench_ops (see torch_cases.hpp), written as LibTorch users write them.
// Compiled as C++17 in its own library: LibTorch 1.13's headers predate C++20.
#include "torch_cases.hpp"

#include <string>

#include <benchmark/benchmark.h>

#include "libtorch_case.hpp"

#ifdef TAPEFLOW_BENCH_TORCH
#include <cblas.h>  // OpenBLAS's openblas_set_num_threads
#include <torch/torch.h>

namespace torch_cases {
namespace {

void add_1elem(benchmark::State& state) {
    torch::NoGradGuard no_grad;
    auto a = torch::ones({1});
    auto b = torch::ones({1});
    for (auto _ : state)
        benchmark::DoNotOptimize(a + b);
}

void add_chain(benchmark::State& state) {
    auto b = torch::ones({1});
    for (auto _ : state) {
        auto x = torch::ones({1}, torch::requires_grad());
        auto y = x;
        for (int i = 0; i < 100; ++i)
            y = y + b;
        y.backward();
        benchmark::DoNotOptimize(x.grad());
    }
    state.SetItemsProcessed(state.iterations() * 100);
}

void mul_add(benchmark::State& state) {
    torch::NoGradGuard no_grad;
    const int64_t n = state.range(0);
    auto a = torch::rand({n});
    auto b = torch::rand({n});
    for (auto _ : state)
        benchmark::DoNotOptimize(a * b + a);
    state.SetBytesProcessed(state.iterations() * n * 12);
}

void exp_case(benchmark::State& state) {
    torch::NoGradGuard no_grad;
    const int64_t n = state.range(0);
    auto a = torch::rand({n});
    for (auto _ : state)
        benchmark::DoNotOptimize(torch::exp(a));
    state.SetBytesProcessed(state.iterations() * n * 8);
}

void sum_all(benchmark::State& state) {
    torch::NoGradGuard no_grad;
    auto a = torch::rand({int64_t{1} << 24});
    for (auto _ : state)
        benchmark::DoNotOptimize(a.sum());
    state.SetBytesProcessed(state.iterations() * (int64_t{1} << 24) * 4);
}

void sum_axis1(benchmark::State& state) {
    torch::NoGradGuard no_grad;
    auto a = torch::rand({4096, 4096});
    for (auto _ : state)
        benchmark::DoNotOptimize(a.sum(1));
    state.SetBytesProcessed(state.iterations() * (int64_t{1} << 24) * 4);
}

void matmul(benchmark::State& state) {
    torch::NoGradGuard no_grad;
    const int64_t n = state.range(0);
    auto a = torch::rand({n, n});
    auto b = torch::rand({n, n});
    for (auto _ : state)
        benchmark::DoNotOptimize(torch::matmul(a, b));
    state.counters["GFLOPS"] = benchmark::Counter(2.0 * n * n * n,
                                                  benchmark::Counter::kIsIterationInvariantRate,
                                                  benchmark::Counter::kIs1000);
}

// The reference conv step (NCHW, LibTorch's faster layout here).
void conv_step(benchmark::State& state, double flops) {
    torch::manual_seed(3);
    auto x = torch::randn({32, 1, 28, 28});
    torch::nn::Conv2d c1(torch::nn::Conv2dOptions(1, 32, 3)),
        c2(torch::nn::Conv2dOptions(32, 64, 3));
    std::vector<torch::Tensor> params = c1->parameters();
    for (auto& p : c2->parameters())
        params.push_back(p);
    for (auto _ : state) {
        for (auto& p : params)
            p.mutable_grad().reset();
        auto y = c2(torch::relu(c1(x))).mean();
        y.backward();
        benchmark::DoNotOptimize(params[0].grad());
    }
    state.counters["GFLOPS"] = benchmark::Counter(
        flops, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
}

// bench_nn's pooling rows: 2x2 stride 2 max pooling of [32, 32, 28, 28] (NCHW, LibTorch's own
// layout), forward alone and forward + backward of its sum.
void max_pool(benchmark::State& state, bool backward) {
    torch::manual_seed(3);
    auto x = torch::randn({32, 32, 28, 28}, torch::requires_grad(backward));
    for (auto _ : state) {
        if (!backward) {
            torch::NoGradGuard no_grad;
            benchmark::DoNotOptimize(torch::max_pool2d(x, 2, 2));
            continue;
        }
        x.mutable_grad().reset();
        torch::max_pool2d(x, 2, 2).sum().backward();
        benchmark::DoNotOptimize(x.grad());
    }
}

}  // namespace

namespace {
int blas_threads = 1;  // set_threads's count, which use_libtorch_blas_threads gives OpenBLAS
}  // namespace

bool available() {
    return true;
}
void set_threads(int threads) {
    torch::set_num_threads(threads);
    blas_threads = threads;
}
void use_libtorch_blas_threads() {
    openblas_set_num_threads(blas_threads);
}
void register_overhead() {
    benchmark::RegisterBenchmark("overhead/add_1elem/libtorch", libtorch_case(add_1elem));
}
void register_overhead_tape() {
    benchmark::RegisterBenchmark("overhead/add_chain_fwd_bwd/libtorch", libtorch_case(add_chain));
}
void register_mul_add(int64_t n) {
    benchmark::RegisterBenchmark(("elementwise/mul_add/" + std::to_string(n) + "/libtorch").c_str(),
                                 libtorch_case(mul_add))
        ->Arg(n)
        ->UseRealTime();
}
void register_exp(int64_t n) {
    benchmark::RegisterBenchmark(("elementwise/exp/" + std::to_string(n) + "/libtorch").c_str(),
                                 libtorch_case(exp_case))
        ->Arg(n)
        ->UseRealTime();
}
void register_sum_all() {
    benchmark::RegisterBenchmark("reduce/sum_all/libtorch", libtorch_case(sum_all))->UseRealTime();
}
void register_sum_axis1() {
    benchmark::RegisterBenchmark("reduce/sum_axis1/libtorch", libtorch_case(sum_axis1))
        ->UseRealTime();
}
void register_matmul(int64_t n) {
    benchmark::RegisterBenchmark(("matmul/" + std::to_string(n) + "/libtorch").c_str(),
                                 libtorch_case(matmul))
        ->Arg(n)
        ->UseRealTime();
}
void register_conv_step(double flops) {
    benchmark::RegisterBenchmark("nn/conv_step/libtorch", libtorch_case(conv_step), flops)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
}

void register_max_pool() {
    benchmark::RegisterBenchmark("nn/max_pool/libtorch", libtorch_case(max_pool), false)
        ->UseRealTime()
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark("nn/max_pool_step/libtorch", libtorch_case(max_pool), true)
        ->UseRealTime()
        ->Unit(benchmark::kMicrosecond);
}

}  // namespace torch_cases

#else  // built without LibTorch

namespace torch_cases {
bool available() {
    return false;
}
void set_threads(int) {}
void use_libtorch_blas_threads() {}
void register_overhead() {}
void register_overhead_tape() {}
void register_mul_add(int64_t) {}
void register_exp(int64_t) {}
void register_sum_all() {}
void register_sum_axis1() {}
void register_matmul(int64_t) {}
void register_conv_step(double) {}
void register_max_pool() {}
}  // namespace torch_cases

#endif
