// What the loss-scale optimizers share (tf::train::MixedPrecisionLossScaleOptimizer, TF1's rule;
// tf::keras::mixed_precision::LossScaleOptimizer, Keras 3's): the finiteness check of a step's
// gradients and their unscaling.
#pragma once

#include <vector>

#include <tapeflow/train/optimizer.hpp>

namespace tapeflow::train::detail {

/// Whether every defined gradient (an IndexedSlices: its values) is finite: one host read.
bool all_finite(const std::vector<GradAndVar>& grads_and_vars);

/// The gradients divided by `scale` (exact for a power of two), each in its own dtype.
std::vector<GradAndVar> unscaled(const std::vector<GradAndVar>& grads_and_vars, double scale);

/// `loss` times `scale`, in the loss's dtype (InvalidArgumentError for an undefined or
/// non-floating loss, naming `who`).
Tensor scaled_loss(const Tensor& loss, double scale, const char* who);

}  // namespace tapeflow::train::detail
