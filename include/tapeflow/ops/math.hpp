// Math ops: element-wise arithmetic with NumPy broadcasting, comparisons and
// logic, reductions, scans and matmul. Inputs of a binary op must have equal dtypes
// (InvalidArgumentError otherwise); shapes must broadcast ("Incompatible shapes: [2,3] vs. [4]").
// Gradients follow TensorFlow's rules; integer and bool results have none.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <vector>

#include <tapeflow/core/export.hpp>
#include <tapeflow/core/tensor.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow {

/// Axes argument of reductions: default-constructed (or `{}`) means every axis (TensorFlow's
/// axis=None); an explicitly empty vector means no axis. Negative axes count from the end.
class Axes {
public:
    Axes() = default;
    Axes(int64_t axis) : axes_(std::vector<int64_t>{axis}) {}  // NOLINT: implicit by design
    Axes(std::initializer_list<int64_t> axes) : axes_(std::vector<int64_t>(axes)) {
        if (axes.size() == 0) axes_.reset();  // `{}` is "all axes", as in the API
    }
    Axes(std::vector<int64_t> axes) : axes_(std::move(axes)) {}  // NOLINT: implicit by design
    bool all() const { return !axes_.has_value(); }
    /// The listed axes (empty when all()).
    const std::vector<int64_t>& list() const {
        static const std::vector<int64_t> kNone;
        return axes_ ? *axes_ : kNone;
    }

private:
    std::optional<std::vector<int64_t>> axes_;
};

/// A scalar tensor with `value` converted to the dtype of `like`, on its device.
Tensor scalar_like(const Tensor& like, double value);

// ---- Element-wise binary (broadcasting) ----
// x and y must have one dtype (InvalidArgumentError naming both and the op otherwise) and shapes
// that broadcast ("Incompatible shapes: [2,3] vs. [4] [Op:AddV2]"). Unless noted, they take
// float32, float64, float16, bfloat16, int32, int64 and uint8; integers wrap around on overflow.
// Gradients (float dtypes only) follow TensorFlow's math_grad.py.

/// x + y (TF AddV2).
Tensor add(const Tensor& x, const Tensor& y);
/// x - y (TF Sub).
Tensor subtract(const Tensor& x, const Tensor& y);
/// x * y (TF Mul).
Tensor multiply(const Tensor& x, const Tensor& y);
/// x / y, TensorFlow's truediv (tf.math.divide, Python's /): floats divide in their dtype;
/// integers are cast first, uint8 to float32, int32 and int64 to float64, and then divided (so
/// 1 / 0 is inf, as in TensorFlow). bool raises InvalidArgumentError.
Tensor divide(const Tensor& x, const Tensor& y);
/// The same as divide (tf.math.truediv).
Tensor truediv(const Tensor& x, const Tensor& y);
/// floor(x / y) (Python's //). No gradient (None). Integer division by zero raises
/// InvalidArgumentError.
Tensor floordiv(const Tensor& x, const Tensor& y);
/// x - floordiv(x, y) * y: the result has the sign of y (Python's %). Gradient (g, -g floor(x/y)).
Tensor floormod(const Tensor& x, const Tensor& y);
/// x^y (float, int32, int64). The gradient w.r.t. y is 0 where x <= 0 (TF masks log(x));
/// negative integer exponents of integers raise InvalidArgumentError.
Tensor pow(const Tensor& x, const Tensor& y);
/// Element-wise maximum (NaN from either side propagates); the gradient of a tie goes to x.
Tensor maximum(const Tensor& x, const Tensor& y);
/// Element-wise minimum (NaN from either side propagates); the gradient of a tie goes to x.
Tensor minimum(const Tensor& x, const Tensor& y);
/// (x - y)^2 (float, int32, int64).
Tensor squared_difference(const Tensor& x, const Tensor& y);
/// x / y, and 0 where y == 0, for the value and both gradients (floating dtypes only).
Tensor divide_no_nan(const Tensor& x, const Tensor& y);
/// Sum of tensors of one shape and dtype (no broadcasting), in one op, left to right. An empty
/// list, or a shape or dtype mismatch, raises InvalidArgumentError.
Tensor add_n(const std::vector<Tensor>& inputs);

// ---- Element-wise unary ----
// Floating dtypes (float32, float64, float16, bfloat16); negative, abs, sign, square and round
// also take int32 and int64. Another dtype raises UnimplementedError naming the op and dtype.

