// Clipping: TensorFlow's clip_ops as composites of public
// ops, so their gradients are TensorFlow's. Each also accepts tf::Gradient, where IndexedSlices
// keep their indices and only the values are clipped; undefined entries pass through.
#pragma once

#include <concepts>
#include <utility>
#include <vector>

#include <tapeflow/autograd/gradient.hpp>
#include <tapeflow/core/export.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/ops/math.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow {

/// max(min(t, clip_value_max), clip_value_min). The bounds broadcast to t's shape (a bound that
/// would enlarge the result raises InvalidArgumentError) and must have t's dtype.
Tensor clip_by_value(const Tensor& t, const Tensor& clip_value_min, const Tensor& clip_value_max);
Tensor clip_by_value(const Tensor& t, double clip_value_min, double clip_value_max);
/// t * clip_norm / max(||t||_2 over `axes`, clip_norm); finite gradient at t = 0.
Tensor clip_by_norm(const Tensor& t, const Tensor& clip_norm, Axes axes = {});
Tensor clip_by_norm(const Tensor& t, double clip_norm, Axes axes = {});
/// t * clip_norm * min(num_elements / ||t||_2, 1 / clip_norm) (TF1, deprecated in TensorFlow).
Tensor clip_by_average_norm(const Tensor& t, const Tensor& clip_norm);
Tensor clip_by_average_norm(const Tensor& t, double clip_norm);
/// sqrt(sum of squares of every element of every tensor); undefined entries are skipped.
Tensor global_norm(const std::vector<Tensor>& t_list);
/// Scales every tensor by clip_norm / max(global_norm, clip_norm); an inf or NaN norm makes every
/// element NaN. Returns the clipped list and the (unclipped) global norm.
std::pair<std::vector<Tensor>, Tensor> clip_by_global_norm(const std::vector<Tensor>& t_list,
                                                           double clip_norm,
                                                           Tensor use_norm = {});

Gradient clip_by_value(const Gradient& t, double clip_value_min, double clip_value_max);
Gradient clip_by_value(const Gradient& t,
                       const Tensor& clip_value_min,
                       const Tensor& clip_value_max);
Gradient clip_by_norm(const Gradient& t, double clip_norm, Axes axes = {});
Gradient clip_by_norm(const Gradient& t, const Tensor& clip_norm, Axes axes = {});
Gradient clip_by_average_norm(const Gradient& t, double clip_norm);
Gradient clip_by_average_norm(const Gradient& t, const Tensor& clip_norm);
/// Norm of the values of IndexedSlices (duplicate indices are not summed first, as in TensorFlow).
Tensor global_norm_of_gradients(const std::vector<Gradient>& t_list);
std::pair<std::vector<Gradient>, Tensor> clip_by_global_norm_of_gradients(
    const std::vector<Gradient>& t_list, double clip_norm, Tensor use_norm = {});

// The std::vector<Gradient> overloads are templates so that a brace list of tensors,
// clip_by_global_norm({a, b}, 1.0), picks the Tensor overload instead of being ambiguous.
template <class G>
requires std::same_as<G, Gradient> Tensor global_norm(const std::vector<G>& t_list) {
    return global_norm_of_gradients(t_list);
}

template <class G>
requires std::same_as<G, Gradient> std::pair<std::vector<Gradient>, Tensor> clip_by_global_norm(
    const std::vector<G>& t_list, double clip_norm, Tensor use_norm = {}) {
    return clip_by_global_norm_of_gradients(t_list, clip_norm, std::move(use_norm));
}

}  // namespace tapeflow

TAPEFLOW_API_END
