// Gradient checkpointing (TensorFlow's tf.recompute_grad): a function whose intermediate results
// are not kept for the backward pass but recomputed there, trading compute for memory.
#pragma once

#include <functional>
#include <vector>

#include <tapeflow/core/export.hpp>
#include <tapeflow/core/tensor.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow {

/// Wraps `fn` for gradient checkpointing. The returned function runs `fn` with recording paused
/// and records one custom-gradient op on the tapes, which keeps only fn's inputs and its output;
/// its gradient reruns `fn` under a fresh tape and differentiates that run with the upstream
/// gradient (docs/autograd.md "Gradient checkpointing").
///
///     auto block = tf::recompute_grad([w1, w2](const std::vector<tf::Tensor>& in) {
///         return in[0] + tf::matmul(tf::nn::relu(tf::matmul(in[0], w1)), w2);
///     });
///     tf::Tensor y = block({x});   // w1 and w2 get their gradients too
///
/// - Trainable variables fn reads get their gradients: their reads are inputs of the op too. The
///   recompute must read the same variables, and they must keep their values until the gradient is
///   computed (InvalidArgumentError otherwise, as the recompute would differ).
/// - Random ops in fn (dropout) draw the same numbers in the recompute as in the first run; the
///   random streams outside are not advanced by it.
/// - The gradient's own ops are recorded by outer tapes: higher derivatives and forward
///   accumulators work through it.
/// - fn runs again when the gradient is computed: what it captures by reference must still be
///   alive then (capture locals of the calling function by value).
/// - With no tape or accumulator recording, fn just runs.
///
/// InvalidArgumentError when fn is empty, an input is undefined, or fn returns an undefined tensor
/// (or, in the recompute, one of another shape or dtype).
std::function<Tensor(const std::vector<Tensor>&)> recompute_grad(
    std::function<Tensor(const std::vector<Tensor>&)> fn);

}  // namespace tapeflow

TAPEFLOW_API_END