/// -x (TF Neg).
Tensor negative(const Tensor& x);
/// |x|; the gradient is g * sign(x) (0 at 0).
Tensor abs(const Tensor& x);
/// -1, 0 or 1 (NaN stays NaN); the gradient is zeros, not None, as in TensorFlow.
Tensor sign(const Tensor& x);
/// e^x.
Tensor exp(const Tensor& x);
/// e^x - 1, accurate near 0.
Tensor expm1(const Tensor& x);
/// Natural logarithm.
Tensor log(const Tensor& x);
/// log(1 + x), accurate near 0.
Tensor log1p(const Tensor& x);
/// Square root; its gradient at 0 is inf, as in TensorFlow (0 where the upstream gradient is 0).
Tensor sqrt(const Tensor& x);
/// 1 / sqrt(x).
Tensor rsqrt(const Tensor& x);
/// x * x.
Tensor square(const Tensor& x);
/// 1 / x.
Tensor reciprocal(const Tensor& x);
/// Sine (radians).
Tensor sin(const Tensor& x);
/// Cosine (radians).
Tensor cos(const Tensor& x);
/// Hyperbolic tangent; the gradient 1 - y^2 reuses the output.
Tensor tanh(const Tensor& x);
/// 1 / (1 + e^-x); the gradient y (1 - y) reuses the output.
Tensor sigmoid(const Tensor& x);
/// The error function.
Tensor erf(const Tensor& x);
/// Rounds toward -inf. No gradient (None), as in TensorFlow.
Tensor floor(const Tensor& x);
/// Rounds toward +inf. No gradient (None).
Tensor ceil(const Tensor& x);
/// Rounds half to even (banker's rounding), as tf.round. No gradient (None).
Tensor round(const Tensor& x);
/// log(1 + exp(x)), computed stably as max(x, 0) + log1p(exp(-|x|)); the gradient is sigmoid(x).
Tensor softplus(const Tensor& x);

// ---- Comparison and logic (bool results, no gradient) ----
// Comparisons broadcast like the arithmetic ops; equal and not_equal also take bool, the ordering
// comparisons every numeric dtype.

/// x == y (NaN is unequal to everything).
Tensor equal(const Tensor& x, const Tensor& y);
/// x != y.
Tensor not_equal(const Tensor& x, const Tensor& y);
/// x < y.
Tensor less(const Tensor& x, const Tensor& y);
/// x <= y.
Tensor less_equal(const Tensor& x, const Tensor& y);
/// x > y.
Tensor greater(const Tensor& x, const Tensor& y);
/// x >= y.
Tensor greater_equal(const Tensor& x, const Tensor& y);
/// x and y, broadcasting; both must be bool (InvalidArgumentError otherwise).
Tensor logical_and(const Tensor& x, const Tensor& y);
/// x or y, broadcasting; both must be bool.
Tensor logical_or(const Tensor& x, const Tensor& y);
/// not x; x must be bool.
Tensor logical_not(const Tensor& x);
/// x where cond is true, else y; the three shapes broadcast (tf.where with x and y, TF SelectV2).
/// cond must be bool, x and y of one dtype (any). The gradient is where(cond, g, 0) for x,
/// where(cond, 0, g) for y, and none for cond.
Tensor where(const Tensor& cond, const Tensor& x, const Tensor& y);

// ---- Reductions ----
Tensor reduce_sum(const Tensor& x, Axes axis = {}, bool keepdims = false);
Tensor reduce_mean(const Tensor& x, Axes axis = {}, bool keepdims = false);
/// Maximum; the gradient is split evenly among tied maxima.
Tensor reduce_max(const Tensor& x, Axes axis = {}, bool keepdims = false);
Tensor reduce_min(const Tensor& x, Axes axis = {}, bool keepdims = false);
Tensor reduce_prod(const Tensor& x, Axes axis = {}, bool keepdims = false);
/// log(sum(exp(x))), computed stably.
Tensor reduce_logsumexp(const Tensor& x, Axes axis = {}, bool keepdims = false);
Tensor reduce_variance(const Tensor& x, Axes axis = {}, bool keepdims = false);
Tensor reduce_std(const Tensor& x, Axes axis = {}, bool keepdims = false);
/// Logical or / and over bool tensors.
Tensor reduce_any(const Tensor& x, Axes axis = {}, bool keepdims = false);
Tensor reduce_all(const Tensor& x, Axes axis = {}, bool keepdims = false);
/// Index of the largest value along `axis` (the first one on ties).
Tensor argmax(const Tensor& x, int64_t axis = 0, DType output_type = DType::int64);
Tensor argmin(const Tensor& x, int64_t axis = 0, DType output_type = DType::int64);
/// Cumulative sum along `axis`; `exclusive` starts at 0, `reverse` sums from the end.
Tensor cumsum(const Tensor& x, int64_t axis = 0, bool exclusive = false, bool reverse = false);
/// Cumulative product along `axis` (tf.math.cumprod); `exclusive` starts at 1, `reverse` multiplies
/// from the end. Its gradient is TensorFlow's, which divides by x (div_no_nan: 0 where x == 0).
Tensor cumprod(const Tensor& x, int64_t axis = 0, bool exclusive = false, bool reverse = false);

// ---- Linear algebra ----
/// Matrix product of the last two axes, batch axes broadcasting (float32 and float64 use BLAS).
Tensor matmul(const Tensor& a, const Tensor& b, bool transpose_a = false, bool transpose_b = false);

// ---- Operators: a Tensor with a Tensor or an arithmetic scalar ----
template <class S>
concept ArithmeticScalar = std::is_arithmetic_v<S>;

