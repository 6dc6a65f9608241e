// LibTorch workloads for bench_transformer (see torch_transformer_cases.hpp). Compiled as C++17
// in its own library: LibTorch 1.13's headers predate C++20.
#include "torch_transformer_cases.hpp"

#include <cmath>

#include <benchmark/benchmark.h>

#include "libtorch_case.hpp"

#ifdef TAPEFLOW_BENCH_TORCH
#include <torch/torch.h>

namespace torch_transformer_cases {
namespace {

// softmax(q k^T / sqrt(h) masked) v on [b, t, n, h] (the heads moved to dim 1 and back), as
// Keras' and most research code's composite.
torch::Tensor composite_attention(const torch::Tensor& q,
                                  const torch::Tensor& k,
                                  const torch::Tensor& v,
                                  const torch::Tensor& causal) {
    const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(3)));
    auto logits = torch::matmul(q.transpose(1, 2), k.transpose(1, 2).transpose(2, 3)) * scale;
    if (causal.defined()) logits = logits.masked_fill(causal.logical_not(), -0.7 * 3.38953e38);
    return torch::matmul(torch::softmax(logits, -1), v.transpose(1, 2)).transpose(1, 2);
}

struct AttentionInputs {
    torch::Tensor q, k, v, w;
};

AttentionInputs attention_inputs(int64_t b, int64_t t, int64_t n, int64_t h) {
    torch::manual_seed(1);
    return {torch::randn({b, t, n, h}, torch::requires_grad()),
            torch::randn({b, t, n, h}, torch::requires_grad()),
            torch::randn({b, t, n, h}, torch::requires_grad()),
            torch::randn({b, t, n, h})};
}

void attention_once(const AttentionInputs& in) {
    composite_attention(in.q, in.k, in.v, {}).backward(in.w);
}

void attention(benchmark::State& state, int64_t b, int64_t t, int64_t n, int64_t h) {
    const AttentionInputs in = attention_inputs(b, t, n, h);
    for (auto _ : state) {
        attention_once(in);
        benchmark::DoNotOptimize(in.q.grad());
    }
}

void layer_norm(benchmark::State& state, int64_t rows, int64_t cols) {
    torch::manual_seed(2);
    auto x = torch::randn({rows, cols}, torch::requires_grad());
    auto gamma = torch::ones({cols}, torch::requires_grad());
    auto beta = torch::zeros({cols}, torch::requires_grad());
    auto dy = torch::randn({rows, cols});
    for (auto _ : state) {
        torch::layer_norm(x, {cols}, gamma, beta, 1e-3).backward(dy);
        benchmark::DoNotOptimize(x.grad());
    }
}

