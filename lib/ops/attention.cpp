// tf::nn::dot_product_attention: one primitive (DotProductAttention) with inputs q, k, v and the
// optional bias and mask (both viewed as rank 4), outputs the attention and the per-row
// log-sum-exp of the masked logits (all that the backward keeps of the [T, S] scores). Its gradient
// row runs the fused DotProductAttentionGrad kernel, which recomputes the scores block by block,
// unless a tape is recording the backward pass (a higher derivative): then it runs Keras' composite
// (matmul, softmax, matmul) and its exact gradient as differentiable ops, so every order is exact.
// CPU kernels: lib/kernels/cpu/attention_cpu.cpp; CUDA: cuda/attention_kernels.cu.
#include <array>
#include <cmath>
#include <vector>

#include <tapeflow/ops/array.hpp>
#include <tapeflow/ops/attention.hpp>
#include <tapeflow/ops/creation.hpp>
#include <tapeflow/ops/math.hpp>
#include <tapeflow/ops/nn.hpp>

#include "autograd/tape.hpp"
#include "ops/nn_common.hpp"
#include "ops/op_families.hpp"

namespace tapeflow {
namespace {

constexpr Op kOp = Op::attention;
// Keras' replacement for a masked logit: -0.7 times (about) float32's largest value.
constexpr double kMaskedLogit = -0.7 * 3.38953e38;

DType compute_dtype(DType dtype) {
    return dtype == DType::float64 ? DType::float64 : DType::float32;
}

Tensor as(const Tensor& t, DType dtype) {
    return t.dtype() == dtype ? t : cast(t, dtype);
}

// [B, X, N, H] <-> [B, N, X, H]
Tensor heads_first(const Tensor& t) {
    return transpose(t, {0, 2, 1, 3});
}

// Inputs of a recorded attention: q, k, v, then the bias and the mask when present.
struct Operands {
    Tensor q, k, v, bias, mask;
};

Operands operands(std::span<const Tensor> in, const Attrs& attrs) {
    Operands o{in[0], in[1], in[2], {}, {}};
    std::size_t next = 3;
    if (attrs.get<bool>("has_bias")) o.bias = in[next++];
    if (attrs.get<bool>("has_mask")) o.mask = in[next];
    return o;
}

// Where the logits are kept (true) in Keras' composite: the mask and the causal band combined;
// undefined when nothing is masked.
Tensor keep_mask(const Operands& o, const Attrs& attrs) {
    Tensor keep = o.mask;
    if (attrs.get<bool>("causal")) {
        const int64_t t = o.q.shape()[1];
        const int64_t s = o.k.shape()[1];
        const DeviceScope scope(o.q.device());
        const Tensor rows = reshape(range(0, t, 1, DType::int32), {1, 1, t, 1});
        const Tensor cols = reshape(range(0, s, 1, DType::int32), {1, 1, 1, s});
        const Tensor band = greater_equal(rows, cols);
        keep = keep.defined() ? logical_and(keep, band) : band;
    }
    return keep;
}

// The gradients of Keras' composite, as differentiable ops (q, k, v, then the bias if any):
// p = softmax(where(keep, scale q.k + bias, masked)), dv = p^T do, ds = where(keep, p (dp -
// rowsum(p dp)), 0) with dp = do v^T, dq = scale ds k, dk = scale ds^T q, dbias = ds.
Grads attention_composite(const GradCtx& c) {
    const Operands o = operands(c.in, c.attrs);
    const DType dtype = o.q.dtype();
    const DType compute = compute_dtype(dtype);
    const Tensor q = heads_first(as(o.q, compute));
    const Tensor k = heads_first(as(o.k, compute));
    const Tensor v = heads_first(as(o.v, compute));
    const Tensor g = heads_first(as(c.grad(), compute));
    const double scale = c.attrs.get<double>("scale");
    Tensor logits = multiply(matmul(q, k, false, true), scalar_like(q, scale));
    if (o.bias.defined()) logits = add(logits, as(o.bias, compute));
    const Tensor keep = keep_mask(o, c.attrs);
    if (keep.defined()) logits = where(keep, logits, scalar_like(logits, kMaskedLogit));
    const Tensor p = nn::softmax(logits);
    const Tensor dv = matmul(p, g, true, false);
    const Tensor dp = matmul(g, v, false, true);
    Tensor ds = multiply(p, subtract(dp, reduce_sum(multiply(dp, p), -1, true)));
    if (keep.defined()) ds = where(keep, ds, zeros_like(ds));
    const Tensor dq = multiply(matmul(ds, k), scalar_like(ds, scale));
    const Tensor dk = multiply(matmul(ds, q, true, false), scalar_like(ds, scale));
    Grads grads{as(heads_first(dq), dtype), as(heads_first(dk), dtype), as(heads_first(dv), dtype)};
    if (o.bias.defined()) grads.emplace_back(as(ds, dtype));
    if (o.mask.defined()) grads.emplace_back();
    return grads;
}

Grads attention_grad(const GradCtx& c) {
    std::vector<Tensor> read(c.in.begin(), c.in.end());
    read.push_back(c.grad());
    if (any_tape_watches(read)) return attention_composite(c);
    const Operands o = operands(c.in, c.attrs);
    const bool want_dbias = o.bias.defined() && c.needs_grad(3);
    Attrs attrs = c.attrs;
    attrs.set("want_dbias", want_dbias);
    std::vector<Tensor> inputs{c.grad(), o.q, o.k, o.v, c.out[0], c.out[1]};
    if (o.bias.defined()) inputs.push_back(o.bias);
    if (o.mask.defined()) inputs.push_back(o.mask);
    std::vector<OutputSpec> specs{OutputSpec{o.q.shape(), o.q.dtype()},
                                  OutputSpec{o.k.shape(), o.k.dtype()},
                                  OutputSpec{o.v.shape(), o.v.dtype()}};
    const Shape& qs = o.q.shape();
    if (want_dbias)
        specs.push_back(OutputSpec{Shape({qs[0], qs[2], qs[1], o.k.shape()[1]}), o.q.dtype()});
    std::vector<Tensor> r = apply_multi(Op::attention_grad, inputs, specs, attrs);
    Grads grads{r[0], r[1], r[2]};
    if (o.bias.defined()) grads.push_back(want_dbias ? Gradient(r[3]) : Gradient());
    if (o.mask.defined()) grads.emplace_back();
    return grads;
}

const OpDef kAttentionOps[] = {
    {Op::attention,
     Save::inputs_and_output,
     attention_grad,
     kNotBatchable,
     jvp_by_double_vjp},  // see attention_composite
    // Runs only where no tape records it (attention_grad above), so it needs no formula.
    {Op::attention_grad, Save::nothing, nullptr},
};

std::string shapes_of(const Tensor& q, const Tensor& k, const Tensor& v) {
    return fmt::format("query {}, key {}, value {}",
                       q.shape().debug_string(),
                       k.shape().debug_string(),
                       v.shape().debug_string());
}

// `t` (the bias or the mask) as a rank-4 view that broadcasts to [B, N, T, S].
Tensor broadcast_operand(const Tensor& t, std::string_view name, const Shape& logits) {
    const Shape& s = t.shape();
    bool ok = s.rank() <= 4;
    for (int64_t i = 1; ok && i <= s.rank(); ++i)
        ok = s[-i] == 1 || s[-i] == logits[-i];
    if (!ok) {
        op_fail(kOp,
                "{} of shape {} does not broadcast to the logits' shape [B, N, T, S] = {}; give it "
                "shape {} or size-1 dimensions in their place",
                name,
                s.debug_string(),
                logits.debug_string(),
                logits.debug_string());
    }
    std::vector<int64_t> dims(static_cast<std::size_t>(4 - s.rank()), 1);
    dims.insert(dims.end(), s.dims().begin(), s.dims().end());
    return s.rank() == 4 ? t : reshape(t, Shape(dims));
}

}  // namespace

std::span<const OpDef> attention_op_defs() {
    return kAttentionOps;
}

namespace nn {

Tensor dot_product_attention(const Tensor& query,
                             const Tensor& key,
                             const Tensor& value,
                             const DotProductAttentionOptions& options) {
    nn_detail::check_float(kOp, query, "query");
    nn_detail::check_float(kOp, key, "key");
    nn_detail::check_float(kOp, value, "value");
    nn_detail::check_same_dtype(kOp, query, key, "query", "key");
    nn_detail::check_same_dtype(kOp, query, value, "query", "value");
    const Shape& qs = query.shape();
    const Shape& ks = key.shape();
    const Shape& vs = value.shape();
    if (qs.rank() != 4 || ks.rank() != 4 || vs.rank() != 4) {
        op_fail(kOp,
                "query, key and value must be 4-D [batch, length, heads, head_size], got {}; "
                "reshape them to [B, T, N, H] and [B, S, N, H]",
                shapes_of(query, key, value));
    }
    if (ks != vs || qs[0] != ks[0] || qs[2] != ks[2] || qs[3] != ks[3]) {
        op_fail(kOp,
                "incompatible shapes: {}; query must be [B, T, N, H] and key and value [B, S, N, "
                "H] with the same batch B, heads N (no grouped-query heads) and head size H",
                shapes_of(query, key, value));
    }
    const Shape logits({qs[0], qs[2], qs[1], ks[1]});
    std::vector<Tensor> inputs{query, key, value};
    Attrs attrs;
    // Keras: 1 / sqrt(H) in float32, then converted to the logits' dtype.
    const double scale =
        options.scale.value_or(static_cast<double>(1.0F / std::sqrt(static_cast<float>(qs[3]))));
    attrs.set("scale", scale);
    attrs.set("causal", options.is_causal);
    attrs.set("has_bias", options.bias.defined());
    attrs.set("has_mask", options.mask.defined());
    if (options.bias.defined()) {
        nn_detail::check_same_dtype(kOp, query, options.bias, "query", "bias");
        inputs.push_back(broadcast_operand(options.bias, "bias", logits));
    }
    if (options.mask.defined()) {
        if (options.mask.dtype() != DType::bool_) {
            op_fail(kOp,
                    "mask must be bool (true = attend), got {} with shape {}; compare it "
                    "with tf::not_equal(mask, 0) first",
                    dtype_name(options.mask.dtype()),
                    options.mask.shape().debug_string());
        }
        inputs.push_back(broadcast_operand(options.mask, "mask", logits));
    }
    const std::array<OutputSpec, 2> specs{
        OutputSpec{qs, query.dtype()},
        OutputSpec{Shape({qs[0], qs[2], qs[1]}), compute_dtype(query.dtype())}};
    return apply_multi(kOp, inputs, specs, attrs)[0];
}

}  // namespace nn
}  // namespace tapeflow
