// tf.vectorized_map: a function of one example applied to every example of a batch, computed as
// one batched call of each op (TensorFlow's pfor). docs/autograd.md, section "vectorized_map".
#pragma once

#include <functional>
#include <vector>

#include <tapeflow/core/export.hpp>
#include <tapeflow/core/tensor.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow {

struct VectorizedMapOptions {
    /// An op without a batching rule for its inputs runs once per example (a loop, logged once per
    /// call as a warning naming the op: tf.vectorized_map's fallback_to_while_loop). false: such an
    /// op raises InvalidArgumentError naming it instead.
    bool fallback_to_while_loop = true;
};

/// fn applied to every slice of `elems` along axis 0, stacked: fn(elems[i]) for i in [0, n).
/// fn is traced on one example and each op it ran is run once on the batch; a GradientTape inside
/// fn is allowed (per-example gradients). fn must run the same ops for every example: when it
/// reads values on the host (item(), to_vector(), data(): C++ control flow on them), it also runs
/// on the last example, and if the two runs differ every example runs fn on its own, with a
/// warning. Outputs fn computes without the example are stacked n times. Random ops draw
/// independent numbers for every example. Changing a Variable inside fn: InvalidArgumentError.
///
///     auto per_example = tf::vectorized_map(
///         [&](const tf::Tensor& x) {
///             tf::GradientTape tape;
///             tf::Tensor loss = tf::reduce_sum(tf::square(tf::matmul(tf::expand_dims(x, 0),
///             w.read_value()))); return tape.gradient(loss, w).dense();
///         },
///         batch);                                        // [n, *w.shape]
Tensor vectorized_map(std::function<Tensor(const Tensor&)> fn,
                      const Tensor& elems,
                      const VectorizedMapOptions& options = {});
/// Several inputs (each sliced along axis 0; all with the same first dimension) and outputs.
std::vector<Tensor> vectorized_map(
    std::function<std::vector<Tensor>(const std::vector<Tensor>&)> fn,
    const std::vector<Tensor>& elems,
    const VectorizedMapOptions& options = {});

}  // namespace tapeflow

TAPEFLOW_API_END
