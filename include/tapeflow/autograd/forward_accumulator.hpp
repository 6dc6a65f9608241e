// Forward-mode autodiff (TensorFlow 2's tf.autodiff.ForwardAccumulator), Hessians (tf.hessians)
// and Hessian-vector products. docs/autograd.md, sections "Forward mode" and "Hessians".
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include <tapeflow/autograd/gradient_tape.hpp>
#include <tapeflow/autograd/variable.hpp>
#include <tapeflow/core/export.hpp>
#include <tapeflow/core/tensor.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow {

struct AccumulatorState;

namespace autodiff {

/// Computes Jacobian-vector products while alive (TensorFlow's `with
/// tf.autodiff.ForwardAccumulator(primals, tangents) as acc:`): every op run on this thread whose
/// inputs carry tangents computes its outputs' tangents at once, with the op's JVP rule.
///
///     tf::Tensor x = tf::constant({1., 2.});
///     tf::autodiff::ForwardAccumulator acc({x}, {tf::constant({1., 0.})});
///     tf::Tensor y = tf::square(x);
///     tf::Tensor dy = acc.jvp(y);                      // [2. 0.]
///
/// TensorFlow's semantics: integer and bool outputs carry no tangent, stop_gradient and the other
/// non-differentiable ops block tangents, a Variable primal gives its tangent to every read of it.
/// Accumulators nest with each other and with GradientTapes in both orders: an outer accumulator
/// or tape sees the JVP computations of inner accumulators (so `outer.jvp(inner.jvp(y))` and
/// `tape.gradient(acc.jvp(y), x)` are second derivatives), and an accumulator sees the ops
/// tape.gradient runs (forward-over-reverse Hessian-vector products). Tapes and accumulators
/// created inside an accumulator do not record its JVP computations. custom_gradient ops get the
/// JVP of their backward function by the double-VJP trick, as in TensorFlow. Tangents are kept
/// until the accumulator is destroyed. An accumulator belongs to the thread that made it.
class ForwardAccumulator {
public:
    /// One tangent per primal, of the primal's shape and dtype (InvalidArgumentError otherwise).
    /// A non-floating primal is not watched (a warning, as in TensorFlow).
    ForwardAccumulator(std::vector<Tensor> primals, std::vector<Tensor> tangents);
    ForwardAccumulator(std::vector<Variable> primals, std::vector<Tensor> tangents);
    ~ForwardAccumulator();
    ForwardAccumulator(const ForwardAccumulator&) = delete;
    ForwardAccumulator& operator=(const ForwardAccumulator&) = delete;

    /// The tangent of `target` (the Jacobian-vector product); when no watched primal reaches it
    /// (or it is not floating) an undefined Tensor, or zeros of its shape with
    /// UnconnectedGradients::zero.
    Tensor jvp(const Tensor& target,
               UnconnectedGradients unconnected = UnconnectedGradients::none) const;
    /// The tangent of a watched Variable (its primal's tangent).
    Tensor jvp(const Variable& target,
               UnconnectedGradients unconnected = UnconnectedGradients::none) const;

private:
    std::shared_ptr<AccumulatorState> state_;
};

/// The Hessian of f at x times v, H v, forward-over-reverse: one gradient of f run inside a
/// ForwardAccumulator (about the cost of two or three gradients, never the n x n Hessian).
Tensor hessian_vector_product(const std::function<Tensor(const Tensor&)>& f,
                              const Tensor& x,
                              const Tensor& v);
/// The Hessian of the scalar loss() in the variables times the vectors (one per variable, of its
/// shape): the blocks sum_j H_ij v_j, one per variable. Variables loss() does not reach get zeros.
std::vector<Tensor> hessian_vector_product(const std::function<Tensor()>& loss,
                                           const std::vector<Variable>& variables,
                                           const std::vector<Tensor>& vectors);

}  // namespace autodiff

/// tf.hessians: the Hessian of sum(y) in x, of shape x.shape + x.shape. y must have been computed
/// from x under a recording GradientTape that watches x (the innermost such tape is used, and the
/// gradient computation is recorded on it; the tape is not consumed). InvalidArgumentError when no
/// recording tape connects y to x. Undefined x-x blocks (y linear in x) are zeros.
Tensor hessians(const Tensor& y, const Tensor& x);
/// The Hessian of f at x, of shape x.shape + x.shape (sum(f(x)) when f is not scalar).
Tensor hessians(const std::function<Tensor(const Tensor&)>& f, const Tensor& x);

}  // namespace tapeflow

TAPEFLOW_API_END
