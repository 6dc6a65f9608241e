// Element-wise ops: the public wrappers of include/tapeflow/ops/math.hpp (arithmetic, unary math,
// comparisons, logic, where) and their gradient rows, which follow TensorFlow's math_grad.py.
// Wrappers check dtypes and broadcast the shapes before apply(); formulas return gradients in the
// output's (broadcast) shape, and the engine sums them down (NOTE [Un-broadcasting]).
// CPU kernels: lib/kernels/cpu/{elementwise,unary,compare}_cpu.cpp.
#include <numbers>
#include <string>
#include <utility>

#include <tapeflow/ops/creation.hpp>
#include <tapeflow/ops/math.hpp>

#include "core/dtype_dispatch.hpp"
#include "core/python_repr.hpp"
#include "ops/apply.hpp"
#include "ops/number_conversion.hpp"
#include "ops/op_families.hpp"

namespace tapeflow {
namespace {

[[noreturn]] void undefined_input(Op op, std::size_t index) {
    op_fail(op, "input {} of '{}' is an undefined tensor", index, op_name(op));
}

// The hot path of every binary op: two checks, one broadcast, one apply(). Equal shapes skip the
// broadcast computation.
Tensor binary(Op op, const Tensor& x, const Tensor& y, DType out_dtype) {
    if (!x.defined()) undefined_input(op, 0);
    if (!y.defined()) undefined_input(op, 1);
    if (y.dtype() != x.dtype()) fail_input_dtype(op, 1, x.dtype(), y.dtype());
    const Shape& xs = x.shape();
    Shape shape = xs == y.shape() ? xs : broadcast_shapes(xs, y.shape(), op_type(op));
    return apply(op, {x, y}, {std::move(shape), out_dtype});  // the shape moves into the output
}

Tensor arithmetic(Op op, const Tensor& x, const Tensor& y) {
    if (!x.defined()) undefined_input(op, 0);
    return binary(op, x, y, x.dtype());
}

Tensor comparison(Op op, const Tensor& x, const Tensor& y) {
    return binary(op, x, y, DType::bool_);
}

Tensor logical(Op op, const Tensor& x, const Tensor& y) {
    if (!x.defined()) undefined_input(op, 0);
    if (!y.defined()) undefined_input(op, 1);
    if (x.dtype() != DType::bool_) fail_input_dtype(op, 0, DType::bool_, x.dtype());
    if (y.dtype() != DType::bool_) fail_input_dtype(op, 1, DType::bool_, y.dtype());
    return binary(op, x, y, DType::bool_);
}

Tensor unary(Op op, const Tensor& x) {
    if (!x.defined()) undefined_input(op, 0);
    return apply(op, {x}, {x.shape(), x.dtype()});
}

bool broadcastable(const Shape& a, const Shape& b) {
    const auto& da = a.dims();
    const auto& db = b.dims();
    for (std::size_t i = 1; i <= std::min(da.size(), db.size()); ++i) {
        const int64_t x = da[da.size() - i];
        const int64_t y = db[db.size() - i];
        if (x != y && x != 1 && y != 1) return false;
    }
    return true;
}

}  // namespace

Tensor scalar_like(const Tensor& like, double value) {
    if (!like.defined()) {
        throw errors::InvalidArgumentError("scalar_like: the tensor is undefined");
    }
    const DType dtype = like.dtype();
    if (!like.device().is_cpu()) {
        const DeviceScope scope(like.device());
        return fill(Shape{}, value, dtype);
    }
    // Written directly: a scalar operand must not cost a kernel dispatch (x + 1 pays for one op).
    Tensor t = Tensor::empty(Shape{}, dtype);
    visit_dtype(dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        *static_cast<T*>(t.mutable_raw_data()) = convert_element<T>(value);
    });
    return t;
}

