// The decoder-only transformer of samples/transformer_lm.cpp (also timed by
// benchmarks/bench_transformer.cpp): token and position embeddings, pre-norm blocks of causal
// multi-head attention (tf::nn::dot_product_attention) and a relu MLP, each around a residual,
// a final layer_norm and a dense layer to the logits. Written with the ops directly; forward()
// can checkpoint each block (tf::recompute_grad).
#pragma once

#include <cmath>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <tapeflow/tapeflow.hpp>

namespace transformer_model {

namespace tf = tapeflow;

inline constexpr int64_t kLayers = 2, kHeads = 4, kWidth = 128, kContext = 64;
inline constexpr int64_t kHeadSize = kWidth / kHeads;

struct Block {
    tf::Variable ln1_gamma, ln1_beta, w_qkv, b_qkv, w_out, b_out;
    tf::Variable ln2_gamma, ln2_beta, w_up, b_up, w_down, b_down;
};

struct Model {
    tf::Variable token_embedding, position_embedding;
    std::vector<Block> blocks;
    tf::Variable ln_gamma, ln_beta, w_logits, b_logits;
};

inline tf::Variable weight(const tf::Shape& shape, double stddev, const std::string& name) {
    return tf::Variable(tf::random::truncated_normal(shape, 0, stddev), {.name = name});
}
inline tf::Variable filled(const tf::Shape& shape, float value, const std::string& name) {
    return tf::Variable(tf::fill(shape, value), {.name = name});
}

inline Model make_model(int64_t vocab, int64_t layers = kLayers) {
    Model m{weight({vocab, kWidth}, 0.02, "token_embedding"),
            weight({kContext, kWidth}, 0.02, "position_embedding"),
            {},
            filled({kWidth}, 1, "ln_f/gamma"),
            filled({kWidth}, 0, "ln_f/beta"),
            weight({kWidth, vocab}, 0.02, "logits/kernel"),
            filled({vocab}, 0, "logits/bias")};
    const double residual = 0.02 / std::sqrt(2.0 * layers);  // GPT-2's scaled residual init
    for (int64_t l = 0; l < layers; ++l) {
        const std::string p = "block" + std::to_string(l) + "/";
        m.blocks.push_back(Block{filled({kWidth}, 1, p + "ln1/gamma"),
                                 filled({kWidth}, 0, p + "ln1/beta"),
                                 weight({kWidth, 3 * kWidth}, 0.02, p + "qkv/kernel"),
                                 filled({3 * kWidth}, 0, p + "qkv/bias"),
                                 weight({kWidth, kWidth}, residual, p + "out/kernel"),
                                 filled({kWidth}, 0, p + "out/bias"),
                                 filled({kWidth}, 1, p + "ln2/gamma"),
                                 filled({kWidth}, 0, p + "ln2/beta"),
                                 weight({kWidth, 4 * kWidth}, 0.02, p + "up/kernel"),
                                 filled({4 * kWidth}, 0, p + "up/bias"),
                                 weight({4 * kWidth, kWidth}, residual, p + "down/kernel"),
                                 filled({kWidth}, 0, p + "down/bias")});
    }
    return m;
}

// ids [B, T] int32 -> logits [B * T, vocab]. checkpoint: each block under tf::recompute_grad
// (its activations recomputed in the backward pass instead of kept).
inline tf::Tensor forward(const Model& m, const tf::Tensor& ids, bool checkpoint = false) {
    const int64_t b = ids.shape()[0], t = ids.shape()[1];
    const tf::Tensor positions = tf::range(0, static_cast<double>(t), 1, tf::int32);
    tf::Tensor hidden = tf::reshape(
        tf::gather(m.token_embedding, ids) + tf::gather(m.position_embedding, positions),
        {b * t, kWidth});
    tf::nn::DotProductAttentionOptions causal;
    causal.is_causal = true;
    for (const Block& blk : m.blocks) {
        // By value: a checkpointed block runs again in the backward pass, after forward returned.
        const auto block = [&blk, causal, b, t](tf::Tensor x) {  // [b * t, kWidth]
            const tf::Tensor h = tf::nn::layer_norm(x, blk.ln1_gamma, blk.ln1_beta);
            const std::vector<tf::Tensor> qkv =
                tf::split(tf::matmul(h, blk.w_qkv) + blk.b_qkv, 3, 1);
            const auto heads = [&](const tf::Tensor& z) {
                return tf::reshape(z, {b, t, kHeads, kHeadSize});
            };
            const tf::Tensor a =
                tf::nn::dot_product_attention(heads(qkv[0]), heads(qkv[1]), heads(qkv[2]), causal);
            x = x + tf::matmul(tf::reshape(a, {b * t, kWidth}), blk.w_out) + blk.b_out;
            const tf::Tensor h2 = tf::nn::layer_norm(x, blk.ln2_gamma, blk.ln2_beta);
            return x + tf::matmul(tf::nn::relu(tf::matmul(h2, blk.w_up) + blk.b_up), blk.w_down) +
                   blk.b_down;
        };
        if (checkpoint) {
            hidden = tf::recompute_grad(
                [block](const std::vector<tf::Tensor>& in) { return block(in[0]); })({hidden});
        } else {
            hidden = block(hidden);
        }
    }
    return tf::matmul(tf::nn::layer_norm(hidden, m.ln_gamma, m.ln_beta), m.w_logits) + m.b_logits;
}

/// The mean cross-entropy of the next characters y [B * T] (int32) after x [B, T].
inline tf::Tensor loss_of(const Model& m,
                          const tf::Tensor& x,
                          const tf::Tensor& y,
                          bool checkpoint = false) {
    return tf::reduce_mean(
        tf::nn::sparse_softmax_cross_entropy_with_logits(y, forward(m, x, checkpoint)));
}

/// A batch of random tokens for timing a step: x [batch, kContext] and y [batch * kContext], int32
/// in [0, vocab), from a std::mt19937 seeded with 1 (the benchmarks' shared input).
inline std::pair<tf::Tensor, tf::Tensor> random_batch(int64_t vocab, int64_t batch) {
    std::mt19937 rng(1);
    std::uniform_int_distribution<int32_t> id(0, static_cast<int32_t>(vocab - 1));
    std::vector<int32_t> x(batch * kContext), y(batch * kContext);
    for (auto& v : x)
        v = id(rng);
    for (auto& v : y)
        v = id(rng);
    return {tf::constant(x, {batch, kContext}), tf::constant(y, {batch * kContext})};
}

/// All trainable variables of the model.
inline std::vector<tf::Variable> variables(const Model& m) {
    std::vector<tf::Variable> v{m.token_embedding, m.position_embedding};
    for (const Block& b : m.blocks) {
        v.insert(v.end(),
                 {b.ln1_gamma,
                  b.ln1_beta,
                  b.w_qkv,
                  b.b_qkv,
                  b.w_out,
                  b.b_out,
                  b.ln2_gamma,
                  b.ln2_beta,
                  b.w_up,
                  b.b_up,
                  b.w_down,
                  b.b_down});
    }
    v.insert(v.end(), {m.ln_gamma, m.ln_beta, m.w_logits, m.b_logits});
    return v;
}

}  // namespace transformer_model
