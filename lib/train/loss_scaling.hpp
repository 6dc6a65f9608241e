// What the loss-scale optimizers share (tf::train::MixedPrecisionLossScaleOptimizer, TF1's rule;
// tf::keras::mixed_precision::LossScaleOptimizer, Keras 3's): the finiteness check of a step's
// gradients and their unscaling.
#pragma once

#include <vector>

#include <tapeflow/train/optimizer.hpp>

namespace tapeflow::train::detail {

/// Whether every defined gradient (an IndexedSlices: its values) is finite: one host read.
bool all_finite(const std::vector<GradAndVar>& grads_and_vars);

/// The gradients divided by `scale` (a float32 scalar, exact for a power of two), each in its own
/// dtype. Tensors, not host numbers: inside a tf::function the scale is read at every replay.
std::vector<GradAndVar> unscaled(const std::vector<GradAndVar>& grads_and_vars,
                                 const Tensor& scale);

/// `loss` times `scale` (a float32 scalar), in the loss's dtype (InvalidArgumentError for an
/// undefined or non-floating loss, naming `who`).
Tensor scaled_loss(const Tensor& loss, const Tensor& scale, const char* who);

}  // namespace tapeflow::train::detail
