// Keras 3's losses: per-sample values, sample weights and reductions (Keras'
// reduce_weighted_values), the stable from_logits paths through TensorFlow's fused cross-entropy
// ops.
#include <fmt/format.h>

#include <tapeflow/core/error.hpp>
#include <tapeflow/keras/losses.hpp>
#include <tapeflow/ops/array.hpp>
#include <tapeflow/ops/clip.hpp>
#include <tapeflow/ops/creation.hpp>
#include <tapeflow/ops/math.hpp>
#include <tapeflow/ops/nn.hpp>

namespace tapeflow::keras::losses {

namespace {

constexpr double kEpsilon = 1e-7;  // Keras' backend.epsilon()

Tensor as_dtype(const Tensor& t, DType dtype) {
    return t.dtype() == dtype ? t : cast(t, dtype);
}

void check_defined(const std::string& loss, const Tensor& y_true, const Tensor& y_pred) {
    if (!y_true.defined() || !y_pred.defined())
        throw errors::InvalidArgumentError(
            fmt::format("{}: y_true and y_pred must be defined tensors", loss));
    if (!is_floating(y_pred.dtype()))
        throw errors::InvalidArgumentError(fmt::format(
            "{}: y_pred must be floating point, got {}", loss, dtype_name(y_pred.dtype())));
}

void check_same_shape(const std::string& loss, const Tensor& y_true, const Tensor& y_pred) {
    if (!(y_true.shape() == y_pred.shape()))
        throw errors::InvalidArgumentError(fmt::format(
            "{}: y_true shape {} and y_pred shape {} do not match; give labels shaped like the "
            "model's output{}",
            loss,
            y_true.shape().debug_string(),
            y_pred.shape().debug_string(),
            y_true.rank() + 1 == y_pred.rank() ? " (integer class ids take the sparse loss)" : ""));
}

// y_true cast to y_pred's dtype and checked against it, after Keras' rank fix-up.
Tensor matching_labels(const std::string& loss, const Tensor& y_true, const Tensor& y_pred) {
    check_defined(loss, y_true, y_pred);
    auto [t, p] = detail::squeeze_to_same_rank(y_true, y_pred);
    check_same_shape(loss, t, p);
    return as_dtype(t, y_pred.dtype());
}

}  // namespace

namespace detail {

std::pair<Tensor, Tensor> squeeze_to_same_rank(const Tensor& a, const Tensor& b) {
    if (a.rank() == b.rank() + 1 && a.shape()[-1] == 1) return {squeeze(a, Axes(int64_t{-1})), b};
    if (b.rank() == a.rank() + 1 && b.shape()[-1] == 1) return {a, squeeze(b, Axes(int64_t{-1}))};
    return {a, b};
}

}  // namespace detail

Loss::Loss(std::string name, Reduction reduction) : name_(std::move(name)), reduction_(reduction) {}

Loss::~Loss() = default;

Tensor Loss::operator()(const Tensor& y_true,
                        const Tensor& y_pred,
                        const Tensor& sample_weight) const {
    // Keras 3: a loss computes in float32 (floatx), so float16 / bfloat16 predictions are cast.
    const bool low =
        y_pred.defined() && (y_pred.dtype() == DType::float16 || y_pred.dtype() == DType::bfloat16);
    Tensor losses = call(y_true, low ? cast(y_pred, DType::float32) : y_pred);
    if (sample_weight.defined()) {
        auto [l, w] = detail::squeeze_to_same_rank(losses, as_dtype(sample_weight, losses.dtype()));
        while (w.rank() < l.rank())
            w = expand_dims(w, -1);
        if (w.rank() > l.rank())
            throw errors::InvalidArgumentError(fmt::format(
                "{}: sample_weight of shape {} does not fit the per-sample losses of shape {}; "
                "give one weight per sample",
                name_,
                sample_weight.shape().debug_string(),
                losses.shape().debug_string()));
        losses = l * w;
    }
    switch (reduction_) {
        case Reduction::none:
            return losses;
        case Reduction::sum:
            return reduce_sum(losses);
        case Reduction::sum_over_batch_size:
            break;
    }
    return divide_no_nan(reduce_sum(losses),
                         scalar_like(losses, static_cast<double>(losses.num_elements())));
}

// ---- cross-entropies ----

CategoricalCrossentropy::CategoricalCrossentropy(CrossentropyOptions options)
    : Loss("categorical_crossentropy", options.reduction), options_(options) {}

Tensor CategoricalCrossentropy::call(const Tensor& y_true, const Tensor& y_pred) const {
    check_defined(name(), y_true, y_pred);
    check_same_shape(name(), y_true, y_pred);
    Tensor y = as_dtype(y_true, y_pred.dtype());
    if (options_.label_smoothing > 0) {
        const double classes = static_cast<double>(y_pred.shape()[options_.axis]);
        y = y * (1 - options_.label_smoothing) + options_.label_smoothing / classes;
    }
    if (options_.from_logits)
        return nn::softmax_cross_entropy_with_logits(y, y_pred, options_.axis);
    Tensor p = y_pred / reduce_sum(y_pred, options_.axis, true);
    p = clip_by_value(p, kEpsilon, 1 - kEpsilon);
    return -reduce_sum(y * log(p), options_.axis);
}

SparseCategoricalCrossentropy::SparseCategoricalCrossentropy(CrossentropyOptions options)
    : Loss("sparse_categorical_crossentropy", options.reduction), options_(options) {
    if (options.label_smoothing != 0)
        throw errors::InvalidArgumentError(
            "SparseCategoricalCrossentropy has no label smoothing (as in Keras 3); one-hot the "
            "labels and use CategoricalCrossentropy with label_smoothing");
    if (options.axis != -1)
        throw errors::InvalidArgumentError(fmt::format(
            "SparseCategoricalCrossentropy: only axis -1 is supported, got {}", options.axis));
}

Tensor SparseCategoricalCrossentropy::call(const Tensor& y_true, const Tensor& y_pred) const {
    check_defined(name(), y_true, y_pred);
    Tensor labels = y_true;
    if (labels.rank() == y_pred.rank() && labels.rank() > 0 && labels.shape()[-1] == 1)
        labels = squeeze(labels, Axes(int64_t{-1}));
    std::vector<int64_t> expected = y_pred.shape().dims();
    if (!expected.empty()) expected.pop_back();
    if (!(labels.shape() == Shape(expected)))
        throw errors::InvalidArgumentError(fmt::format(
            "{}: y_true shape {} does not fit y_pred shape {}: expected class ids of shape {}{}",
            name(),
            y_true.shape().debug_string(),
            y_pred.shape().debug_string(),
            Shape(expected).debug_string(),
            y_true.shape() == y_pred.shape() ? " (one-hot labels take CategoricalCrossentropy)"
                                             : ""));
    if (labels.dtype() != DType::int32 && labels.dtype() != DType::int64)
        labels = cast(labels, DType::int32);
    if (options_.from_logits) return nn::sparse_softmax_cross_entropy_with_logits(labels, y_pred);
    Tensor p = clip_by_value(y_pred / reduce_sum(y_pred, -1, true), kEpsilon, 1 - kEpsilon);
    return nn::sparse_softmax_cross_entropy_with_logits(labels, log(p));
}

BinaryCrossentropy::BinaryCrossentropy(CrossentropyOptions options)
    : Loss("binary_crossentropy", options.reduction), options_(options) {}

Tensor BinaryCrossentropy::call(const Tensor& y_true, const Tensor& y_pred) const {
    auto [t, pred] = detail::squeeze_to_same_rank(y_true, y_pred);
    Tensor y = matching_labels(name(), t, pred);
    if (options_.label_smoothing > 0)
        y = y * (1 - options_.label_smoothing) + 0.5 * options_.label_smoothing;
    if (options_.from_logits)
        return reduce_mean(nn::sigmoid_cross_entropy_with_logits(y, pred), options_.axis);
    const Tensor p = clip_by_value(pred, kEpsilon, 1 - kEpsilon);
    return reduce_mean(-(y * log(p) + (1.0 - y) * log(1.0 - p)), options_.axis);
}

// ---- regression ----

namespace {

// Per-sample mean over the last axis of f(y_pred - y_true).
template <class F>
Tensor regression(const std::string& loss, const Tensor& y_true, const Tensor& y_pred, F f) {
    auto [t, p] = detail::squeeze_to_same_rank(y_true, y_pred);
    return reduce_mean(f(p - matching_labels(loss, t, p)), -1);
}

}  // namespace

MeanSquaredError::MeanSquaredError(Reduction reduction) : Loss("mean_squared_error", reduction) {}

Tensor MeanSquaredError::call(const Tensor& y_true, const Tensor& y_pred) const {
    return regression(name(), y_true, y_pred, [](const Tensor& e) { return square(e); });
}

MeanAbsoluteError::MeanAbsoluteError(Reduction reduction)
    : Loss("mean_absolute_error", reduction) {}

Tensor MeanAbsoluteError::call(const Tensor& y_true, const Tensor& y_pred) const {
    return regression(name(), y_true, y_pred, [](const Tensor& e) { return abs(e); });
}

Huber::Huber(double delta, Reduction reduction) : Loss("huber_loss", reduction), delta_(delta) {
    if (!(delta > 0))
        throw errors::InvalidArgumentError(fmt::format("Huber: delta must be > 0, got {}", delta));
}

Tensor Huber::call(const Tensor& y_true, const Tensor& y_pred) const {
    const double d = delta_;
    return regression(name(), y_true, y_pred, [d](const Tensor& e) {
        const Tensor a = abs(e);
        return where(less_equal(a, scalar_like(a, d)), 0.5 * square(e), d * a - 0.5 * d * d);
    });
}

}  // namespace tapeflow::keras::losses
