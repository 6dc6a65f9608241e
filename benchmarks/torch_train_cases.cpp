// LibTorch training steps for bench_train (see torch_train_cases.hpp): torch::nn modules and
// torch::optim::Adam, as the LibTorch tutorial writes them. C++17 (LibTorch 1.13's headers).
#include "torch_train_cases.hpp"

#include <string>

#include <benchmark/benchmark.h>

#include "libtorch_case.hpp"

#ifdef TAPEFLOW_BENCH_TORCH
#include <torch/torch.h>

namespace torch_train_cases {
namespace {

struct Mlp {
    torch::nn::Sequential model{torch::nn::Linear(784, 512),
                                torch::nn::ReLU(),
                                torch::nn::Linear(512, 512),
                                torch::nn::ReLU(),
                                torch::nn::Linear(512, 10)};
    torch::optim::Adam opt{model->parameters(), torch::optim::AdamOptions(1e-3)};
    torch::Tensor x = torch::rand({128, 784});
    torch::Tensor labels = torch::randint(0, 10, {128}, torch::kLong);

    void step() {
        opt.zero_grad();
        auto loss = torch::nn::functional::cross_entropy(model->forward(x), labels);
        loss.backward();
        opt.step();
    }
};

void tutorial_step(benchmark::State& state) {
    torch::manual_seed(1);
    torch::nn::Sequential model{
        torch::nn::Linear(2, 3), torch::nn::ReLU(), torch::nn::Linear(3, 1)};
    torch::optim::Adam opt(model->parameters(), torch::optim::AdamOptions(0.01));
    auto x = torch::rand({10, 2});
    auto y = torch::rand({10, 1});
    for (auto _ : state) {
        opt.zero_grad();
        auto loss = torch::mse_loss(model->forward(x), y);
        loss.backward();
        opt.step();
    }
}

void mlp_step(benchmark::State& state) {
    torch::manual_seed(1);
    Mlp mlp;
    for (auto _ : state)
        mlp.step();
}

void adam_10m(benchmark::State& state) {
    const int64_t n = state.range(0);
    auto p = torch::rand({n}, torch::requires_grad());
    p.mutable_grad() = torch::rand({n});
    torch::optim::Adam opt({p}, torch::optim::AdamOptions(1e-3));
    for (auto _ : state)
        opt.step();
    state.SetBytesProcessed(state.iterations() * n * 28);
}

}  // namespace

bool available() {
    return true;
}
void register_tutorial_step() {
    benchmark::RegisterBenchmark("train/tutorial_step/libtorch",
                                 torch_cases::libtorch_case(tutorial_step));
}
void register_mlp_step() {
    benchmark::RegisterBenchmark("train/mlp_step/libtorch", torch_cases::libtorch_case(mlp_step))
        ->UseRealTime();
}
void register_adam_10m(int64_t n) {
    benchmark::RegisterBenchmark("train/adam_10M/libtorch", torch_cases::libtorch_case(adam_10m))
        ->Arg(n)
        ->UseRealTime();
}
void run_mlp_steps(int steps) {
    torch::manual_seed(1);
    Mlp mlp;
    for (int i = 0; i < steps; ++i)
        mlp.step();
}

}  // namespace torch_train_cases

#else  // built without LibTorch

namespace torch_train_cases {
bool available() {
    return false;
}
void register_tutorial_step() {}
void register_mlp_step() {}
void register_adam_10m(int64_t) {}
void run_mlp_steps(int) {}
}  // namespace torch_train_cases

#endif