namespace detail {
namespace {

// The exact integer scalar `value` in `like`'s integer dtype, on its device.
template <class I>
Tensor exact_integer(const Tensor& like, I value) {
    const DType dtype = like.dtype();
    const bool fits = visit_dtype(dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
            return std::in_range<T>(value);
        } else {
            return false;
        }
    });
    if (!fits) cannot_convert(std::to_string(value), dtype);
    Tensor t = Tensor::empty(Shape{}, dtype);
    visit_dtype(dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (std::is_integral_v<T>) *static_cast<T*>(t.mutable_raw_data()) = T(value);
    });
    return like.device().is_cpu() ? t : t.to(like.device());
}

template <class F>
Tensor floating(const Tensor& like, F value) {
    if (!like.defined()) return scalar_like(like, value);  // raises its error
    if (is_integer(like.dtype()) || like.dtype() == DType::bool_) {
        cannot_convert(python_repr(value), like.dtype());
    }
    return scalar_like(like, static_cast<double>(value));
}

template <class I>
Tensor integer(const Tensor& like, I value) {
    if (!like.defined()) return scalar_like(like, 0);  // raises its error
    if (like.dtype() == DType::bool_) cannot_convert(std::to_string(value), like.dtype());
    if (is_integer(like.dtype())) return exact_integer(like, value);
    return scalar_like(like, static_cast<double>(value));
}

}  // namespace

Tensor float_operand(const Tensor& like, double value) {
    return floating(like, value);
}
Tensor float_operand(const Tensor& like, float value) {
    return floating(like, value);
}
Tensor int_operand(const Tensor& like, int64_t value) {
    return integer(like, value);
}
Tensor uint_operand(const Tensor& like, uint64_t value) {
    return integer(like, value);
}
Tensor bool_operand(const Tensor& like, bool value) {
    return scalar_like(like, value ? 1.0 : 0.0);  // as before: true is 1 for every dtype
}

}  // namespace detail

// ---- binary arithmetic ----

Tensor add(const Tensor& x, const Tensor& y) {
    return arithmetic(Op::add, x, y);
}
Tensor subtract(const Tensor& x, const Tensor& y) {
    return arithmetic(Op::subtract, x, y);
}
Tensor multiply(const Tensor& x, const Tensor& y) {
    return arithmetic(Op::multiply, x, y);
}
// TensorFlow's truediv casts integers to a float first (math_ops._TRUEDIV_TABLE: 8- and 16-bit
// integers to float32, wider ones to float64), then runs RealDiv: integer x / 0 is inf or NaN.
Tensor divide(const Tensor& x, const Tensor& y) {
    if (x.defined() && y.defined() && x.dtype() == y.dtype() && is_integer(x.dtype())) {
        const DType to = x.dtype() == DType::uint8 ? DType::float32 : DType::float64;
        return arithmetic(Op::divide, cast(x, to), cast(y, to));
    }
    return arithmetic(Op::divide, x, y);
}
Tensor truediv(const Tensor& x, const Tensor& y) {
    return divide(x, y);
}
Tensor floordiv(const Tensor& x, const Tensor& y) {
    return arithmetic(Op::floordiv, x, y);
}
Tensor floormod(const Tensor& x, const Tensor& y) {
    return arithmetic(Op::floormod, x, y);
}
Tensor pow(const Tensor& x, const Tensor& y) {
    return arithmetic(Op::pow, x, y);
}
Tensor maximum(const Tensor& x, const Tensor& y) {
    return arithmetic(Op::maximum, x, y);
}
Tensor minimum(const Tensor& x, const Tensor& y) {
    return arithmetic(Op::minimum, x, y);
}
Tensor squared_difference(const Tensor& x, const Tensor& y) {
    return arithmetic(Op::squared_difference, x, y);
}
Tensor divide_no_nan(const Tensor& x, const Tensor& y) {
    return arithmetic(Op::divide_no_nan, x, y);
}

Tensor add_n(const std::vector<Tensor>& inputs) {
    if (inputs.empty()) op_fail(Op::add_n, "add_n needs a non-empty list of tensors");
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        if (!inputs[i].defined()) undefined_input(Op::add_n, i);
    }
    const Tensor& first = inputs[0];
    for (std::size_t i = 1; i < inputs.size(); ++i) {
        if (inputs[i].dtype() != first.dtype())
            fail_input_dtype(Op::add_n, i, first.dtype(), inputs[i].dtype());
        if (inputs[i].shape() != first.shape()) {
            op_fail(Op::add_n,
                    "Inputs to operation AddN of type AddN must have the same size and shape.  "
                    "Input 0: {} != input {}: {}",
                    first.shape().debug_string(),
                    i,
                    inputs[i].shape().debug_string());
        }
    }
    return apply(Op::add_n, std::span<const Tensor>(inputs), {first.shape(), first.dtype()});
}

