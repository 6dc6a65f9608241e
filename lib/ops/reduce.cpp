// Reductions and scans: reduce_sum/mean/max/min/prod/any/all, argmax/argmin, cumsum/cumprod (the
// primitives), and reduce_logsumexp/variance/std (composites written as TensorFlow's Python writes
// them). Gradients follow TensorFlow's math_grad.py; they broadcast the output gradient back with
// reshape + broadcast_to, so they are differentiable again.
#include <algorithm>
#include <limits>
#include <numeric>

#include <tapeflow/ops/array.hpp>
#include <tapeflow/ops/creation.hpp>
#include <tapeflow/ops/math.hpp>

#include "ops/apply.hpp"
#include "ops/op_families.hpp"

namespace tapeflow {
namespace {

void check_defined(Op op, const Tensor& x) {
    if (!x.defined()) op_fail(op, "input of '{}' is an undefined tensor", op_name(op));
}

// The sorted, non-negative axes of a reduction, with TensorFlow's errors.
std::vector<int64_t> reduction_axes(Op op, const Axes& axis, int64_t rank) {
    std::vector<int64_t> axes;
    if (axis.all()) {
        axes.resize(static_cast<std::size_t>(rank));
        std::iota(axes.begin(), axes.end(), int64_t{0});
        return axes;
    }
    for (const int64_t a : axis.list()) {
        if (a < -rank || a >= rank) {
            op_fail(op, "Invalid reduction dimension ({} for input with {} dimension(s)", a, rank);
        }
        const int64_t n = a < 0 ? a + rank : a;
        if (std::find(axes.begin(), axes.end(), n) != axes.end()) {
            op_fail(op, "Invalid reduction arguments: Axes contains duplicate dimension: {}", n);
        }
        axes.push_back(n);
    }
    std::sort(axes.begin(), axes.end());
    return axes;
}

// The shape of the input with the reduced axes set to 1 (keepdims) or removed.
Shape reduced_shape(const Shape& shape, const std::vector<int64_t>& axes, bool keepdims) {
    std::vector<int64_t> dims;
    dims.reserve(static_cast<std::size_t>(shape.rank()));
    for (int64_t d = 0; d < shape.rank(); ++d) {
        const bool reduced = std::binary_search(axes.begin(), axes.end(), d);
        if (!reduced) {
            dims.push_back(shape.dims()[static_cast<std::size_t>(d)]);
        } else if (keepdims) {
            dims.push_back(1);
        }
    }
    return Shape(std::move(dims));
}

const std::vector<int64_t>& axes_of(const GradCtx& c) {
    return c.attrs.get<std::vector<int64_t>>("axes");
}

// One call of a reduction primitive. When no reduced axis has more than one element the output
// holds the input's values in the input's order, so it is a view and no kernel runs.
Tensor reduce(Op op, const Tensor& x, const Axes& axis, bool keepdims) {
    check_defined(op, x);
    std::vector<int64_t> axes = reduction_axes(op, axis, x.rank());
    Shape out_shape = reduced_shape(x.shape(), axes, keepdims);
    bool trivial = true;
    for (const int64_t a : axes)
        trivial = trivial && x.shape()[a] == 1;
    Attrs attrs = Attrs().set("axes", std::move(axes)).set("keep_dims", keepdims);
    if (trivial) {
        kernel_registry().find(op, x.device(), x.dtype());  // still only the dtypes the op takes
        return apply(op, {x}, OutputSpec{std::move(out_shape), x.dtype(), 0, 0}, attrs);
    }
    return apply(op, {x}, {std::move(out_shape), x.dtype()}, attrs);
}

// The output gradient brought back to the input's shape: reshape to the keepdims shape, then
// broadcast (TensorFlow's _SumGrad).
Tensor broadcast_back(const Tensor& grad, const Shape& in_shape, const std::vector<int64_t>& axes) {
    const Shape kept = reduced_shape(in_shape, axes, /*keepdims=*/true);
    const Tensor g = grad.shape() == kept ? grad : reshape(grad, kept);
    return g.shape() == in_shape ? g : broadcast_to(g, in_shape);
}

int64_t reduced_count(const Shape& in_shape, const std::vector<int64_t>& axes) {
    int64_t count = 1;
    for (const int64_t a : axes)
        count *= in_shape.dims()[static_cast<std::size_t>(a)];
    return count;
}

// The reduced axes counted in the (possibly batched) gradient (NOTE [Vectorized jacobians]).
std::vector<int64_t> batched_axes(const GradCtx& c) {
    std::vector<int64_t> axes = axes_of(c);
    for (int64_t& a : axes)
        a = c.batched_axis(a);
    return axes;
}

Grads sum_grad(const GradCtx& c) {  // d(sum x)/dx_i = 1
    return {broadcast_back(c.grad(), c.batched(c.in_meta[0].shape), batched_axes(c))};
}

Grads mean_grad(const GradCtx& c) {  // d(mean x)/dx_i = 1/n
    const Shape& shape = c.in_meta[0].shape;
    const auto count = static_cast<double>(reduced_count(shape, axes_of(c)));
    return {broadcast_back(c.grad() / count, c.batched(shape), batched_axes(c))};
}

// Max and Min (TensorFlow's _MinOrMaxGrad): the gradient is split evenly among the elements equal
// to the extremum.
Grads min_or_max_grad(const GradCtx& c) {
    const Tensor& x = c.in[0];
    const auto& axes = axes_of(c);
    const Shape kept = reduced_shape(x.shape(), axes, /*keepdims=*/true);
    const Tensor y = reshape(c.out[0], kept);
    const Tensor g = reshape(c.grad(), c.batched(kept));
    const Tensor indicators = cast(equal(y, x), g.dtype());
    const Tensor num_selected = reduce_sum(indicators, Axes(axes), /*keepdims=*/true);
    return {divide(indicators, num_selected) * g};
}

// Prod (TensorFlow's _ProdGrad): d(prod x)/dx_i is the product of every other element, built from
// an exclusive cumprod from the left times one from the right over the reduced elements (moved to
// a leading axis). No division, so it is exact for inputs with zeros: one zero gives the product
// of the others at the zero and 0 elsewhere; two zeros give 0 everywhere.
Grads prod_grad(const GradCtx& c) {
    const Tensor& x = c.in[0];
    const auto& axes = axes_of(c);
    const Shape& shape = x.shape();
    const Tensor g = broadcast_back(c.grad(), c.batched(shape), batched_axes(c));
    std::vector<int64_t> perm = axes;
    int64_t reduced_num = 1;
    int64_t other_num = 1;
    for (int64_t d = 0; d < shape.rank(); ++d) {
        const int64_t size = shape.dims()[static_cast<std::size_t>(d)];
        if (std::binary_search(axes.begin(), axes.end(), d)) {
            reduced_num *= size;
        } else {
            perm.push_back(d);
            other_num *= size;
        }
    }
    bool identity_perm = true;
    for (std::size_t i = 0; i < perm.size(); ++i) {
        identity_perm = identity_perm && perm[i] == static_cast<int64_t>(i);
    }
    const Tensor permuted = identity_perm ? x : transpose(x, perm);
    const Tensor reshaped = reshape(permuted, Shape{reduced_num, other_num});
    const Tensor left = cumprod(reshaped, 0, /*exclusive=*/true, /*reverse=*/false);
    const Tensor right = cumprod(reshaped, 0, /*exclusive=*/true, /*reverse=*/true);
    Tensor y = reshape(left * right, permuted.shape());
    if (!identity_perm) {
        std::vector<int64_t> inverse(perm.size());
        for (std::size_t i = 0; i < perm.size(); ++i) {
            inverse[static_cast<std::size_t>(perm[i])] = static_cast<int64_t>(i);
        }
        y = transpose(y, inverse);
    }
    return {g * y};
}

// Cumsum: the gradient sums the upstream gradient the other way (same exclusive flag).
Grads cumsum_grad(const GradCtx& c) {
    return {cumsum(c.grad(),
                   c.batched_axis(c.attrs.get<int64_t>("axis")),
                   c.attrs.get<bool>("exclusive"),
                   !c.attrs.get<bool>("reverse"))};
}

// Cumprod (TensorFlow's _CumprodGrad): cumsum of prod * grad the other way, divided by x
// (div_no_nan, so it is 0 where x == 0 — TensorFlow's rule, exact only for nonzero x).
Grads cumprod_grad(const GradCtx& c) {
    const Tensor& x = c.in[0];
    const auto axis = c.attrs.get<int64_t>("axis");
    const bool exclusive = c.attrs.get<bool>("exclusive");
    const bool reverse = c.attrs.get<bool>("reverse");
    const Tensor prod = cumprod(x, axis, exclusive, reverse);
    const Tensor out = cumsum(prod * c.grad(), c.batched_axis(axis), exclusive, !reverse);
    return {divide_no_nan(out, x)};
}

const OpDef kReduceOps[] = {
    {Op::reduce_sum, Save::nothing, sum_grad, kBatchable, jvp_linear},
    {Op::reduce_mean, Save::nothing, mean_grad, kBatchable, jvp_linear},
    {Op::reduce_max, Save::inputs_and_output, min_or_max_grad, kBatchable, jvp_by_double_vjp},
    {Op::reduce_min, Save::inputs_and_output, min_or_max_grad, kBatchable, jvp_by_double_vjp},
    {Op::reduce_prod, Save::inputs, prod_grad, kBatchable, jvp_by_double_vjp},
    {Op::reduce_any, Save::nothing, nullptr},
    {Op::reduce_all, Save::nothing, nullptr},
    {Op::argmax, Save::nothing, nullptr},
    {Op::argmin, Save::nothing, nullptr},
    {Op::cumsum, Save::nothing, cumsum_grad, kBatchable, jvp_linear},
    {Op::cumprod, Save::inputs, cumprod_grad, kBatchable, jvp_by_double_vjp},
};

Tensor arg_reduce(Op op, const Tensor& x, int64_t axis, DType output_type) {
    check_defined(op, x);
    const int64_t rank = x.rank();
    if (axis < -rank || axis >= rank) {
        op_fail(op, "Expected dimension in the range [{}, {}), but got {}", -rank, rank, axis);
    }
    if (output_type != DType::int32 && output_type != DType::int64) {
        op_fail(op, "output_type must be int32 or int64, got {}", dtype_name(output_type));
    }
    const int64_t a = axis < 0 ? axis + rank : axis;
    if (x.shape().dims()[static_cast<std::size_t>(a)] == 0) {
        op_fail(op, "Reduction axis {} is empty in shape {}", a, x.shape().debug_string());
    }
    std::vector<int64_t> dims = x.shape().dims();
    dims.erase(dims.begin() + a);
    return apply(op,
                 {x},
                 {Shape(dims), output_type},
                 Attrs().set("axis", a).set("output_type", output_type));
}

Tensor scan(Op op, const Tensor& x, int64_t axis, bool exclusive, bool reverse) {
    check_defined(op, x);
    const int64_t rank = x.rank();
    if (axis < -rank || axis >= rank) {
        op_fail(
            op, "ScanOp: Expected scan axis in the range [{}, {}), but got {}", -rank, rank, axis);
    }
    const int64_t a = axis < 0 ? axis + rank : axis;
    return apply(op,
                 {x},
                 {x.shape(), x.dtype()},
                 Attrs().set("axis", a).set("exclusive", exclusive).set("reverse", reverse));
}

}  // namespace

std::span<const OpDef> reduce_op_defs() {
    return kReduceOps;
}

Tensor reduce_sum(const Tensor& x, Axes axis, bool keepdims) {
    return reduce(Op::reduce_sum, x, axis, keepdims);
}
Tensor reduce_mean(const Tensor& x, Axes axis, bool keepdims) {
    return reduce(Op::reduce_mean, x, axis, keepdims);
}
Tensor reduce_max(const Tensor& x, Axes axis, bool keepdims) {
    return reduce(Op::reduce_max, x, axis, keepdims);
}
Tensor reduce_min(const Tensor& x, Axes axis, bool keepdims) {
    return reduce(Op::reduce_min, x, axis, keepdims);
}
Tensor reduce_prod(const Tensor& x, Axes axis, bool keepdims) {
    return reduce(Op::reduce_prod, x, axis, keepdims);
}
Tensor reduce_any(const Tensor& x, Axes axis, bool keepdims) {
    return reduce(Op::reduce_any, x, axis, keepdims);
}
Tensor reduce_all(const Tensor& x, Axes axis, bool keepdims) {
    return reduce(Op::reduce_all, x, axis, keepdims);
}

// TensorFlow's reduce_logsumexp: max + log(sum(exp(x - max))), with the max stop-gradiented (its
// contributions cancel exactly) and replaced by 0 where it is not finite (all -inf, inf or nan).
Tensor reduce_logsumexp(const Tensor& x, Axes axis, bool keepdims) {
    const Tensor raw_max = reduce_max(x, axis, /*keepdims=*/true);
    const Tensor inf = scalar_like(raw_max, std::numeric_limits<double>::infinity());
    const Tensor is_finite = less(abs(raw_max), inf);
    Tensor my_max = stop_gradient(where(is_finite, raw_max, zeros_like(raw_max)));
    const Tensor result = log(reduce_sum(exp(x - my_max), axis, keepdims));
    if (!keepdims) my_max = reshape(my_max, result.shape());
    return result + my_max;
}

// TensorFlow's reduce_variance: mean(square(x - mean(x, keepdims))), no stop_gradient (so its
// second derivative is the true Hessian, unlike nn.moments).
Tensor reduce_variance(const Tensor& x, Axes axis, bool keepdims) {
    check_defined(Op::reduce_mean, x);
    if (!is_floating(x.dtype())) {
        throw errors::InvalidArgumentError(
            fmt::format("reduce_variance: Input must be either real or complex, got {}",
                        dtype_name(x.dtype())));
    }
    const Tensor means = reduce_mean(x, axis, /*keepdims=*/true);
    return reduce_mean(square(x - means), axis, keepdims);
}

Tensor reduce_std(const Tensor& x, Axes axis, bool keepdims) {
    return sqrt(reduce_variance(x, std::move(axis), keepdims));
}

Tensor argmax(const Tensor& x, int64_t axis, DType output_type) {
    return arg_reduce(Op::argmax, x, axis, output_type);
}
Tensor argmin(const Tensor& x, int64_t axis, DType output_type) {
    return arg_reduce(Op::argmin, x, axis, output_type);
}

Tensor cumsum(const Tensor& x, int64_t axis, bool exclusive, bool reverse) {
    return scan(Op::cumsum, x, axis, exclusive, reverse);
}

Tensor cumprod(const Tensor& x, int64_t axis, bool exclusive, bool reverse) {
    return scan(Op::cumprod, x, axis, exclusive, reverse);
}

}  // namespace tapeflow
