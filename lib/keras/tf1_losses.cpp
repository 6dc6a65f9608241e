// TF1's tf.losses on public ops: the per-element formulas of losses_impl.py and
// compute_weighted_loss with its reductions (divisions by zero give 0, as div_no_nan).
#include <fmt/format.h>

#include <tapeflow/core/error.hpp>
#include <tapeflow/keras/tf1_losses.hpp>
#include <tapeflow/ops/array.hpp>
#include <tapeflow/ops/creation.hpp>
#include <tapeflow/ops/math.hpp>
#include <tapeflow/ops/nn.hpp>

namespace tapeflow::losses {

namespace {

void check_pair(const char* fn, const Tensor& labels, const Tensor& predictions) {
    if (!labels.defined() || !predictions.defined())
        throw errors::InvalidArgumentError(fmt::format("tf.losses.{}: undefined input", fn));
    if (!(labels.shape() == predictions.shape()))
        throw errors::InvalidArgumentError(
            fmt::format("tf.losses.{}: labels shape {} and predictions shape {} must be equal",
                        fn,
                        labels.shape().debug_string(),
                        predictions.shape().debug_string()));
}

Tensor like(const Tensor& t, const Tensor& ref) {
    return t.dtype() == ref.dtype() ? t : cast(t, ref.dtype());
}

}  // namespace

Tensor Weights::as_tensor(const Tensor& l) const {
    return tensor_.defined() ? like(tensor_, l) : scalar_like(l, value_);
}

Tensor compute_weighted_loss(const Tensor& losses, Weights weights, Reduction reduction) {
    const Tensor w = weights.as_tensor(losses);
    const Tensor weighted = losses * w;
    if (reduction == Reduction::none) return weighted;
    const Tensor total = reduce_sum(weighted);
    switch (reduction) {
        case Reduction::sum:
            return total;
        case Reduction::mean:
            return divide_no_nan(total, reduce_sum(broadcast_to(w, losses.shape())));
        case Reduction::sum_over_batch_size:
            return divide_no_nan(total, scalar_like(total, double(losses.num_elements())));
        default:
            break;
    }
    // TF1's _num_present: the nonzero weights, broadcast to the losses' shape.
    const Tensor present =
        cast(not_equal(broadcast_to(w, losses.shape()), zeros_like(losses)), losses.dtype());
    return divide_no_nan(total, reduce_sum(present));
}

Tensor softmax_cross_entropy(const Tensor& onehot_labels,
                             const Tensor& logits,
                             Weights weights,
                             double label_smoothing) {
    check_pair("softmax_cross_entropy", onehot_labels, logits);
    Tensor labels = like(onehot_labels, logits);
    if (label_smoothing > 0) {
        const double classes = static_cast<double>(logits.shape()[-1]);
        labels = labels * (1 - label_smoothing) + label_smoothing / classes;
    }
    return compute_weighted_loss(nn::softmax_cross_entropy_with_logits(labels, logits), weights);
}

Tensor sparse_softmax_cross_entropy(const Tensor& labels, const Tensor& logits, Weights weights) {
    return compute_weighted_loss(nn::sparse_softmax_cross_entropy_with_logits(labels, logits),
                                 weights);
}

Tensor sigmoid_cross_entropy(const Tensor& multi_class_labels,
                             const Tensor& logits,
                             Weights weights,
                             double label_smoothing) {
    check_pair("sigmoid_cross_entropy", multi_class_labels, logits);
    Tensor labels = like(multi_class_labels, logits);
    if (label_smoothing > 0) labels = labels * (1 - label_smoothing) + 0.5 * label_smoothing;
    return compute_weighted_loss(nn::sigmoid_cross_entropy_with_logits(labels, logits), weights);
}

Tensor absolute_difference(const Tensor& labels, const Tensor& predictions, Weights weights) {
    check_pair("absolute_difference", labels, predictions);
    return compute_weighted_loss(abs(predictions - like(labels, predictions)), weights);
}

Tensor huber_loss(const Tensor& labels, const Tensor& predictions, Weights weights, double delta) {
    check_pair("huber_loss", labels, predictions);
    const Tensor error = abs(predictions - like(labels, predictions));
    const Tensor quadratic = minimum(error, scalar_like(error, delta));
    return compute_weighted_loss(0.5 * square(quadratic) + delta * (error - quadratic), weights);
}

Tensor log_loss(const Tensor& labels, const Tensor& predictions, Weights weights, double epsilon) {
    check_pair("log_loss", labels, predictions);
    const Tensor y = like(labels, predictions);
    return compute_weighted_loss(
        -y * log(predictions + epsilon) - (1.0 - y) * log(1.0 - predictions + epsilon), weights);
}

Tensor hinge_loss(const Tensor& labels, const Tensor& logits, Weights weights) {
    check_pair("hinge_loss", labels, logits);
    const Tensor signs = 2.0 * like(labels, logits) - 1.0;
    return compute_weighted_loss(nn::relu(1.0 - signs * logits), weights);
}

Tensor mean_squared_error(const Tensor& labels, const Tensor& predictions, Weights weights) {
    check_pair("mean_squared_error", labels, predictions);
    return compute_weighted_loss(square(predictions - like(labels, predictions)), weights);
}

}  // namespace tapeflow::losses
