// LibTorch's side of bench_transformer: the same workloads written as LibTorch users write them
// (attention as the composite matmul-softmax-matmul, torch::layer_norm, the transformer in
// torch::nn with Adam). Without LibTorch these register nothing.
#pragma once

#include <cstdint>

namespace torch_transformer_cases {

/// Attention forward + backward on [b, t, n, h] query/key/value (t = s), float32.
void register_attention(int64_t b, int64_t t, int64_t n, int64_t h, double flops);
/// One attention forward + backward (for the peak-memory child); false without LibTorch.
bool attention_step(int64_t b, int64_t t, int64_t n, int64_t h);
/// torch::layer_norm forward + backward of [rows, cols] with gamma and beta; `bytes` counted.
void register_layer_norm(int64_t rows, int64_t cols, double bytes);
/// One Adam training step of the transformer LM (layers, heads, width, context of
/// samples/transformer_model.hpp) on batch x context tokens of a vocab-character alphabet.
void register_transformer_step(
    int64_t vocab, int64_t batch, int64_t layers, int64_t heads, int64_t width, int64_t context);

}  // namespace torch_transformer_cases