// ---- unary ----

Tensor negative(const Tensor& x) {
    return unary(Op::negative, x);
}
Tensor abs(const Tensor& x) {
    return unary(Op::abs, x);
}
Tensor sign(const Tensor& x) {
    return unary(Op::sign, x);
}
Tensor exp(const Tensor& x) {
    return unary(Op::exp, x);
}
Tensor expm1(const Tensor& x) {
    return unary(Op::expm1, x);
}
Tensor log(const Tensor& x) {
    return unary(Op::log, x);
}
Tensor log1p(const Tensor& x) {
    return unary(Op::log1p, x);
}
Tensor sqrt(const Tensor& x) {
    return unary(Op::sqrt, x);
}
Tensor rsqrt(const Tensor& x) {
    return unary(Op::rsqrt, x);
}
Tensor square(const Tensor& x) {
    return unary(Op::square, x);
}
Tensor reciprocal(const Tensor& x) {
    return unary(Op::reciprocal, x);
}
Tensor sin(const Tensor& x) {
    return unary(Op::sin, x);
}
Tensor cos(const Tensor& x) {
    return unary(Op::cos, x);
}
Tensor tanh(const Tensor& x) {
    return unary(Op::tanh, x);
}
Tensor sigmoid(const Tensor& x) {
    return unary(Op::sigmoid, x);
}
Tensor erf(const Tensor& x) {
    return unary(Op::erf, x);
}
Tensor floor(const Tensor& x) {
    return unary(Op::floor, x);
}
Tensor ceil(const Tensor& x) {
    return unary(Op::ceil, x);
}
Tensor round(const Tensor& x) {
    return unary(Op::round, x);
}
Tensor softplus(const Tensor& x) {
    return unary(Op::softplus, x);
}

// ---- comparison and logic ----

Tensor equal(const Tensor& x, const Tensor& y) {
    return comparison(Op::equal, x, y);
}
Tensor not_equal(const Tensor& x, const Tensor& y) {
    return comparison(Op::not_equal, x, y);
}
Tensor less(const Tensor& x, const Tensor& y) {
    return comparison(Op::less, x, y);
}
Tensor less_equal(const Tensor& x, const Tensor& y) {
    return comparison(Op::less_equal, x, y);
}
Tensor greater(const Tensor& x, const Tensor& y) {
    return comparison(Op::greater, x, y);
}
Tensor greater_equal(const Tensor& x, const Tensor& y) {
    return comparison(Op::greater_equal, x, y);
}
Tensor logical_and(const Tensor& x, const Tensor& y) {
    return logical(Op::logical_and, x, y);
}
Tensor logical_or(const Tensor& x, const Tensor& y) {
    return logical(Op::logical_or, x, y);
}

Tensor logical_not(const Tensor& x) {
    if (!x.defined()) undefined_input(Op::logical_not, 0);
    if (x.dtype() != DType::bool_) fail_input_dtype(Op::logical_not, 0, DType::bool_, x.dtype());
    return unary(Op::logical_not, x);
}

Tensor where(const Tensor& cond, const Tensor& x, const Tensor& y) {
    constexpr Op op = Op::where;
    if (!cond.defined()) undefined_input(op, 0);
    if (!x.defined()) undefined_input(op, 1);
    if (!y.defined()) undefined_input(op, 2);
    if (cond.dtype() != DType::bool_) fail_input_dtype(op, 0, DType::bool_, cond.dtype());
    if (y.dtype() != x.dtype()) fail_input_dtype(op, 2, x.dtype(), y.dtype());
    // TensorFlow's SelectV2 messages.
    if (!broadcastable(x.shape(), y.shape())) {
        op_fail(op,
                "then {} and else {} must be broadcastable",
                x.shape().debug_string(),
                y.shape().debug_string());
    }
    const Shape xy = broadcast_shapes(x.shape(), y.shape(), op_type(op));
    if (!broadcastable(cond.shape(), xy)) {
        op_fail(op,
                "condition {}, then {}, and else {} must be broadcastable",
                cond.shape().debug_string(),
                x.shape().debug_string(),
                y.shape().debug_string());
    }
    return apply(op, {cond, x, y}, {broadcast_shapes(cond.shape(), xy, op_type(op)), x.dtype()});
}

