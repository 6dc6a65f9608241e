// tf::keras benchmarks (issue 19), tapeflow and LibTorch's torch::nn in one run. For the medium MLP
// (784 -> 512 relu -> 512 relu -> 10, batch 128, Adam) and the digits convnet (batch 32 of 8x8x1,
// Adam), one iteration is 8 training steps: through Model.fit (the `tapeflow` row), the same steps
// written by hand with Variables, a tape and apply_gradients (the `limit_by_hand` row: what the
// layer machinery must not exceed by more than 5%), and LibTorch. Then one BatchNormalization
// training step ([32, 16, 16, 64], SGD) and one LayerNormalization step ([64, 128, 256]).
//   build/benchmarks/bench_keras --benchmark_format=json > keras.json && benchmarks/compare.py
//   keras.json
#include <cmath>

#include <benchmark/benchmark.h>

#include <tapeflow/tapeflow.hpp>

#include "bench_start.hpp"
#include "torch_keras_cases.hpp"

namespace tf = tapeflow;
namespace kl = tf::keras::layers;

namespace {

constexpr int64_t kSteps = 8;

using Layers = std::vector<std::shared_ptr<kl::Layer>>;

Layers mlp_layers() {
    return {std::make_shared<kl::Dense>(512, kl::DenseOptions{.activation = "relu"}),
            std::make_shared<kl::Dense>(512, kl::DenseOptions{.activation = "relu"}),
            std::make_shared<kl::Dense>(10)};
}

Layers convnet_layers() {
    auto conv = [](int64_t filters) {
        return std::make_shared<kl::Conv2D>(
            filters, 3, kl::Conv2DOptions{.padding = "same", .activation = "relu"});
    };
    return {conv(16),
            std::make_shared<kl::MaxPooling2D>(2, std::nullopt, "same"),
            conv(32),
            std::make_shared<kl::MaxPooling2D>(2, std::nullopt, "same"),
            std::make_shared<kl::Flatten>(),
            std::make_shared<kl::Dense>(10)};
}

struct Data {
    tf::Tensor x, y;
};

Data mlp_data() {
    return {tf::random::uniform({128 * kSteps, 784}),
            tf::cast(tf::random::uniform({128 * kSteps}, 0, 10), tf::int32)};
}

Data convnet_data() {
    return {tf::random::uniform({32 * kSteps, 8, 8, 1}),
            tf::cast(tf::random::uniform({32 * kSteps}, 0, 10), tf::int32)};
}

// kSteps steps through Model.fit: one epoch over kSteps batches, in order, silent.
void fit_steps(benchmark::State& state, Layers layers, Data data, int64_t batch, double lr) {
    tf::random::set_seed(1);
    tf::keras::Sequential model(std::move(layers));
    model.compile(std::make_shared<tf::train::AdamOptimizer>(lr),
                  std::make_shared<tf::keras::losses::SparseCategoricalCrossentropy>(
                      tf::keras::losses::CrossentropyOptions{.from_logits = true}));
    const tf::keras::FitOptions options{
        .batch_size = batch, .epochs = 1, .verbose = 0, .shuffle = false};
    for (auto _ : state)
        model.fit(data.x, data.y, options);
}

// The same steps by hand: the layers' ops on Variables (built once), a tape, apply_gradients.
void by_hand_steps(benchmark::State& state, Layers layers, Data data, int64_t batch, double lr) {
    tf::random::set_seed(1);
    tf::keras::Sequential model(std::move(layers));
    model(tf::slice(data.x, std::vector<int64_t>(data.x.rank(), 0), [&] {
        auto s = data.x.shape().dims();
        s[0] = 1;
        return s;
    }()));
    const std::vector<tf::Variable> vars = model.trainable_variables();
    tf::train::AdamOptimizer opt(lr);
    auto forward = [&](const tf::Tensor& x) {
        // The ops each layer runs, without the layer objects.
        tf::Tensor h = x;
        std::size_t v = 0;
        for (const auto& layer : model.layers()) {
            if (dynamic_cast<kl::Conv2D*>(layer.get()) != nullptr) {
                h = tf::nn::relu(
                    tf::nn::bias_add(tf::nn::conv2d(h, vars[v], 1, "SAME"), vars[v + 1]));
                v += 2;
            } else if (dynamic_cast<kl::MaxPooling2D*>(layer.get()) != nullptr) {
                h = tf::nn::max_pool2d(h, 2, 2, "SAME");
            } else if (dynamic_cast<kl::Flatten*>(layer.get()) != nullptr) {
                h = tf::reshape(h, tf::Shape{h.shape()[0], h.num_elements() / h.shape()[0]});
            } else {
                h = tf::nn::bias_add(tf::matmul(h, vars[v]), vars[v + 1]);
                if (v + 2 < vars.size()) h = tf::nn::relu(h);
                v += 2;
            }
        }
        return h;
    };
    for (auto _ : state) {
        for (int64_t s = 0; s < kSteps; ++s) {
            std::vector<int64_t> begin(data.x.rank(), 0), size(data.x.rank(), -1);
            begin[0] = s * batch;
            size[0] = batch;
            const tf::Tensor x = tf::slice(data.x, begin, size);
            const tf::Tensor y = tf::slice(data.y, {s * batch}, {batch});
            std::vector<tf::Gradient> grads;
            {
                tf::GradientTape tape;
                const tf::Tensor loss = tf::reduce_mean(
                    tf::nn::sparse_softmax_cross_entropy_with_logits(y, forward(x)));
                grads = tape.gradient(loss, vars);
            }
            std::vector<tf::train::GradAndVar> pairs;
            for (std::size_t i = 0; i < vars.size(); ++i)
                pairs.push_back({grads[i], vars[i]});
            opt.apply_gradients(pairs);
        }
    }
    tf::Tensor last = vars[0].value();
    benchmark::DoNotOptimize(last);
}

// One training step of a normalization layer: loss mean(y^2), SGD on gamma and beta.
template <class Norm>
void norm_step(benchmark::State& state, Norm& norm, const tf::Tensor& x) {
    tf::train::GradientDescentOptimizer opt(0.01);
    norm(x, true);
    const std::vector<tf::Variable> vars = norm.trainable_variables();
    for (auto _ : state) {
        std::vector<tf::Gradient> grads;
        {
            tf::GradientTape tape;
            const tf::Tensor loss = tf::reduce_mean(tf::square(norm(x, true)));
            grads = tape.gradient(loss, vars);
        }
        opt.apply_gradients({{grads[0], vars[0]}, {grads[1], vars[1]}});
    }
}

void BM_batchnorm(benchmark::State& state) {
    tf::random::set_seed(1);
    kl::BatchNormalization bn;
    norm_step(state, bn, tf::random::uniform({32, 16, 16, 64}));
}

void BM_layernorm(benchmark::State& state) {
    tf::random::set_seed(1);
    kl::LayerNormalization ln;
    norm_step(state, ln, tf::random::uniform({64, 128, 256}));
}

// A recurrent layer forward and backward (gradients of its weights, no optimizer step): batch 32,
// 100 steps, 128 -> 256 units, the whole sequence returned, loss mean(y^2); LibTorch's
// torch::nn::LSTM / GRU run the same (torch_keras_cases.cpp).
void rnn_step(benchmark::State& state, kl::Recurrent& rnn) {
    const tf::Tensor x = tf::random::uniform({32, 100, 128});
    rnn(x);
    const std::vector<tf::Variable> vars = rnn.trainable_variables();
    for (auto _ : state) {
        std::vector<tf::Gradient> grads;
        {
            tf::GradientTape tape;
            const tf::Tensor loss = tf::reduce_mean(tf::square(rnn(x, true)));
            grads = tape.gradient(loss, vars);
        }
        benchmark::DoNotOptimize(grads);
    }
}

void BM_lstm(benchmark::State& state) {
    tf::random::set_seed(1);
    kl::LSTM lstm(256, {.return_sequences = true});
    rnn_step(state, lstm);
}

void BM_gru(benchmark::State& state) {
    tf::random::set_seed(1);
    kl::GRU gru(256, {.return_sequences = true});
    rnn_step(state, gru);
}

}  // namespace

