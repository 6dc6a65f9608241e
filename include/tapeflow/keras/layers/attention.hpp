// Keras' MultiHeadAttention on [batch, steps, features] inputs: projections query/key/value
// (kernels [dim, num_heads, key_dim], biases [num_heads, key_dim]) and attention_output (kernel
// [num_heads, value_dim, query_dim]), scaled dot-product attention per head with an optional
// boolean mask (true = attend) and causal mask, dropout on the attention probabilities.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <tapeflow/core/export.hpp>
#include <tapeflow/keras/initializers.hpp>
#include <tapeflow/keras/layer.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow::keras::layers {

struct MultiHeadAttentionOptions {
    std::optional<int64_t> value_dim;  // default: key_dim
    double dropout = 0;
    bool use_bias = true;
    Initializer kernel_initializer = initializers::glorot_uniform();
    Initializer bias_initializer = initializers::zeros();
    std::optional<uint64_t> seed = {};  // the dropout's
    std::string name = "";
    /// Keras' dtype=: a policy name ("mixed_float16", "float32", ...); "" = the global policy.
    std::string dtype = "";
};

class MultiHeadAttention : public Layer {
public:
    MultiHeadAttention(int64_t num_heads, int64_t key_dim, MultiHeadAttentionOptions options = {});
    /// query [B, T, dq], value [B, S, dv], key [B, S, dk] (default: value). attention_mask
    /// broadcastable to [B, T, S] (bool, or numbers where nonzero = attend); use_causal_mask keeps
    /// position t from attending to s > t. Returns [B, T, dq]. Builds on the first call.
    Tensor operator()(const Tensor& query,
                      const Tensor& value,
                      const Tensor& key = {},
                      const Tensor& attention_mask = {},
                      bool use_causal_mask = false,
                      bool training = false);
    /// mha(x, training): self-attention through Layer's call operator (also inside Sequential).
    using Layer::operator();
    /// Self-attention (query = value = key), so the layer also works inside Sequential.
    Tensor call(const Tensor& x, bool training) override;
    Config get_config() const override;
    void build(const Shape& input_shape) override;

private:
    void build_from(const Shape& query, const Shape& value, const Shape& key);
    // operator()'s body once its inputs are in the compute dtype.
    Tensor attend_inputs(const Tensor& query,
                         const Tensor& value,
                         const Tensor& key,
                         const Tensor& attention_mask,
                         bool use_causal_mask,
                         bool training);
    Tensor attend(const Tensor& query,
                  const Tensor& value,
                  const Tensor& key,
                  const Tensor& mask,
                  bool use_causal_mask,
                  bool training);

    int64_t num_heads_, key_dim_, value_dim_;
    MultiHeadAttentionOptions options_;
    Variable wq_, bq_, wk_, bk_, wv_, bv_, wo_, bo_;
    uint64_t calls_ = 0;
};

namespace detail {
/// Scaled dot-product attention: q [B, T, N, H], k [B, S, N, H], v [B, S, N, Hv], mask bool
/// broadcastable to [B, N, T, S] (undefined: none); masked logits are replaced by -1e9 (Keras'
/// large negative number), the probabilities dropped out with rate `dropout` (0: none). Returns
/// [B, T, N, Hv]. One function of public ops: the place to switch to a fused op.
Tensor dot_product_attention(const Tensor& q,
                             const Tensor& k,
                             const Tensor& v,
                             const Tensor& mask,
                             double dropout,
                             std::optional<uint64_t> seed);
}  // namespace detail

}  // namespace tapeflow::keras::layers

TAPEFLOW_API_END
