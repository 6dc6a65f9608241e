// TF1's tf.losses (tf.compat.v1.losses): per-element losses weighted and reduced by
// compute_weighted_loss, SUM_BY_NONZERO_WEIGHTS by default (the weighted sum divided by the number
// of nonzero weights, 0 when there are none). Kept beside the Keras losses, which share the ops.
#pragma once

#include <tapeflow/core/export.hpp>
#include <tapeflow/core/tensor.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow::losses {

/// TF1's tf.losses.Reduction.
enum class Reduction { none, sum, mean, sum_over_batch_size, sum_by_nonzero_weights };

/// A loss weight: a number or a tensor broadcastable to the losses (TF1's `weights`).
class Weights {
public:
    Weights(double value) : value_(value) {}                // NOLINT(google-explicit-constructor)
    Weights(Tensor tensor) : tensor_(std::move(tensor)) {}  // NOLINT(google-explicit-constructor)
    /// The weights as a tensor of `like`'s dtype and device.
    Tensor as_tensor(const Tensor& like) const;

private:
    double value_ = 1.0;
    Tensor tensor_;
};

/// losses x weights reduced: none (the weighted losses), sum, mean (sum / sum of broadcast
/// weights), sum_over_batch_size (sum / number of elements), sum_by_nonzero_weights (sum / number
/// of nonzero broadcast weights). Divisions by zero give 0, as TensorFlow's div_no_nan.
Tensor compute_weighted_loss(const Tensor& losses,
                             Weights weights = 1.0,
                             Reduction reduction = Reduction::sum_by_nonzero_weights);

/// softmax_cross_entropy_with_logits on labels smoothed to labels (1 - ls) + ls / classes.
Tensor softmax_cross_entropy(const Tensor& onehot_labels,
                             const Tensor& logits,
                             Weights weights = 1.0,
                             double label_smoothing = 0);
Tensor sparse_softmax_cross_entropy(const Tensor& labels,
                                    const Tensor& logits,
                                    Weights weights = 1.0);
/// sigmoid_cross_entropy_with_logits on labels smoothed to labels (1 - ls) + ls / 2.
Tensor sigmoid_cross_entropy(const Tensor& multi_class_labels,
                             const Tensor& logits,
                             Weights weights = 1.0,
                             double label_smoothing = 0);
/// |predictions - labels|.
Tensor absolute_difference(const Tensor& labels, const Tensor& predictions, Weights weights = 1.0);
/// 0.5 min(|e|, delta)^2 + delta (|e| - min(|e|, delta)), e = predictions - labels.
Tensor huber_loss(const Tensor& labels,
                  const Tensor& predictions,
                  Weights weights = 1.0,
                  double delta = 1.0);
/// -labels log(predictions + epsilon) - (1 - labels) log(1 - predictions + epsilon).
Tensor log_loss(const Tensor& labels,
                const Tensor& predictions,
                Weights weights = 1.0,
                double epsilon = 1e-7);
/// relu(1 - (2 labels - 1) logits), labels in {0, 1}.
Tensor hinge_loss(const Tensor& labels, const Tensor& logits, Weights weights = 1.0);
/// (predictions - labels)^2, weighted (the two-argument overload is the unweighted mean).
Tensor mean_squared_error(const Tensor& labels, const Tensor& predictions, Weights weights);

}  // namespace tapeflow::losses

TAPEFLOW_API_END
