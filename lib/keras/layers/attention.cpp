// MultiHeadAttention: the four projections as reshaped matmuls (kernels keep Keras' 3-D shapes and
// names, so checkpoints line up with Keras' variable paths), the attention core in one function.
#include <cmath>

#include <fmt/format.h>

#include <tapeflow/core/device.hpp>
#include <tapeflow/core/error.hpp>
#include <tapeflow/keras/layers/attention.hpp>
#include <tapeflow/ops/array.hpp>
#include <tapeflow/ops/attention.hpp>
#include <tapeflow/ops/creation.hpp>
#include <tapeflow/ops/math.hpp>
#include <tapeflow/ops/nn.hpp>

namespace tapeflow::keras::layers {

namespace detail {

Tensor dot_product_attention(const Tensor& q,
                             const Tensor& k,
                             const Tensor& v,
                             const Tensor& mask,
                             double dropout,
                             std::optional<uint64_t> seed) {
    if (dropout == 0 && v.shape()[3] == q.shape()[3]) {  // the fused op: same scale, mask rule
        nn::DotProductAttentionOptions options;
        options.mask = mask;
        return nn::dot_product_attention(q, k, v, options);
    }
    // Dropout on the probabilities needs them materialized: the composite (Keras' own path).
    const double scale = 1.0 / std::sqrt(static_cast<double>(q.shape()[3]));
    const Tensor qt = transpose(q, {0, 2, 1, 3}) * scale;  // [B, N, T, H]
    const Tensor kt = transpose(k, {0, 2, 1, 3});          // [B, N, S, H]
    const Tensor vt = transpose(v, {0, 2, 1, 3});          // [B, N, S, Hv]
    Tensor logits = matmul(qt, kt, false, true);           // [B, N, T, S]
    if (mask.defined()) logits = where(mask, logits, scalar_like(logits, -1e9));
    Tensor probs = nn::softmax(logits, -1);
    if (dropout > 0) probs = nn::dropout(probs, dropout, seed);
    return transpose(matmul(probs, vt), {0, 2, 1, 3});  // [B, T, N, Hv]
}

}  // namespace detail

MultiHeadAttention::MultiHeadAttention(int64_t num_heads,
                                       int64_t key_dim,
                                       MultiHeadAttentionOptions options)
    : Layer(options.name, "MultiHeadAttention"),
      num_heads_(num_heads),
      key_dim_(key_dim),
      value_dim_(options.value_dim.value_or(key_dim)),
      options_(std::move(options)) {
    use_dtype_option(options_.dtype);
    if (num_heads <= 0 || key_dim <= 0 || value_dim_ <= 0)
        throw errors::InvalidArgumentError(fmt::format(
            "MultiHeadAttention: num_heads, key_dim and value_dim must be positive, got {}, {}, {}",
            num_heads,
            key_dim,
            value_dim_));
    if (!(options_.dropout >= 0 && options_.dropout < 1))
        throw errors::InvalidArgumentError(
            fmt::format("MultiHeadAttention: dropout must be in [0, 1), got {}", options_.dropout));
}

void MultiHeadAttention::build(const Shape& input_shape) {
    build_from(input_shape, input_shape, input_shape);
}

void MultiHeadAttention::build_from(const Shape& query, const Shape& value, const Shape& key) {
    for (const Shape* s : {&query, &value, &key})
        if (s->rank() != 3)
            throw errors::InvalidArgumentError(fmt::format(
                "layer \"{}\" (MultiHeadAttention) takes query, value and key of rank 3 [batch, "
                "steps, features], got shapes {}, {}, {}",
                name(),
                query.debug_string(),
                value.debug_string(),
                key.debug_string()));
    const DType dt = variable_dtype();
    auto projection =
        [&](std::string_view scope, int64_t in, int64_t head_dim, Variable& w, Variable& b) {
            const auto names = tapeflow::name_scope(scope);
            w = add_weight("kernel", {in, num_heads_, head_dim}, options_.kernel_initializer, dt);
            if (options_.use_bias)
                b = add_weight("bias", {num_heads_, head_dim}, options_.bias_initializer, dt);
        };
    projection("query", query[2], key_dim_, wq_, bq_);
    projection("key", key[2], key_dim_, wk_, bk_);
    projection("value", value[2], value_dim_, wv_, bv_);
    {
        const auto names = tapeflow::name_scope("attention_output");
        wo_ = add_weight(
            "kernel", {num_heads_, value_dim_, query[2]}, options_.kernel_initializer, dt);
        if (options_.use_bias) bo_ = add_weight("bias", {query[2]}, options_.bias_initializer, dt);
    }
    set_input_spec({.ndim = 3, .axes = {{-1, query[2]}}});
}

Tensor MultiHeadAttention::call(const Tensor& x, bool training) {
    return attend(x, x, x, Tensor(), false, training);
}

Tensor MultiHeadAttention::operator()(const Tensor& query,
                                      const Tensor& value,
                                      const Tensor& key,
                                      const Tensor& attention_mask,
                                      bool use_causal_mask,
                                      bool training) {
    if (!query.defined() || !value.defined())
        throw errors::InvalidArgumentError(fmt::format(
            "layer \"{}\" (MultiHeadAttention) needs a query and a value tensor", name()));
    return call_with_policy([&] {
        return attend_inputs(cast_input(query),
                             cast_input(value),
                             cast_input(key.defined() ? key : value),
                             attention_mask,
                             use_causal_mask,
                             training);
    });
}

Tensor MultiHeadAttention::attend_inputs(const Tensor& query,
                                         const Tensor& value,
                                         const Tensor& k,
                                         const Tensor& attention_mask,
                                         bool use_causal_mask,
                                         bool training) {
    const auto scope = name_scope();
    std::optional<DeviceScope> on_device;
    if (query.device() != default_device()) on_device.emplace(query.device());
    if (!built()) {
        choose_variable_dtype(query);
        build_from(query.shape(), value.shape(), k.shape());
        set_built();
    }
    check_input(query, input_spec(), 0);
    check_input(value, {.ndim = 3, .axes = {{-1, wv_.shape()[0]}}}, 1);
    check_input(k, {.ndim = 3, .axes = {{-1, wk_.shape()[0]}}}, 2);
    Tensor y = attend(query, value, k, attention_mask, use_causal_mask, training);
    set_output_shape(y.shape());
    return y;
}

Tensor MultiHeadAttention::attend(const Tensor& query,
                                  const Tensor& value,
                                  const Tensor& key,
                                  const Tensor& attention_mask,
                                  bool use_causal_mask,
                                  bool training) {
    const int64_t batch = query.shape()[0], t = query.shape()[1], s = value.shape()[1];
    if (key.shape()[1] != s || key.shape()[0] != value.shape()[0])
        throw errors::InvalidArgumentError(fmt::format(
            "layer \"{}\" (MultiHeadAttention): key {} and value {} must have the same batch and "
            "steps",
            name(),
            key.shape().debug_string(),
            value.shape().debug_string()));
    // x [B, L, d] @ kernel [d, N, h] (+ bias [N, h]) -> [B, L, N, h]
    auto project = [&](const Tensor& x, const Variable& w, const Variable& b) {
        const Shape& ws = w.shape();
        Tensor y = matmul(reshape(x, {-1, ws[0]}), reshape(w, Shape{ws[0], ws[1] * ws[2]}));
        if (b.defined()) y = nn::bias_add(y, reshape(b, Shape{ws[1] * ws[2]}));
        return reshape(y, Shape{x.shape()[0], x.shape()[1], ws[1], ws[2]});
    };
    const Tensor q = project(query, wq_, bq_), k = project(key, wk_, bk_),
                 v = project(value, wv_, bv_);

    Tensor mask;
    if (attention_mask.defined()) {
        mask = attention_mask.dtype() == DType::bool_
                   ? attention_mask
                   : not_equal(attention_mask, zeros_like(attention_mask));
        if (mask.rank() == 3) mask = expand_dims(mask, 1);  // [B, T, S] -> [B, 1, T, S]
    }
    if (use_causal_mask) {
        // Keras' causal mask: position t attends to s <= t (lower triangle, top-left aligned).
        const Tensor rows = reshape(range(0, double(t), 1, DType::int32), Shape{t, 1});
        const Tensor cols = reshape(range(0, double(s), 1, DType::int32), Shape{1, s});
        const Tensor causal = greater_equal(rows, cols);
        mask = mask.defined() ? logical_and(mask, causal) : causal;
    }
    const bool drop = training && options_.dropout > 0;
    const std::optional<uint64_t> seed =
        drop ? detail::next_seed(options_.seed, calls_) : std::nullopt;
    const Tensor attended =
        detail::dot_product_attention(q, k, v, mask, drop ? options_.dropout : 0.0, seed);
    const Shape& os = wo_.shape();  // [N, Hv, dq]
    Tensor y =
        matmul(reshape(attended, {-1, os[0] * os[1]}), reshape(wo_, Shape{os[0] * os[1], os[2]}));
    if (bo_.defined()) y = nn::bias_add(y, bo_);
    return reshape(y, Shape{batch, t, os[2]});
}

}  // namespace tapeflow::keras::layers
