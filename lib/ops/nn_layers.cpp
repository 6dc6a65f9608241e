// tf::nn layer ops other than conv and pooling: bias_add (a primitive, TensorFlow's BiasAdd) and
// the composites moments, batch_normalization, dropout and embedding_lookup, written as
// TensorFlow's nn_impl.py / nn_ops.py write them so their gradients (and HVPs) match.
// CPU kernel of BiasAdd: lib/kernels/cpu/bias_add_cpu.cpp.
#include <tapeflow/ops/array.hpp>
#include <tapeflow/ops/creation.hpp>
#include <tapeflow/ops/math.hpp>
#include <tapeflow/ops/nn.hpp>
#include <tapeflow/random.hpp>

#include "ops/nn_common.hpp"
#include "ops/op_families.hpp"

namespace tapeflow {
namespace {

// TF _BiasAddGrad: the bias gets g summed over every dimension but the channel one (and but the
// leading batch dims of a batched g, NOTE [Vectorized jacobians]).
Grads bias_add_grad(const GradCtx& c) {
    const int64_t rank = c.in_meta[0].shape.rank();
    const int64_t channel = c.attrs.get<bool>("nchw") ? 1 : rank - 1;
    std::vector<int64_t> axes;
    for (int64_t d = 0; d < rank; ++d) {
        if (d != channel) axes.push_back(c.batched_axis(d));
    }
    return {c.grad(), reduce_sum(c.grad(), Axes(axes))};
}

const OpDef kLayerOps[] = {
    {Op::bias_add,
     Save::nothing,
     bias_add_grad,
     kBatchable,
     jvp_linear},  // (x + b)' = (1, sum but channel)
};

}  // namespace

std::span<const OpDef> nn_layer_op_defs() {
    return kLayerOps;
}

namespace nn {

Tensor bias_add(const Tensor& x, const Tensor& bias, std::string_view data_format) {
    constexpr Op op = Op::bias_add;
    nn_detail::check_defined(op, x, "value");
    nn_detail::check_defined(op, bias, "bias");
    nn_detail::check_same_dtype(op, x, bias, "value", "bias");
    if (x.dtype() == DType::bool_) nn_detail::check_float(op, x, "value");
    const bool nchw = nn_detail::is_nchw(op, data_format);
    const Shape& s = x.shape();
    if (s.rank() < (nchw ? 3 : 2)) {
        op_fail(op, "Input tensor must be at least {}D: {}", nchw ? 3 : 2, s.debug_string());
    }
    if (bias.shape().rank() != 1) op_fail(op, "Biases must be 1D: {}", bias.shape().debug_string());
    const int64_t channels = nchw ? s[1] : s[-1];
    if (bias.shape()[0] != channels) {
        op_fail(op,
                "Must provide as many biases as the channel dimension of the input tensor: {} "
                "vs. {}",
                bias.shape().debug_string(),
                s.debug_string());
    }
    return apply(op, {x, bias}, OutputSpec{s, x.dtype()}, Attrs().set("nchw", nchw));
}

std::pair<Tensor, Tensor> moments(const Tensor& x, Axes axes, bool keepdims) {
    nn_detail::check_float(Op::reduce_mean, x, "x");
    // TF nn_impl.moments: the variance sees the mean through stop_gradient (same first
    // derivative, but the HVP differs from the true Hessian; golden case moments_axes0).
    Tensor mean = reduce_mean(x, axes, /*keepdims=*/true);
    Tensor variance = reduce_mean(squared_difference(x, stop_gradient(mean)), axes, true);
    if (!keepdims) {
        const Shape reduced = reduce_mean(x, axes, false).shape();  // the squeezed shape
        mean = reshape(mean, reduced);
        variance = reshape(variance, reduced);
    }
    return {mean, variance};
}

Tensor batch_normalization(const Tensor& x,
                           const Tensor& mean,
                           const Tensor& variance,
                           const Tensor& offset,
                           const Tensor& scale,
                           double variance_epsilon) {
    nn_detail::check_float(Op::rsqrt, x, "x");
    nn_detail::check_float(Op::rsqrt, mean, "mean");
    nn_detail::check_float(Op::rsqrt, variance, "variance");
    // TF nn_impl.batch_normalization: x * inv + (offset - mean * inv), inv = rsqrt(var + eps)
    // scale.
    Tensor inv = rsqrt(add(variance, scalar_like(variance, variance_epsilon)));
    if (scale.defined()) inv = multiply(inv, scale);
    const Tensor shift =
        offset.defined() ? subtract(offset, multiply(mean, inv)) : negative(multiply(mean, inv));
    return add(multiply(x, inv), shift);
}

Tensor dropout(const Tensor& x, double rate, std::optional<uint64_t> seed) {
    if (!x.defined())
        throw errors::InvalidArgumentError("dropout: x is an undefined tensor", "dropout");
    if (!is_floating(x.dtype())) {
        throw errors::InvalidArgumentError(
            fmt::format("x has to be a floating point tensor since it's going to be scaled. Got "
                        "a {} tensor instead (shape {}).",
                        dtype_name(x.dtype()),
                        x.shape().debug_string()),
            "dropout");
    }
    if (!(rate >= 0 && rate < 1)) {
        throw errors::InvalidArgumentError(
            fmt::format("rate must be a scalar tensor or a float in the range [0, 1), got {} "
                        "(x has shape {})",
                        rate,
                        x.shape().debug_string()),
            "dropout");
    }
    if (rate == 0) return x;  // TensorFlow's fast path: no random numbers drawn
    // TF nn_ops._dropout: x / keep_prob * (uniform >= rate).
    const Tensor noise = random::uniform(x.shape(), 0, 1, x.dtype(), seed);
    const Tensor keep = cast(greater_equal(noise, scalar_like(noise, rate)), x.dtype());
    return multiply(multiply(x, scalar_like(x, 1.0 / (1.0 - rate))), keep);
}

Tensor embedding_lookup(const Tensor& params, const Tensor& ids) {
    return gather(params, ids);
}

}  // namespace nn
}  // namespace tapeflow
