// BatchNormalization and LayerNormalization from tf::nn::moments / batch_normalization; moving
// statistics are assigned (never recorded by tapes), on the device where they live.
#include <algorithm>

#include <fmt/format.h>

#include <tapeflow/core/error.hpp>
#include <tapeflow/keras/layers/normalization.hpp>
#include <tapeflow/ops/array.hpp>
#include <tapeflow/ops/attention.hpp>
#include <tapeflow/ops/creation.hpp>
#include <tapeflow/ops/math.hpp>
#include <tapeflow/ops/nn.hpp>

namespace tapeflow::keras::layers {

namespace {

int64_t resolve_axis(int64_t axis, const Shape& s, const std::string& layer, const char* cls) {
    const int64_t a = axis < 0 ? axis + s.rank() : axis;
    if (a < 0 || a >= s.rank())
        throw errors::InvalidArgumentError(
            fmt::format("layer \"{}\" ({}): axis {} is out of range for inputs of shape {}",
                        layer,
                        cls,
                        axis,
                        s.debug_string()));
    return a;
}

// The shape that broadcasts a parameter of x's `axes` dims against x: 1 on every other axis
// (nothing to do when the axes are the trailing ones).
Tensor broadcastable(const Tensor& p, const std::vector<int64_t>& axes, int64_t rank) {
    if (!p.defined()) return p;
    bool trailing = true;
    for (std::size_t i = 0; i < axes.size(); ++i)
        trailing = trailing && axes[i] == rank - static_cast<int64_t>(axes.size() - i);
    if (trailing) return p;
    std::vector<int64_t> dims(static_cast<std::size_t>(rank), 1);
    for (std::size_t i = 0; i < axes.size(); ++i)
        dims[axes[i]] = p.shape()[int64_t(i)];
    return reshape(p, Shape(dims));
}

}  // namespace

// ---- BatchNormalization ----

BatchNormalization::BatchNormalization(BatchNormalizationOptions options)
    : Layer(options.name, "BatchNormalization"), options_(std::move(options)) {
    use_dtype_option(options_.dtype);
    if (!(options_.epsilon > 0) || !(options_.momentum >= 0 && options_.momentum <= 1))
        throw errors::InvalidArgumentError(fmt::format(
            "BatchNormalization: needs epsilon > 0 and momentum in [0, 1], got {} and {}",
            options_.epsilon,
            options_.momentum));
}

void BatchNormalization::build(const Shape& s) {
    axis_ = resolve_axis(options_.axis, s, name(), "BatchNormalization");
    const int64_t c = s[axis_];
    reduce_axes_.clear();
    for (int64_t i = 0; i < s.rank(); ++i)
        if (i != axis_) reduce_axes_.push_back(i);
    if (options_.scale) gamma_ = add_weight("gamma", {c}, initializers::ones(), variable_dtype());
    if (options_.center) beta_ = add_weight("beta", {c}, initializers::zeros(), variable_dtype());
    moving_mean_ = add_weight("moving_mean", {c}, initializers::zeros(), variable_dtype(), false);
    moving_variance_ =
        add_weight("moving_variance", {c}, initializers::ones(), variable_dtype(), false);
    set_input_spec({.ndim = s.rank(), .axes = {{axis_, c}}});
}

// Keras 3: float16 and bfloat16 inputs are normalized in float32 (their statistics would
// overflow), with float32 weights that do not autocast, and the result cast back.
namespace {
bool low_precision(const Tensor& x, DType weights) {
    return (x.dtype() == DType::float16 || x.dtype() == DType::bfloat16) &&
           weights == DType::float32;
}
}  // namespace

Tensor BatchNormalization::call(const Tensor& input, bool training) {
    if (low_precision(input, variable_dtype())) {
        return cast(call(cast(input, DType::float32), training), input.dtype());
    }
    const Tensor& x = input;
    const std::vector<int64_t> axes{axis_};
    const int64_t rank = x.rank();
    Tensor mean, variance;
    if (training) {
        std::tie(mean, variance) = nn::moments(x, reduce_axes_);
        const double m = options_.momentum;
        moving_mean_.assign(moving_mean_.value() * m + stop_gradient(mean) * (1 - m));
        moving_variance_.assign(moving_variance_.value() * m + stop_gradient(variance) * (1 - m));
    } else {
        mean = moving_mean_.value();
        variance = moving_variance_.value();
    }
    return nn::batch_normalization(
        x,
        broadcastable(mean, axes, rank),
        broadcastable(variance, axes, rank),
        broadcastable(beta_.defined() ? beta_.value() : Tensor(), axes, rank),
        broadcastable(gamma_.defined() ? gamma_.value() : Tensor(), axes, rank),
        options_.epsilon);
}

// ---- LayerNormalization ----

namespace detail {

Tensor layer_norm(const Tensor& x,
                  const Tensor& gamma,
                  const Tensor& beta,
                  const std::vector<int64_t>& axes,
                  double epsilon) {
    return nn::layer_norm(x, gamma, beta, axes, epsilon);  // the fused op (one pass each way)
}

}  // namespace detail

LayerNormalization::LayerNormalization(LayerNormalizationOptions options)
    : Layer(options.name, "LayerNormalization"), options_(std::move(options)) {
    use_dtype_option(options_.dtype);
    if (!(options_.epsilon > 0))
        throw errors::InvalidArgumentError(
            fmt::format("LayerNormalization: epsilon must be > 0, got {}", options_.epsilon));
}

void LayerNormalization::build(const Shape& s) {
    axes_.clear();
    if (options_.axis.all()) {
        for (int64_t i = 1; i < s.rank(); ++i)
            axes_.push_back(i);
    } else {
        for (int64_t a : options_.axis.list())
            axes_.push_back(resolve_axis(a, s, name(), "LayerNormalization"));
    }
    std::sort(axes_.begin(), axes_.end());
    axes_.erase(std::unique(axes_.begin(), axes_.end()), axes_.end());
    std::vector<int64_t> param;
    InputSpec spec{.ndim = s.rank()};
    for (int64_t a : axes_) {
        param.push_back(s[a]);
        spec.axes.emplace_back(a, s[a]);
    }
    if (options_.scale)
        gamma_ = add_weight("gamma", Shape(param), initializers::ones(), variable_dtype());
    if (options_.center)
        beta_ = add_weight("beta", Shape(param), initializers::zeros(), variable_dtype());
    set_input_spec(std::move(spec));
}

Tensor LayerNormalization::call(const Tensor& x, bool training) {
    if (low_precision(x, variable_dtype())) {
        return cast(call(cast(x, DType::float32), training), x.dtype());
    }
    return detail::layer_norm(x,
                              gamma_.defined() ? gamma_.value() : Tensor(),
                              beta_.defined() ? beta_.value() : Tensor(),
                              axes_,
                              options_.epsilon);
}

// ---- GroupNormalization ----

GroupNormalization::GroupNormalization(GroupNormalizationOptions options)
    : Layer(options.name, "GroupNormalization"), options_(std::move(options)) {
    use_dtype_option(options_.dtype);
    if (options_.groups <= 0 && options_.groups != -1)
        throw errors::InvalidArgumentError(fmt::format(
            "GroupNormalization: Received an invalid value for argument `groups`, expected a "
            "positive integer (or -1 for instance normalization). Received: groups={}",
            options_.groups));
    if (!(options_.epsilon > 0))
        throw errors::InvalidArgumentError(
            fmt::format("GroupNormalization: epsilon must be > 0, got {}", options_.epsilon));
}

void GroupNormalization::build(const Shape& s) {
    axis_ = resolve_axis(options_.axis, s, name(), "GroupNormalization");
    if (axis_ == 0)
        throw errors::InvalidArgumentError(fmt::format(
            "layer \"{}\" (GroupNormalization): axis cannot be the batch axis", name()));
    const int64_t c = s[axis_];
    groups_ = options_.groups == -1 ? c : options_.groups;
    if (c < groups_ || c % groups_ != 0)
        throw errors::InvalidArgumentError(fmt::format(
            "layer \"{}\" (GroupNormalization): Number of groups ({}) must divide the number of "
            "channels ({}) and cannot be more than it; input shape {}",
            name(),
            groups_,
            c,
            s.debug_string()));
    if (options_.scale)
        gamma_ = add_weight("gamma", {c}, options_.gamma_initializer, variable_dtype());
    if (options_.center)
        beta_ = add_weight("beta", {c}, options_.beta_initializer, variable_dtype());
    set_input_spec({.ndim = s.rank(), .axes = {{axis_, c}}});
}

Tensor GroupNormalization::call(const Tensor& input, bool training) {
    if (low_precision(input, variable_dtype()))
        return cast(call(cast(input, DType::float32), training), input.dtype());
    const Shape& s = input.shape();
    const int64_t rank = s.rank();
    // [..., C, ...] -> [..., groups, C / groups, ...]; statistics over all but batch and group.
    std::vector<int64_t> grouped = s.dims();
    grouped[axis_] = s[axis_] / groups_;
    grouped.insert(grouped.begin() + axis_, groups_);
    const Tensor x = reshape(input, Shape(grouped));
    std::vector<int64_t> axes;
    for (int64_t d = 1; d <= rank; ++d)
        if (d != axis_) axes.push_back(d);
    const auto [mean, variance] = nn::moments(x, axes, true);
    std::vector<int64_t> param(static_cast<std::size_t>(rank + 1), 1);
    param[axis_] = groups_;
    param[axis_ + 1] = s[axis_] / groups_;
    const Tensor inv = rsqrt(variance + scalar_like(variance, options_.epsilon));
    const Tensor scale = gamma_.defined() ? inv * reshape(gamma_.value(), Shape(param)) : inv;
    Tensor shift = -mean * scale;
    if (beta_.defined()) shift = shift + reshape(beta_.value(), Shape(param));
    return reshape(x * scale + shift, s);
}

// ---- UnitNormalization ----

UnitNormalization::UnitNormalization(UnitNormalizationOptions options)
    : Layer(options.name, "UnitNormalization"), options_(std::move(options)) {}

Tensor UnitNormalization::call(const Tensor& x, bool) {
    for (int64_t a : options_.axis.list())
        resolve_axis(a, x.shape(), name(), "UnitNormalization");
    const Tensor sq = reduce_sum(square(x), options_.axis, true);
    return x * rsqrt(maximum(sq, scalar_like(sq, 1e-24)));
}

}  // namespace tapeflow::keras::layers
