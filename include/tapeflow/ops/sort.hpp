// Sorting ops: tf::math::top_k (TensorFlow's TopKV2, with its gradient), and tf::sort /
// tf::argsort, which TensorFlow builds on top_k (sort_ops.py) and so do we. Real dtypes: the
// floats, int32, int64 and uint8. NaN counts as larger than every number.
#pragma once

#include <cstdint>
#include <string_view>
#include <utility>

#include <tapeflow/core/export.hpp>
#include <tapeflow/core/tensor.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow {

namespace math {

/// The k largest entries of each row along the last axis: (values, int32 indices), both of shape
/// x.shape[:-1] + [k], largest first; equal values come in index order (the lower index first).
/// sorted = false allows any order (tapeflow returns the sorted one). The gradient scatters the
/// values' upstream gradient to the indices (TensorFlow's _TopKGrad); the indices have none.
/// InvalidArgumentError "[Op:TopKV2]" for rank 0, k < 0 or k > x.shape[-1].
std::pair<Tensor, Tensor> top_k(const Tensor& x, int64_t k = 1, bool sorted = true);

}  // namespace math

namespace nn {
using math::top_k;  // tf.nn.top_k is the same function
}  // namespace nn

/// x sorted along `axis`, direction "ASCENDING" or "DESCENDING" (InvalidArgumentError otherwise).
/// Differentiable: the gradient is the upstream one permuted back (through top_k, as TensorFlow).
Tensor sort(const Tensor& x, int64_t axis = -1, std::string_view direction = "ASCENDING");

/// The int32 indices that sort x along `axis` (x gathered at them is sort(x, axis, direction)).
/// Equal values keep their order in both directions, so `stable` changes nothing (TensorFlow's
/// top_k-based argsort is stable too). No gradient.
Tensor argsort(const Tensor& x,
               int64_t axis = -1,
               std::string_view direction = "ASCENDING",
               bool stable = false);

}  // namespace tapeflow

TAPEFLOW_API_END