// ---- gradient rows (TensorFlow's math_grad.py) ----

namespace {

Tensor scalar(const Tensor& like, double value) {
    return scalar_like(like, value);
}

// TF _PowGrad. d/dy is x^y log x where x > 0 and 0 elsewhere: there is no real value to give for
// x < 0, and where() keeps log(0) = -inf from turning 0 * -inf into NaN at x = 0.
Grads pow_grad(const GradCtx& c) {
    const Tensor& g = c.grad();
    const Tensor& x = c.in[0];
    const Tensor& y = c.in[1];
    const Tensor& z = c.out[0];
    const Tensor gx = multiply(multiply(g, y), pow(x, subtract(y, scalar(y, 1))));
    const Tensor mask = greater(x, scalar(x, 0));
    const Tensor log_x = where(mask, log(where(mask, x, scalar(x, 1))), scalar(x, 0));
    return {gx, multiply(multiply(g, z), log_x)};
}

// TF _MaximumGrad / _MinimumGrad: the whole gradient goes to x where x >= y (x <= y), so ties go
// to the first argument.
template <bool kMaximum>
Grads max_min_grad(const GradCtx& c) {
    const Tensor& g = c.grad();
    const Tensor xmask = kMaximum ? greater_equal(c.in[0], c.in[1]) : less_equal(c.in[0], c.in[1]);
    const Tensor zero = scalar(g, 0);
    return {where(xmask, g, zero), where(xmask, zero, g)};
}

// TF SqrtGrad: 0.5 g / y, but 0 where g == 0 (so sqrt(0) with no upstream gives 0, not NaN;
// with upstream it gives inf).
Grads sqrt_grad(const GradCtx& c) {
    const Tensor& g = c.grad();
    const Tensor zero = scalar(g, 0);
    return {where(equal(g, zero), zero, divide(multiply(g, scalar(g, 0.5)), c.out[0]))};
}

// d(x/y) = (t_x - z t_y) / y, z = x/y.
Tangents divide_jvp(const JvpCtx& c) {
    const Tensor& y = c.in[1];
    Tensor num = c.has(0) ? c.t(0) : Tensor();
    if (c.has(1)) {
        const Tensor zt = multiply(c.out[0], c.t(1));
        num = num.defined() ? subtract(num, zt) : negative(zt);
    }
    return {divide(num, y)};
}

// d sqrt(x) = t / (2 sqrt(x)) (the gradient's g == 0 guard would cut the tangent's derivative).
Tangents sqrt_jvp(const JvpCtx& c) {
    return {divide(multiply(c.t(0), scalar(c.t(0), 0.5)), c.out[0])};
}

Grads add_n_grad(const GradCtx& c) {
    return Grads(c.in_meta.size(), Gradient(c.grad()));
}

// Each row: {op, what the tape keeps, formula}; g = c.grad(), x/y = c.in, y (unary) = c.out[0].
const OpDef kElementwiseOps[] = {
    {Op::add,
     Save::nothing,
     [](const GradCtx& c) -> Grads {
         return {c.grad(), c.grad()};
     },
     kBatchable,
     jvp_self_adjoint},
    {Op::subtract,
     Save::nothing,
     [](const GradCtx& c) -> Grads {
         return {c.grad(), negative(c.grad())};
     },
     kBatchable,
     jvp_self_adjoint},
    {Op::multiply,
     Save::inputs,  // (xy)' = (y, x)
     [](const GradCtx& c) -> Grads {
         return {multiply(c.grad(), c.in[1]), multiply(c.in[0], c.grad())};
     },
     kBatchable,
     jvp_bilinear},
    {Op::divide,
     Save::inputs,  // (x/y)' = (1/y, -x/y^2)
     [](const GradCtx& c) -> Grads {
         const Tensor& g = c.grad();
         const Tensor& y = c.in[1];
         return {divide(g, y), multiply(g, divide(divide(negative(c.in[0]), y), y))};
     },
     kBatchable,
     divide_jvp},
    {Op::floordiv, Save::nothing, nullptr},  // piecewise constant: TF gives None
    {Op::floormod,
     Save::inputs,  // x - floor(x/y) y: (1, -floor(x/y))
     [](const GradCtx& c) -> Grads {
         return {c.grad(), multiply(c.grad(), negative(floordiv(c.in[0], c.in[1])))};
     },
     kBatchable,
     jvp_self_adjoint},
    {Op::pow,
     Save::inputs_and_output,
     pow_grad,
     kBatchable,
     jvp_self_adjoint},  // (x^y)' = (y x^(y-1), x^y ln x)
    {Op::maximum, Save::inputs, max_min_grad<true>, kBatchable, jvp_self_adjoint},
    {Op::minimum, Save::inputs, max_min_grad<false>, kBatchable, jvp_self_adjoint},
    {Op::squared_difference,
     Save::inputs,  // ((x-y)^2)' = (2(x-y), -2(x-y))
     [](const GradCtx& c) -> Grads {
         const Tensor d =
             multiply(multiply(scalar(c.grad(), 2), c.grad()), subtract(c.in[0], c.in[1]));
         return {d, negative(d)};
     },
     kBatchable,
     jvp_self_adjoint},
    {Op::divide_no_nan,
     Save::inputs,  // as divide, with 0 wherever y == 0
     [](const GradCtx& c) -> Grads {
         const Tensor& g = c.grad();
         const Tensor& y = c.in[1];
         return {divide_no_nan(g, y),
                 multiply(g, divide_no_nan(divide_no_nan(negative(c.in[0]), y), y))};
     },
     kBatchable,
     jvp_self_adjoint},
    {Op::add_n, Save::nothing, add_n_grad, kBatchable, jvp_self_adjoint},
    {Op::negative,
     Save::nothing,
     [](const GradCtx& c) -> Grads { return {negative(c.grad())}; },
     kBatchable,
     jvp_self_adjoint},
    {Op::abs,
     Save::inputs,  // |x|' = sign(x)
     [](const GradCtx& c) -> Grads { return {multiply(c.grad(), sign(c.in[0]))}; },
     kBatchable,
     jvp_self_adjoint},
    {Op::sign,
     Save::nothing,  // TF gives zeros, not None
     [](const GradCtx& c) -> Grads { return {zeros_like(c.grad())}; },
     kBatchable,
     jvp_self_adjoint},
    {Op::exp,
     Save::output,  // (e^x)' = e^x
     [](const GradCtx& c) -> Grads { return {multiply(c.grad(), c.out[0])}; },
     kBatchable,
     jvp_self_adjoint},
    {Op::expm1,
     Save::inputs,  // (e^x - 1)' = e^x
     [](const GradCtx& c) -> Grads { return {multiply(c.grad(), exp(c.in[0]))}; },
     kBatchable,
     jvp_self_adjoint},
    {Op::log,
     Save::inputs,  // (ln x)' = 1/x
     [](const GradCtx& c) -> Grads { return {multiply(c.grad(), reciprocal(c.in[0]))}; },
     kBatchable,
     jvp_self_adjoint},
    {Op::log1p,
     Save::inputs,  // ln(1+x)' = 1/(1+x)
     [](const GradCtx& c) -> Grads {
         const Tensor& x = c.in[0];
         return {multiply(c.grad(), reciprocal(add(scalar(x, 1), x)))};
     },
     kBatchable,
     jvp_self_adjoint},
    {Op::sqrt, Save::output, sqrt_grad, kBatchable, sqrt_jvp},  // (sqrt x)' = 0.5 / sqrt(x)
    {Op::rsqrt,
     Save::output,  // (x^-1/2)' = -0.5 y^3
     [](const GradCtx& c) -> Grads {
         const Tensor& y = c.out[0];
         return {multiply(multiply(scalar(y, -0.5), multiply(c.grad(), y)), multiply(y, y))};
     },
     kBatchable,
     jvp_self_adjoint},
    {Op::square,
     Save::inputs,  // (x^2)' = 2x
     [](const GradCtx& c) -> Grads {
         return {multiply(c.grad(), multiply(scalar(c.in[0], 2), c.in[0]))};
     },
     kBatchable,
     jvp_self_adjoint},
    {Op::reciprocal,
     Save::output,  // (1/x)' = -y^2
     [](const GradCtx& c) -> Grads {
         const Tensor& y = c.out[0];
         return {multiply(multiply(negative(c.grad()), y), y)};
     },
     kBatchable,
     jvp_self_adjoint},
    {Op::sin,
     Save::inputs,  // sin' = cos
     [](const GradCtx& c) -> Grads { return {multiply(c.grad(), cos(c.in[0]))}; },
     kBatchable,
     jvp_self_adjoint},
    {Op::cos,
     Save::inputs,  // cos' = -sin
     [](const GradCtx& c) -> Grads { return {multiply(negative(c.grad()), sin(c.in[0]))}; },
     kBatchable,
     jvp_self_adjoint},
    {Op::tanh,
     Save::output,  // tanh' = 1 - y^2
     [](const GradCtx& c) -> Grads {
         const Tensor& y = c.out[0];
         return {multiply(c.grad(), subtract(scalar(y, 1), multiply(y, y)))};
     },
     kBatchable,
     jvp_self_adjoint},
    {Op::sigmoid,
     Save::output,  // sigmoid' = y (1 - y)
     [](const GradCtx& c) -> Grads {
         const Tensor& y = c.out[0];
         return {multiply(multiply(c.grad(), y), subtract(scalar(y, 1), y))};
     },
     kBatchable,
     jvp_self_adjoint},
    {Op::erf,
     Save::inputs,  // erf' = 2/sqrt(pi) e^(-x^2)
     [](const GradCtx& c) -> Grads {
         const Tensor& x = c.in[0];
         const Tensor k = scalar(x, 2 * std::numbers::inv_sqrtpi);
         return {multiply(multiply(c.grad(), k), exp(negative(square(x))))};
     },
     kBatchable,
     jvp_self_adjoint},
    {Op::floor, Save::nothing, nullptr},  // TF gives None for floor, ceil and round
    {Op::ceil, Save::nothing, nullptr},
    {Op::round, Save::nothing, nullptr},
    {Op::softplus,
     Save::inputs,  // TF SoftplusGrad: g / (e^-x + 1) = g sigmoid(x)
     [](const GradCtx& c) -> Grads {
         const Tensor& x = c.in[0];
         return {divide(c.grad(), add(exp(negative(x)), scalar(x, 1)))};
     },
     kBatchable,
     jvp_self_adjoint},
    {Op::equal, Save::nothing, nullptr},
    {Op::not_equal, Save::nothing, nullptr},
    {Op::less, Save::nothing, nullptr},
    {Op::less_equal, Save::nothing, nullptr},
    {Op::greater, Save::nothing, nullptr},
    {Op::greater_equal, Save::nothing, nullptr},
    {Op::logical_and, Save::nothing, nullptr},
    {Op::logical_or, Save::nothing, nullptr},
    {Op::logical_not, Save::nothing, nullptr},
    {Op::where,
     Save::inputs,  // TF _SelectGradV2: nothing to cond; g where chosen, else 0
     [](const GradCtx& c) -> Grads {
         const Tensor& g = c.grad();
         const Tensor& cond = c.in[0];
         const Tensor zero = scalar(g, 0);
         return {Gradient(), where(cond, g, zero), where(cond, zero, g)};
     },
     kBatchable,
     jvp_self_adjoint},
};

}  // namespace

std::span<const OpDef> elementwise_op_defs() {
    return kElementwiseOps;
}

}  // namespace tapeflow