namespace detail {
/// The tensor a C++ number becomes next to `like` in an operator, converted to like's dtype as
/// TensorFlow converts a Python number: a floating-point number with an integer or bool tensor
/// raises InvalidArgumentError ("Cannot convert 2.5 to EagerTensor of dtype int32", also for 5.0),
/// as does an integer that does not fit an integer dtype or any non-bool number with a bool
/// tensor. Every other pair converts as scalar_like does.
Tensor float_operand(const Tensor& like, double value);
Tensor float_operand(const Tensor& like, float value);
Tensor int_operand(const Tensor& like, int64_t value);
Tensor uint_operand(const Tensor& like, uint64_t value);
Tensor bool_operand(const Tensor& like, bool value);

template <ArithmeticScalar S>
Tensor scalar_operand(const Tensor& like, S s) {
    if constexpr (std::is_same_v<S, bool>) {
        return bool_operand(like, s);
    } else if constexpr (std::is_same_v<S, float>) {
        return float_operand(like, s);
    } else if constexpr (std::is_floating_point_v<S>) {
        return float_operand(like, static_cast<double>(s));
    } else if constexpr (std::is_signed_v<S>) {
        return int_operand(like, static_cast<int64_t>(s));
    } else {
        return uint_operand(like, static_cast<uint64_t>(s));
    }
}
}  // namespace detail

inline Tensor operator+(const Tensor& x, const Tensor& y) {
    return add(x, y);
}
inline Tensor operator-(const Tensor& x, const Tensor& y) {
    return subtract(x, y);
}
inline Tensor operator*(const Tensor& x, const Tensor& y) {
    return multiply(x, y);
}
/// TensorFlow's truediv: integer tensors give float32 (uint8) or float64 (int32, int64).
inline Tensor operator/(const Tensor& x, const Tensor& y) {
    return divide(x, y);
}
inline Tensor operator-(const Tensor& x) {
    return negative(x);
}
template <ArithmeticScalar S>
Tensor operator+(const Tensor& x, S s) {
    return add(x, detail::scalar_operand(x, s));
}
template <ArithmeticScalar S>
Tensor operator+(S s, const Tensor& x) {
    return add(detail::scalar_operand(x, s), x);
}
template <ArithmeticScalar S>
Tensor operator-(const Tensor& x, S s) {
    return subtract(x, detail::scalar_operand(x, s));
}
template <ArithmeticScalar S>
Tensor operator-(S s, const Tensor& x) {
    return subtract(detail::scalar_operand(x, s), x);
}
template <ArithmeticScalar S>
Tensor operator*(const Tensor& x, S s) {
    return multiply(x, detail::scalar_operand(x, s));
}
template <ArithmeticScalar S>
Tensor operator*(S s, const Tensor& x) {
    return multiply(detail::scalar_operand(x, s), x);
}
template <ArithmeticScalar S>
Tensor operator/(const Tensor& x, S s) {
    return divide(x, detail::scalar_operand(x, s));
}
template <ArithmeticScalar S>
Tensor operator/(S s, const Tensor& x) {
    return divide(detail::scalar_operand(x, s), x);
}

/// TensorFlow files the same functions under tf.math and tf.linalg.
namespace math {
using tapeflow::abs, tapeflow::add, tapeflow::add_n, tapeflow::argmax, tapeflow::argmin,
    tapeflow::ceil, tapeflow::cos, tapeflow::cumsum, tapeflow::divide, tapeflow::divide_no_nan,
    tapeflow::equal, tapeflow::erf, tapeflow::exp, tapeflow::expm1, tapeflow::floor,
    tapeflow::floordiv, tapeflow::floormod, tapeflow::greater, tapeflow::greater_equal,
    tapeflow::less, tapeflow::less_equal, tapeflow::log, tapeflow::log1p, tapeflow::logical_and,
    tapeflow::logical_not, tapeflow::logical_or, tapeflow::maximum, tapeflow::minimum,
    tapeflow::multiply, tapeflow::negative, tapeflow::not_equal, tapeflow::pow,
    tapeflow::reciprocal, tapeflow::reduce_all, tapeflow::reduce_any, tapeflow::reduce_logsumexp,
    tapeflow::reduce_max, tapeflow::reduce_mean, tapeflow::reduce_min, tapeflow::reduce_prod,
    tapeflow::reduce_std, tapeflow::reduce_sum, tapeflow::reduce_variance, tapeflow::round,
    tapeflow::rsqrt, tapeflow::sigmoid, tapeflow::sign, tapeflow::sin, tapeflow::softplus,
    tapeflow::sqrt, tapeflow::square, tapeflow::squared_difference, tapeflow::subtract,
    tapeflow::tanh, tapeflow::truediv;
using tapeflow::cumprod;
/// log(sigmoid(x)) = -softplus(-x), finite for every finite x; the same op as tf::nn::log_sigmoid.
Tensor log_sigmoid(const Tensor& x);
}  // namespace math

namespace linalg {
using tapeflow::matmul;
}  // namespace linalg

}  // namespace tapeflow

TAPEFLOW_API_END
