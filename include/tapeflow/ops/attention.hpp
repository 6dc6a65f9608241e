// Fused transformer ops (`tf::nn::`): scaled dot-product attention and layer normalization, each
// one primitive with fused forward and backward kernels (CPU and CUDA) whose derivatives are exact
// to any order (docs/nn.md "Attention and layer normalization").
#pragma once

#include <optional>

#include <tapeflow/core/export.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/ops/math.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow::nn {

/// The optional arguments of dot_product_attention (Keras 3's keyword arguments).
struct DotProductAttentionOptions {
    /// Added to the scaled logits; broadcastable to [B, N, T, S], the query's dtype.
    Tensor bias = {};
    /// bool, broadcastable to [B, N, T, S]; true = attend.
    Tensor mask = {};
    /// Multiplies q.k; default 1/sqrt(H) (computed in float32, as Keras does).
    std::optional<double> scale;
    /// Adds the mask tril(ones(T, S)): query t attends to keys 0..t (aligned top-left).
    bool is_causal = false;
};

/// softmax(where(mask, scale * q.k + bias, -0.7 * 3.38953e38)) . v per batch and head, Keras 3's
/// keras.ops.dot_product_attention with its TensorFlow backend. query [B, T, N, H], key and value
/// [B, S, N, H] (same N), output [B, T, N, H]. A masked logit is replaced by Keras' large negative
/// constant, so a row with every key masked averages the values (and passes no gradient to q, k
/// or the bias). float32, float64, float16, bfloat16 (the 16-bit types computed in float32).
/// Fused: the forward keeps only a per-row log-sum-exp for the backward, never the [T, S] scores;
/// derivatives of every order. InvalidArgumentError (naming the shapes) for ranks other than 4,
/// mismatched batch, heads, head size or key/value lengths, a non-bool mask, a bias or mask that
/// does not broadcast to [B, N, T, S], or mixed dtypes.
Tensor dot_product_attention(const Tensor& query,
                             const Tensor& key,
                             const Tensor& value,
                             const DotProductAttentionOptions& options = {});

/// (x - mean) / sqrt(var + epsilon) * gamma + beta, the mean and (biased) variance taken over
/// `axes` of x (Keras' LayerNormalization). gamma and beta have the shape of those dimensions of x
/// (in axis order) or are undefined (no scale / no offset). float32, float64, float16, bfloat16
/// (statistics in float32 for the 16-bit types). One fused pass forward and one backward; the
/// derivatives are exact to any order. InvalidArgumentError for a bad axis, an epsilon <= 0 or
/// gamma/beta of another shape or dtype.
Tensor layer_norm(const Tensor& x,
                  const Tensor& gamma,
                  const Tensor& beta,
                  Axes axes = -1,
                  double epsilon = 1e-3);

}  // namespace tapeflow::nn

TAPEFLOW_API_END