int main(int argc, char** argv) {
    start_side_by_side(&argc, argv, torch_keras_cases::available());
    benchmark::RegisterBenchmark("keras/mlp_8_steps/tapeflow", [](benchmark::State& s) {
        fit_steps(s, mlp_layers(), mlp_data(), 128, 1e-3);
    })->UseRealTime();
    benchmark::RegisterBenchmark("keras/mlp_8_steps/limit_by_hand", [](benchmark::State& s) {
        by_hand_steps(s, mlp_layers(), mlp_data(), 128, 1e-3);
    })->UseRealTime();
    benchmark::RegisterBenchmark("keras/convnet_8_steps/tapeflow", [](benchmark::State& s) {
        fit_steps(s, convnet_layers(), convnet_data(), 32, 5e-3);
    })->UseRealTime();
    benchmark::RegisterBenchmark("keras/convnet_8_steps/limit_by_hand", [](benchmark::State& s) {
        by_hand_steps(s, convnet_layers(), convnet_data(), 32, 5e-3);
    })->UseRealTime();
    benchmark::RegisterBenchmark("keras/batchnorm_step/tapeflow", BM_batchnorm)->UseRealTime();
    benchmark::RegisterBenchmark("keras/layernorm_step/tapeflow", BM_layernorm)->UseRealTime();
    benchmark::RegisterBenchmark("keras/lstm_fwd_bwd/tapeflow", BM_lstm)->UseRealTime();
    benchmark::RegisterBenchmark("keras/gru_fwd_bwd/tapeflow", BM_gru)->UseRealTime();
    torch_keras_cases::register_cases(kSteps);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
