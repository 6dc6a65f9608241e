// LibTorch cases of bench_keras (see torch_keras_cases.hpp), written as the LibTorch tutorials
// write them: torch::nn::Sequential, zero_grad / backward / step. C++17 (LibTorch 1.13's headers).
#include "torch_keras_cases.hpp"

#include <benchmark/benchmark.h>

#include "libtorch_case.hpp"

#ifdef TAPEFLOW_BENCH_TORCH
#include <torch/torch.h>

namespace torch_keras_cases {
namespace {

int64_t g_steps = 8;

template <class Model>
void train_steps(benchmark::State& state,
                 Model& model,
                 torch::optim::Optimizer& opt,
                 const torch::Tensor& x,
                 const torch::Tensor& labels,
                 int64_t batch) {
    for (auto _ : state) {
        for (int64_t s = 0; s < g_steps; ++s) {
            opt.zero_grad();
            auto loss = torch::nn::functional::cross_entropy(
                model->forward(x.narrow(0, s * batch, batch)), labels.narrow(0, s * batch, batch));
            loss.backward();
            opt.step();
        }
    }
}

void mlp(benchmark::State& state) {
    torch::manual_seed(1);
    torch::nn::Sequential model{torch::nn::Linear(784, 512),
                                torch::nn::ReLU(),
                                torch::nn::Linear(512, 512),
                                torch::nn::ReLU(),
                                torch::nn::Linear(512, 10)};
    torch::optim::Adam opt(model->parameters(), torch::optim::AdamOptions(1e-3));
    train_steps(state,
                model,
                opt,
                torch::rand({128 * g_steps, 784}),
                torch::randint(0, 10, {128 * g_steps}, torch::kLong),
                128);
}

void convnet(benchmark::State& state) {
    torch::manual_seed(1);
    namespace nn = torch::nn;
    nn::Sequential model{nn::Conv2d(nn::Conv2dOptions(1, 16, 3).padding(1)),
                         nn::ReLU(),
                         nn::MaxPool2d(nn::MaxPool2dOptions(2)),
                         nn::Conv2d(nn::Conv2dOptions(16, 32, 3).padding(1)),
                         nn::ReLU(),
                         nn::MaxPool2d(nn::MaxPool2dOptions(2)),
                         nn::Flatten(),
                         nn::Linear(128, 10)};
    torch::optim::Adam opt(model->parameters(), torch::optim::AdamOptions(5e-3));
    train_steps(state,
                model,
                opt,
                torch::rand({32 * g_steps, 1, 8, 8}),
                torch::randint(0, 10, {32 * g_steps}, torch::kLong),
                32);
}

template <class Norm>
void norm_step(benchmark::State& state, Norm& norm, const torch::Tensor& x) {
    torch::optim::SGD opt(norm->parameters(), torch::optim::SGDOptions(0.01));
    for (auto _ : state) {
        opt.zero_grad();
        auto loss = norm->forward(x).pow(2).mean();
        loss.backward();
        opt.step();
    }
}

void batchnorm(benchmark::State& state) {
    torch::manual_seed(1);
    torch::nn::BatchNorm2d bn(torch::nn::BatchNorm2dOptions(64).eps(1e-3).momentum(0.01));
    bn->train();
    norm_step(state, bn, torch::rand({32, 64, 16, 16}));
}

void layernorm(benchmark::State& state) {
    torch::manual_seed(1);
    torch::nn::LayerNorm ln(torch::nn::LayerNormOptions({256}).eps(1e-3));
    norm_step(state, ln, torch::rand({64, 128, 256}));
}

// Recurrent layers, forward and backward (no optimizer step): batch 32, 100 steps, 128 -> 256
// units, the whole sequence returned, loss mean(y^2).
template <class Rnn>
void rnn_step(benchmark::State& state, Rnn& rnn) {
    const torch::Tensor x = torch::rand({32, 100, 128});
    for (auto _ : state) {
        rnn->zero_grad();
        auto out = std::get<0>(rnn->forward(x));
        auto loss = out.pow(2).mean();
        loss.backward();
    }
}

void lstm(benchmark::State& state) {
    torch::manual_seed(1);
    torch::nn::LSTM rnn(torch::nn::LSTMOptions(128, 256).batch_first(true));
    rnn_step(state, rnn);
}

void gru(benchmark::State& state) {
    torch::manual_seed(1);
    torch::nn::GRU rnn(torch::nn::GRUOptions(128, 256).batch_first(true));
    rnn_step(state, rnn);
}

}  // namespace

bool available() {
    return true;
}

void register_cases(int64_t steps_per_iteration) {
    g_steps = steps_per_iteration;
    benchmark::RegisterBenchmark("keras/mlp_8_steps/libtorch", torch_cases::libtorch_case(mlp))
        ->UseRealTime();
    benchmark::RegisterBenchmark("keras/convnet_8_steps/libtorch",
                                 torch_cases::libtorch_case(convnet))
        ->UseRealTime();
    benchmark::RegisterBenchmark("keras/batchnorm_step/libtorch",
                                 torch_cases::libtorch_case(batchnorm))
        ->UseRealTime();
    benchmark::RegisterBenchmark("keras/layernorm_step/libtorch",
                                 torch_cases::libtorch_case(layernorm))
        ->UseRealTime();
    benchmark::RegisterBenchmark("keras/lstm_fwd_bwd/libtorch", torch_cases::libtorch_case(lstm))
        ->UseRealTime();
    benchmark::RegisterBenchmark("keras/gru_fwd_bwd/libtorch", torch_cases::libtorch_case(gru))
        ->UseRealTime();
}

}  // namespace torch_keras_cases

#else  // built without LibTorch

namespace torch_keras_cases {
bool available() {
    return false;
}
void register_cases(int64_t) {}
}  // namespace torch_keras_cases

#endif