struct BlockImpl : torch::nn::Module {
    BlockImpl(int64_t width, int64_t heads)
        : heads(heads),
          ln1(register_module(
              "ln1", torch::nn::LayerNorm(torch::nn::LayerNormOptions({width}).eps(1e-3)))),
          qkv(register_module("qkv", torch::nn::Linear(width, 3 * width))),
          out(register_module("out", torch::nn::Linear(width, width))),
          ln2(register_module(
              "ln2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({width}).eps(1e-3)))),
          up(register_module("up", torch::nn::Linear(width, 4 * width))),
          down(register_module("down", torch::nn::Linear(4 * width, width))) {}
    torch::Tensor forward(torch::Tensor x, const torch::Tensor& causal) {
        const int64_t b = x.size(0), t = x.size(1), width = x.size(2);
        auto parts = qkv(ln1(x)).chunk(3, -1);
        auto heads_of = [&](const torch::Tensor& z) {
            return z.reshape({b, t, heads, width / heads});
        };
        auto a =
            composite_attention(heads_of(parts[0]), heads_of(parts[1]), heads_of(parts[2]), causal);
        x = x + out(a.reshape({b, t, width}));
        return x + down(torch::relu(up(ln2(x))));
    }
    int64_t heads;
    torch::nn::LayerNorm ln1;
    torch::nn::Linear qkv, out;
    torch::nn::LayerNorm ln2;
    torch::nn::Linear up, down;
};
TORCH_MODULE(Block);

struct LmImpl : torch::nn::Module {
    LmImpl(int64_t vocab, int64_t layers, int64_t heads, int64_t width, int64_t context)
        : tokens(register_module("tokens", torch::nn::Embedding(vocab, width))),
          positions(register_module("positions", torch::nn::Embedding(context, width))),
          ln(register_module("ln",
                             torch::nn::LayerNorm(torch::nn::LayerNormOptions({width}).eps(1e-3)))),
          logits(register_module("logits", torch::nn::Linear(width, vocab))) {
        for (int64_t l = 0; l < layers; ++l)
            blocks.push_back(register_module("block" + std::to_string(l), Block(width, heads)));
    }
    torch::Tensor forward(const torch::Tensor& ids) {
        const int64_t t = ids.size(1);
        const auto causal = torch::ones({t, t}, torch::kBool).tril();
        auto x = tokens(ids) + positions(torch::arange(t));
        for (auto& blk : blocks)
            x = blk->forward(x, causal);
        return logits(ln(x));
    }
    torch::nn::Embedding tokens, positions;
    std::vector<Block> blocks;
    torch::nn::LayerNorm ln;
    torch::nn::Linear logits;
};
TORCH_MODULE(Lm);

void transformer_step(benchmark::State& state,
                      int64_t vocab,
                      int64_t batch,
                      int64_t layers,
                      int64_t heads,
                      int64_t width,
                      int64_t context) {
    torch::manual_seed(3);
    Lm model(vocab, layers, heads, width, context);
    torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(3e-3));
    const auto x = torch::randint(vocab, {batch, context}, torch::kLong);
    const auto y = torch::randint(vocab, {batch * context}, torch::kLong);
    for (auto _ : state) {
        optimizer.zero_grad();
        auto loss = torch::nn::functional::cross_entropy(
            model->forward(x).reshape({batch * context, vocab}), y);
        loss.backward();
        optimizer.step();
        benchmark::DoNotOptimize(loss.item<float>());
    }
    state.counters["tokens_per_s"] = benchmark::Counter(
        static_cast<double>(batch * context), benchmark::Counter::kIsIterationInvariantRate);
}

}  // namespace

void register_attention(int64_t b, int64_t t, int64_t n, int64_t h, double flops) {
    benchmark::RegisterBenchmark(
        "transformer/attention_fwd_bwd/libtorch",
        torch_cases::libtorch_case([=](benchmark::State& s) {
            attention(s, b, t, n, h);
            s.counters["GFLOPS"] = benchmark::Counter(
                flops, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
        }))
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
}

bool attention_step(int64_t b, int64_t t, int64_t n, int64_t h) {
    attention_once(attention_inputs(b, t, n, h));
    return true;
}

void register_layer_norm(int64_t rows, int64_t cols, double bytes) {
    benchmark::RegisterBenchmark(
        "transformer/layer_norm_fwd_bwd/libtorch",
        torch_cases::libtorch_case([=](benchmark::State& s) {
            layer_norm(s, rows, cols);
            s.SetBytesProcessed(static_cast<int64_t>(bytes) * s.iterations());
        }))
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
}

void register_transformer_step(
    int64_t vocab, int64_t batch, int64_t layers, int64_t heads, int64_t width, int64_t context) {
    benchmark::RegisterBenchmark(
        "transformer/lm_train_step/libtorch", torch_cases::libtorch_case([=](benchmark::State& s) {
            transformer_step(s, vocab, batch, layers, heads, width, context);
        }))
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
}

}  // namespace torch_transformer_cases

#else  // built without LibTorch

namespace torch_transformer_cases {
void register_attention(int64_t, int64_t, int64_t, int64_t, double) {}
bool attention_step(int64_t, int64_t, int64_t, int64_t) {
    return false;
}
void register_layer_norm(int64_t, int64_t, double) {}
void register_transformer_step(int64_t, int64_t, int64_t, int64_t, int64_t, int64_t) {}
}  // namespace torch_transformer_cases

#endif
