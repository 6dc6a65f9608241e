// sum_to_shape: a gradient summed over the axes a broadcast added or stretched (NOTE
// [Un-broadcasting] in lib/autograd/backward.cpp). Used by the backward walk for every input and
// by gradient rows that undo a broadcast themselves (broadcast_to).
#pragma once

#include <tapeflow/core/tensor.hpp>

namespace tapeflow {

/// The gradient reduced to `shape` by summing the broadcast axes; its first `batch_dims` dims are
/// kept (NOTE [Vectorized jacobians]).
Tensor sum_to_shape(const Tensor& grad, const Shape& shape, int batch_dims = 0);

}  // namespace tapeflow
