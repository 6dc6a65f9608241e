// Neural-network ops (`tf::nn::` and `tf::losses::`): activations, softmax,
// the fused cross-entropy losses, bias_add, conv2d, pooling, moments, batch_normalization,
// dropout and embedding_lookup, with TensorFlow's semantics and gradients (nn_grad.py, nn_impl.py).
// Errors are InvalidArgumentError naming the op type ("[Op:Conv2D]") and the shapes involved.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include <tapeflow/core/export.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/ops/math.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow {

/// Conv/pool `strides`, `ksize` and `dilations`: 1, 2 or 4 values, as TensorFlow accepts them
/// (one value for both spatial dims; [h, w]; or [1, h, w, 1] in the data format's order).
class Ints {
public:
    Ints(int64_t v) : values_{v} {}  // NOLINT: implicit by design
    Ints(std::initializer_list<int64_t> v) : values_(v) {}
    Ints(std::vector<int64_t> v) : values_(std::move(v)) {}  // NOLINT: implicit by design
    const std::vector<int64_t>& values() const { return values_; }

private:
    std::vector<int64_t> values_;
};

/// Explicit padding: one (before, after) pair per input dimension, TensorFlow's list form.
using Paddings = std::vector<std::pair<int64_t, int64_t>>;

namespace nn {

// ---- activations (float dtypes) ----

/// max(x, 0); the gradient is g where x > 0 (0 at x = 0).
Tensor relu(const Tensor& x);
/// min(max(x, 0), 6); the gradient is g where 0 < x < 6 (0 at both bounds).
Tensor relu6(const Tensor& x);
/// x for x > 0, e^x - 1 otherwise.
Tensor elu(const Tensor& x);
/// scale * (x for x > 0, alpha (e^x - 1) otherwise), TensorFlow's constants; slope at 0 is scale.
Tensor selu(const Tensor& x);
/// x for x > 0, alpha x otherwise (TensorFlow's default alpha 0.2; slope at 0 is alpha).
Tensor leaky_relu(const Tensor& x, double alpha = 0.2);
/// log(1 + e^x), the same op as tf::softplus.
Tensor softplus(const Tensor& x);
/// The same op as tf::sigmoid.
Tensor sigmoid(const Tensor& x);
/// The same op as tf::tanh.
Tensor tanh(const Tensor& x);
/// Gaussian error linear unit, TensorFlow's gelu: x Phi(x) = x (1 + erf(x / sqrt 2)) / 2, or with
/// `approximate` its tanh form x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))) / 2. The derivative
/// is exact for each form (Phi(x) + x phi(x) for the erf form), to any order.
Tensor gelu(const Tensor& x, bool approximate = false);
/// x sigmoid(x); the derivative is s (1 + x (1 - s)) with s = sigmoid(x).
Tensor silu(const Tensor& x);
/// The same op as silu (TensorFlow's tf.nn.swish).
Tensor swish(const Tensor& x);
/// x / (1 + |x|); the derivative is 1 / (1 + |x|)^2.
Tensor softsign(const Tensor& x);
/// log(sigmoid(x)), computed as -softplus(-x): finite for every finite x (-x for very negative x,
/// -0 for large x); the derivative is sigmoid(-x). The same op as tf::math::log_sigmoid.
Tensor log_sigmoid(const Tensor& x);
/// e^x / sum(e^x) along `axis`, computed after subtracting the maximum (never overflows).
Tensor softmax(const Tensor& logits, int64_t axis = -1);
/// x - log(sum(e^x)) along `axis`, numerically stable.
Tensor log_softmax(const Tensor& logits, int64_t axis = -1);

// ---- losses ----

/// Per-example -sum(labels * log_softmax(logits)) along `axis` (the class axis is removed).
/// labels and logits: same float dtype and shape. Both get gradients, as in TensorFlow (labels:
/// -log_softmax(logits) g).
Tensor softmax_cross_entropy_with_logits(const Tensor& labels,
                                         const Tensor& logits,
                                         int64_t axis = -1);
/// Per-example -log_softmax(logits)[label]. labels: int32/int64 of shape logits.shape[:-1], each
/// in [0, num_classes) (InvalidArgumentError otherwise). labels have no gradient.
Tensor sparse_softmax_cross_entropy_with_logits(const Tensor& labels, const Tensor& logits);
/// Element-wise max(x, 0) - x z + log(1 + e^-|x|) (x = logits, z = labels), TensorFlow's stable
/// composite; labels get the gradient -x g.
Tensor sigmoid_cross_entropy_with_logits(const Tensor& labels, const Tensor& logits);
/// sum(x^2) / 2, a scalar.
Tensor l2_loss(const Tensor& x);

// ---- layers ----

/// x + bias along the channel dimension: the last one for "NHWC" (any rank >= 2), dimension 1 for
/// "NCHW" (rank >= 3). bias is 1-D with that many elements.
Tensor bias_add(const Tensor& x, const Tensor& bias, std::string_view data_format = "NHWC");
/// 2-D convolution (cross-correlation): input [N, H, W, C] ("NHWC") or [N, C, H, W] ("NCHW"),
/// filters [KH, KW, C, O] (HWIO). padding "SAME" (TensorFlow's: output ceil(in / stride), extra
/// padding after) or "VALID". float32/float64 (the 16-bit floats through float32).
Tensor conv2d(const Tensor& input,
              const Tensor& filters,
              const Ints& strides,
              std::string_view padding,
              std::string_view data_format = "NHWC",
              const Ints& dilations = 1);
/// conv2d with explicit padding: one (before, after) pair per input dimension (those of the batch
/// and channel dimensions must be (0, 0)).
Tensor conv2d(const Tensor& input,
              const Tensor& filters,
              const Ints& strides,
              const Paddings& padding,
              std::string_view data_format = "NHWC",
              const Ints& dilations = 1);
/// Maximum over each window; padding cells never win ("SAME" pads with -inf).
Tensor max_pool2d(const Tensor& input,
                  const Ints& ksize,
                  const Ints& strides,
                  std::string_view padding,
                  std::string_view data_format = "NHWC");
/// Mean over each window; "SAME" divides by the number of non-padding cells, as TensorFlow.
Tensor avg_pool2d(const Tensor& input,
                  const Ints& ksize,
                  const Ints& strides,
                  std::string_view padding,
                  std::string_view data_format = "NHWC");
/// (mean, variance) over `axes`, TensorFlow's nn.moments: the variance is
/// mean((x - stop_gradient(mean))^2).
std::pair<Tensor, Tensor> moments(const Tensor& x, Axes axes, bool keepdims = false);
/// (x - mean) * rsqrt(variance + variance_epsilon) * scale + offset, broadcasting; offset and
/// scale may be undefined tensors (TensorFlow's None).
Tensor batch_normalization(const Tensor& x,
                           const Tensor& mean,
                           const Tensor& variance,
                           const Tensor& offset,
                           const Tensor& scale,
                           double variance_epsilon);
/// Zeroes each element with probability `rate` and scales the rest by 1 / (1 - rate). rate in
/// [0, 1) (InvalidArgumentError otherwise). A seed makes the mask reproducible (tf::random rules).
Tensor dropout(const Tensor& x, double rate, std::optional<uint64_t> seed = {});
/// params[ids] along axis 0; params' gradient is IndexedSlices, as in TensorFlow.
Tensor embedding_lookup(const Tensor& params, const Tensor& ids);

}  // namespace nn

namespace losses {

/// mean((predictions - labels)^2) over all elements (TensorFlow's default reduction).
Tensor mean_squared_error(const Tensor& labels, const Tensor& predictions);

}  // namespace losses
}  // namespace tapeflow

TAPEFLOW_API_END
