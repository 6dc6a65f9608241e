// OpDef: an op's gradient row — which tensors the backward pass reads (Save) and the formula that
// reads them. Each family file under lib/ops/ defines the rows of its ops next to their public
// wrappers; op_def.cpp collects them into one table indexed by Op. Formulas are written with public
// tapeflow ops, so they run on every device and are themselves differentiable (higher order).
// Broadcasting is undone by the engine (NOTE [Un-broadcasting] in lib/autograd/backward.cpp).
// Rows flagged `batchable` also run with gradients that carry extra leading batch dims
// (NOTE [Vectorized jacobians] in lib/autograd/backward.cpp). Every differentiable row also has
// its forward-mode rule (JVP, NOTE [Forward mode] in lib/autograd/forward_mode.cpp), written with
// public ops too, so tangents are differentiable to every order.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include <tapeflow/autograd/gradient.hpp>
#include <tapeflow/core/tensor.hpp>

#include "ops/attrs.hpp"
#include "ops/op.hpp"

namespace tapeflow {

/// What the tape keeps of a recorded op for its gradient (NOTE [Saved tensors]).
enum class Save : uint8_t { nothing = 0, inputs = 1, output = 2, inputs_and_output = 3 };

/// Shape, dtype and device of a tensor: recorded for every input and output of every recorded op.
struct TensorMeta {
    Shape shape;
    DType dtype = DType::float32;
    Device device;
};

/// Everything a gradient formula may read.
struct GradCtx {
    /// dL/d(output k), one per output; never undefined (the engine passes zeros for outputs that
    /// received no gradient). grads[0] is the usual `grad`.
    std::span<const Tensor> grads;
    /// Saved inputs (empty unless the row saves them).
    std::span<const Tensor> in;
    /// Saved outputs (empty unless the row saves them).
    std::span<const Tensor> out;
    const Attrs& attrs;
    std::span<const TensorMeta> in_meta;
    std::span<const TensorMeta> out_meta;
    /// Extra leading dims on every grads[k] (and expected on every returned gradient): 0 for an
    /// ordinary gradient, 1 in a vectorized jacobian (only rows flagged `batchable` see 1).
    int batch_dims = 0;
    /// Which inputs need a gradient (TensorFlow's skip_input_indices, inverted); empty = all. The
    /// engine sets it in every walk; formulas whose parts are expensive (matmul, conv2d) skip the
    /// others, e.g. a first layer's gradient w.r.t. the data, or a vectorized jacobian's dB.
    std::span<const char> needs = {};

    const Tensor& grad() const { return grads[0]; }
    bool needs_grad(std::size_t input) const { return needs.empty() || needs[input] != 0; }
    /// `shape` (an input's or output's) with the gradients' leading batch dims in front.
    Shape batched(const Shape& shape) const;
    /// A non-negative axis of an input or output, counted in the batched gradient.
    int64_t batched_axis(int64_t axis) const { return axis + batch_dims; }
};

/// One gradient per input; an undefined Gradient means "no gradient" (a symbolic zero).
using Grads = std::vector<Gradient>;
using BackwardFn = Grads (*)(const GradCtx& ctx);

/// Everything a forward-mode (JVP) rule may read: the primal inputs and outputs of the call and
/// one tangent per input (undefined: a zero tangent, e.g. an integer input or one the accumulator
/// does not reach; at least one is defined).
struct JvpCtx {
    Op op;
    std::span<const Tensor> in;
    std::span<const Tensor> out;
    std::span<const Tensor> tangents;
    const Attrs& attrs;

    bool has(std::size_t input) const { return tangents[input].defined(); }
    const Tensor& t(std::size_t input) const { return tangents[input]; }
};

/// One tangent per output, undefined for a zero tangent. A tangent may have a shape that
/// broadcasts to its output's (the engine broadcasts it, as it un-broadcasts gradients).
using Tangents = std::vector<Tensor>;
using JvpFn = Tangents (*)(const JvpCtx& ctx);

/// The generic JVP of a row without an explicit rule: d/du <vjp(u), t>, the gradient of the
/// tangents' inner product with the row's own backward formula (TensorFlow's fallback for ops
/// without forward functions). Exact, and differentiable like the formula; it costs about two
/// backward passes of the op. lib/autograd/forward_mode.cpp.
Tangents jvp_by_double_vjp(const JvpCtx& ctx);

/// The sum of two tangent terms, either of which may be undefined (zero).
Tensor add_tangents(const Tensor& a, const Tensor& b);

// The generic JVP rules (op_def.cpp); each is exact and built from ops with their own rules.

/// Ops linear in their floating inputs jointly (reshape-free shape ops, slices, gathers, sums,
/// pads): the same op, same attrs, run on the tangents (zeros for inputs without one); integer
/// inputs (indices) are passed as they are. A view output stays a view of the tangent.
Tangents jvp_linear(const JvpCtx& ctx);
/// Ops linear in input 0 and piecewise constant in the others (relu_grad(g, x)): the op run on
/// input 0's tangent and the other primal inputs.
Tangents jvp_linear_in_first(const JvpCtx& ctx);
/// Ops linear in each floating input separately (matmul, convolutions and their backprops): the
/// product rule, the op run once per input that has a tangent with that input replaced by it.
Tangents jvp_bilinear(const JvpCtx& ctx);
/// Single-output ops whose Jacobian in each input is self-adjoint (element-wise ops, where the
/// Jacobian is diagonal up to broadcasting; softmax): J t is the row's own backward formula with
/// the tangent as the upstream gradient, summed over the inputs that have a tangent.
Tangents jvp_self_adjoint(const JvpCtx& ctx);

struct OpDef {
    Op op;
    Save save;
    BackwardFn backward;  // nullptr: not differentiable (nothing flows to the inputs)
    /// The formula is right when the grads carry leading batch dims (GradCtx::batch_dims): it
    /// combines them with saved tensors only by broadcasting element-wise ops, or shifts its axes
    /// and shapes with GradCtx::batched*. Other rows run once per batch row in a vectorized
    /// jacobian (NOTE [Vectorized jacobians]).
    bool batchable = false;
    /// The forward-mode rule; every row with a `backward` formula needs one (test_registry).
    JvpFn jvp = nullptr;
};

/// Spelled after the formula: `{Op::exp, Save::output, exp_grad, kBatchable, exp_jvp}`.
inline constexpr bool kBatchable = true;
inline constexpr bool kNotBatchable = false;

/// The row of `op`; InternalError when the op has none (tests/ops/test_registry.cpp checks every op
/// has one).
const OpDef& op_def(Op op);

}  // namespace tapeflow
