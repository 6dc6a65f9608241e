// tf::nn activations and softmax: the public wrappers of include/tapeflow/ops/nn.hpp and the
// gradient rows of Relu ... LeakyRelu, their *Grad ops, Softmax and LogSoftmax, following
// TensorFlow's nn_grad.py (the *Grad ops have rows of their own, so second derivatives work), and
// of the smooth activations gelu, silu, softsign and log_sigmoid. CPU kernels:
// lib/kernels/cpu/activation_cpu.cpp, softmax_cpu.cpp; the smooth activations are rows of the unary
// kernel table (lib/kernels/shared/unary_ops.def), so they run and fuse like tf::exp.
#include <tapeflow/ops/array.hpp>
#include <tapeflow/ops/creation.hpp>
#include <tapeflow/ops/math.hpp>
#include <tapeflow/ops/nn.hpp>

#include "ops/nn_common.hpp"
#include "ops/op_families.hpp"

namespace tapeflow {
namespace {

using nn_detail::check_float;

constexpr double kSqrtHalf = 0.70710678118654752440;    // 1 / sqrt(2)
constexpr double kInvSqrt2Pi = 0.39894228040143267794;  // 1 / sqrt(2 pi)
constexpr double kGeluK = 0.79788456080286535588;       // sqrt(2 / pi)
constexpr double kGeluA = 0.044715;

Tensor activation(Op op, const Tensor& x, const Attrs& attrs = {}) {
    nn_detail::check_defined(op, x, "features");
    // Relu and Relu6 also take signed integers, as in TensorFlow; the others only floats.
    const bool int_ok = op == Op::relu || op == Op::relu6;
    if (!(is_floating(x.dtype()) ||
          (int_ok && (x.dtype() == DType::int32 || x.dtype() == DType::int64)))) {
        check_float(op, x, "features");
    }
    return apply(op, {x}, OutputSpec{x.shape(), x.dtype()}, attrs);
}

// The *Grad ops take (upstream gradient, features or outputs) of one shape and dtype; a batched
// g (NOTE [Vectorized jacobians]) has more leading dims, so x is broadcast to it first.
Tensor activation_grad(Op op, const Tensor& g, const Tensor& x, const Attrs& attrs = {}) {
    const Tensor xs = g.rank() == x.rank() ? x : broadcast_to(x, g.shape());
    return apply(op, {g, xs}, OutputSpec{xs.shape(), xs.dtype()}, attrs);
}

Tensor softmax_like(Op op, const Tensor& logits, int64_t axis) {
    check_float(op, logits, "logits");
    if (logits.shape().rank() == 0) {
        op_fail(op, "logits must have >= 1 dimension, got {}", logits.shape().debug_string());
    }
    const int64_t a = normalize_axis(axis, logits.shape().rank(), op_type(op));
    return apply(op, {logits}, OutputSpec{logits.shape(), logits.dtype()}, Attrs().set("axis", a));
}

double alpha_of(const GradCtx& c) {
    return c.attrs.get<double>("alpha");
}

Tensor leaky_relu_grad(const Tensor& g, const Tensor& x, double alpha) {
    return activation_grad(Op::leaky_relu_grad, g, x, Attrs().set("alpha", alpha));
}

// TF _SoftmaxGrad: (g - sum(g y)) y along the axis.
Grads softmax_grad(const GradCtx& c) {
    const Tensor& y = c.out[0];
    const int64_t axis = c.attrs.get<int64_t>("axis");
    const Tensor dot = reduce_sum(multiply(c.grad(), y), c.batched_axis(axis), true);
    return {multiply(subtract(c.grad(), dot), y)};
}

// TF _LogSoftmaxGrad: g - sum(g) e^y along the axis.
Grads log_softmax_grad(const GradCtx& c) {
    const Tensor& y = c.out[0];
    const int64_t axis = c.attrs.get<int64_t>("axis");
    const Tensor sum = reduce_sum(c.grad(), c.batched_axis(axis), true);
    return {subtract(c.grad(), multiply(sum, exp(y)))};
}

// d log_softmax(x) = t - sum(softmax(x) t) along the axis.
Tangents log_softmax_jvp(const JvpCtx& c) {
    const int64_t axis = c.attrs.get<int64_t>("axis");
    const Tensor& t = c.t(0);
    return {subtract(t, reduce_sum(multiply(exp(c.out[0]), t), axis, true))};
}

// Rows: the activation's gradient is its *Grad op; a *Grad op's gradient w.r.t. the upstream
// gradient is the same *Grad op, and w.r.t. the features zero (piecewise linear) or, for elu and
// selu (whose *Grad reads the outputs y), g_in * gg where y < 0 (TF _EluGradGrad/_SeluGradGrad).
const OpDef kActivationOps[] = {
    {Op::relu,
     Save::inputs,  // relu' = [x > 0]
     [](const GradCtx& c) -> Grads { return {activation_grad(Op::relu_grad, c.grad(), c.in[0])}; },
     kBatchable,
     jvp_self_adjoint},
    {Op::relu_grad,
     Save::inputs,  // linear in g; piecewise constant in x
     [](const GradCtx& c) -> Grads {
         return {activation_grad(Op::relu_grad, c.grad(), c.in[1]), zeros_like(c.grad())};
     },
     kBatchable,
     jvp_linear_in_first},
    {Op::relu6,
     Save::inputs,  // relu6' = [0 < x < 6]
     [](const GradCtx& c) -> Grads { return {activation_grad(Op::relu6_grad, c.grad(), c.in[0])}; },
     kBatchable,
     jvp_self_adjoint},
    {Op::relu6_grad,
     Save::inputs,
     [](const GradCtx& c) -> Grads {
         return {activation_grad(Op::relu6_grad, c.grad(), c.in[1]), zeros_like(c.grad())};
     },
     kBatchable,
     jvp_linear_in_first},
    {Op::elu,
     Save::output,  // elu' = y + 1 where y < 0, else 1
     [](const GradCtx& c) -> Grads { return {activation_grad(Op::elu_grad, c.grad(), c.out[0])}; },
     kBatchable,
     jvp_self_adjoint},
    {Op::elu_grad,
     Save::inputs,  // d/dy [g (y + 1)] = g where y < 0
     [](const GradCtx& c) -> Grads {
         const Tensor& y = c.in[1];
         const Tensor neg = less(y, scalar_like(y, 0));
         return {activation_grad(Op::elu_grad, c.grad(), y),
                 where(neg, multiply(c.grad(), c.in[0]), zeros_like(y))};
     },
     kBatchable,
     jvp_by_double_vjp},
    {Op::selu,
     Save::output,  // selu' = y + scale alpha where y < 0, else scale
     [](const GradCtx& c) -> Grads { return {activation_grad(Op::selu_grad, c.grad(), c.out[0])}; },
     kBatchable,
     jvp_self_adjoint},
    {Op::selu_grad,
     Save::inputs,  // d/dy [g (y + scale alpha)] = g where y < 0
     [](const GradCtx& c) -> Grads {
         const Tensor& y = c.in[1];
         const Tensor neg = less(y, scalar_like(y, 0));
         return {activation_grad(Op::selu_grad, c.grad(), y),
                 where(neg, multiply(c.grad(), c.in[0]), zeros_like(y))};
     },
     kBatchable,
     jvp_by_double_vjp},
    {Op::leaky_relu,
     Save::inputs,  // leaky_relu' = 1 where x > 0, else alpha
     [](const GradCtx& c) -> Grads { return {leaky_relu_grad(c.grad(), c.in[0], alpha_of(c))}; },
     kBatchable,
     jvp_self_adjoint},
    {Op::leaky_relu_grad,
     Save::inputs,
     [](const GradCtx& c) -> Grads {
         return {leaky_relu_grad(c.grad(), c.in[1], alpha_of(c)), zeros_like(c.grad())};
     },
     kBatchable,
     jvp_linear_in_first},
    // The smooth activations: element-wise primitives (the unary kernel table); the derivatives are
    // written with public ops, so every order is differentiable.
    {Op::gelu,
     Save::inputs,  // Phi(x) + x phi(x), phi the standard normal density
     [](const GradCtx& c) -> Grads {
         const Tensor& x = c.in[0];
         const Tensor z = multiply(x, scalar_like(x, kSqrtHalf));
         const Tensor cdf = multiply(scalar_like(x, 0.5), add(scalar_like(x, 1), erf(z)));
         const Tensor pdf =
             multiply(scalar_like(x, kInvSqrt2Pi), exp(multiply(scalar_like(x, -0.5), square(x))));
         return {multiply(c.grad(), add(cdf, multiply(x, pdf)))};
     },
     kBatchable,
     jvp_self_adjoint},
    {Op::gelu_approximate,
     Save::inputs,  // (1 + t) / 2 + x (1 - t^2) k (1 + 3 a x^2) / 2, t = tanh(k (x + a x^3))
     [](const GradCtx& c) -> Grads {
         const Tensor& x = c.in[0];
         const Tensor x2 = square(x);
         const Tensor t = tanh(multiply(scalar_like(x, kGeluK),
                                        add(x, multiply(scalar_like(x, kGeluA), multiply(x2, x)))));
         const Tensor one = scalar_like(x, 1);
         const Tensor dinner =
             multiply(scalar_like(x, kGeluK), add(one, multiply(scalar_like(x, 3 * kGeluA), x2)));
         const Tensor d = add(add(one, t), multiply(multiply(x, subtract(one, square(t))), dinner));
         return {multiply(c.grad(), multiply(scalar_like(x, 0.5), d))};
     },
     kBatchable,
     jvp_self_adjoint},
    {Op::silu,
     Save::inputs,  // s (1 + x (1 - s)), s = sigmoid(x)
     [](const GradCtx& c) -> Grads {
         const Tensor& x = c.in[0];
         const Tensor s = sigmoid(x);
         const Tensor one = scalar_like(x, 1);
         return {multiply(c.grad(), multiply(s, add(one, multiply(x, subtract(one, s)))))};
     },
     kBatchable,
     jvp_self_adjoint},
    {Op::softsign,
     Save::inputs,  // 1 / (1 + |x|)^2 (TF SoftsignGrad)
     [](const GradCtx& c) -> Grads {
         const Tensor& x = c.in[0];
         return {divide(c.grad(), square(add(scalar_like(x, 1), abs(x))))};
     },
     kBatchable,
     jvp_self_adjoint},
    {Op::log_sigmoid,
     Save::inputs,  // sigmoid(-x)
     [](const GradCtx& c) -> Grads { return {multiply(c.grad(), sigmoid(negative(c.in[0])))}; },
     kBatchable,
     jvp_self_adjoint},
    {Op::softmax, Save::output, softmax_grad, kBatchable, jvp_self_adjoint},  // J = diag(y) - y y^T
    {Op::log_softmax,
     Save::output,
     log_softmax_grad,
     kBatchable,
     log_softmax_jvp},  // J = I - 1 softmax^T
};

}  // namespace

std::span<const OpDef> nn_activation_op_defs() {
    return kActivationOps;
}

namespace nn {

Tensor relu(const Tensor& x) {
    return activation(Op::relu, x);
}
Tensor relu6(const Tensor& x) {
    return activation(Op::relu6, x);
}
Tensor elu(const Tensor& x) {
    return activation(Op::elu, x);
}
Tensor selu(const Tensor& x) {
    return activation(Op::selu, x);
}
Tensor leaky_relu(const Tensor& x, double alpha) {
    return activation(Op::leaky_relu, x, Attrs().set("alpha", alpha));
}
Tensor softplus(const Tensor& x) {
    return tapeflow::softplus(x);
}
Tensor sigmoid(const Tensor& x) {
    return tapeflow::sigmoid(x);
}
Tensor tanh(const Tensor& x) {
    return tapeflow::tanh(x);
}
Tensor gelu(const Tensor& x, bool approximate) {
    return activation(approximate ? Op::gelu_approximate : Op::gelu, x);
}
Tensor silu(const Tensor& x) {
    return activation(Op::silu, x);
}
Tensor swish(const Tensor& x) {
    return silu(x);
}
Tensor softsign(const Tensor& x) {
    return activation(Op::softsign, x);
}
Tensor log_sigmoid(const Tensor& x) {
    return activation(Op::log_sigmoid, x);
}
Tensor softmax(const Tensor& logits, int64_t axis) {
    return softmax_like(Op::softmax, logits, axis);
}
Tensor log_softmax(const Tensor& logits, int64_t axis) {
    return softmax_like(Op::log_softmax, logits, axis);
}

}  // namespace nn

Tensor math::log_sigmoid(const Tensor& x) {
    return nn::log_sigmoid(x);
}

}  // namespace tapeflow
