// top_k (TensorFlow's TopKV2) with its gradient row, and sort / argsort built on it as
// TensorFlow's sort_ops.py does: DESCENDING is top_k with k = the axis' size (the axis moved last
// and back), ASCENDING the same on an order-reversing map of x (-x for floats, -x - 1 for signed
// and 255 - x for unsigned integers, both exact), undone on the values. CPU kernel:
// lib/kernels/cpu/topk_cpu.cpp; CUDA: cuda/topk_kernels.cu.
#include <algorithm>
#include <limits>
#include <numeric>
#include <vector>

#include <tapeflow/ops/array.hpp>
#include <tapeflow/ops/creation.hpp>
#include <tapeflow/ops/math.hpp>
#include <tapeflow/ops/sort.hpp>

#include "ops/apply.hpp"
#include "ops/op_families.hpp"

namespace tapeflow {
namespace {

// d values / d x: the upstream gradient of the values scattered to their input positions, each
// row offset by its place in the flattened input (TensorFlow's _TopKGrad).
Grads top_k_grad(const GradCtx& c) {
    const Shape& in_shape = c.in_meta[0].shape;
    const Tensor& indices = c.out[1];
    const int64_t n = in_shape.rank() == 0 ? 1 : in_shape[-1];
    const int64_t k = indices.shape()[-1];
    const int64_t rows = k == 0 ? 0 : indices.num_elements() / k;
    const Tensor row_start = range(0,
                                   static_cast<double>(rows * n),
                                   static_cast<double>(std::max<int64_t>(n, 1)),
                                   DType::int64)
                                 .to(indices.device());
    const Tensor flat =
        reshape(reshape(cast(indices, DType::int64), {rows, k}) + reshape(row_start, {rows, 1}),
                {rows * k, 1});
    const Tensor g = reshape(c.grad(), {rows * k});
    return {reshape(scatter_nd(flat, g, Shape{in_shape.num_elements()}), in_shape)};
}

const OpDef kSortOps[] = {
    {Op::top_k,
     Save::output,
     top_k_grad,
     kNotBatchable,
     jvp_by_double_vjp},  // dx[indices] = g (each row's k positions)
};

constexpr Op kTopK = Op::top_k;

// x with `axis` swapped with the last axis (its own inverse); x itself when axis is last.
Tensor axis_last(const Tensor& x, int64_t axis) {
    const int64_t last = x.rank() - 1;
    if (axis == last) return x;
    std::vector<int64_t> perm(static_cast<std::size_t>(x.rank()));
    std::iota(perm.begin(), perm.end(), 0);
    std::swap(perm[static_cast<std::size_t>(axis)], perm[static_cast<std::size_t>(last)]);
    return transpose(x, perm);
}

// A map that reverses the order of x's values exactly; it is its own inverse.
Tensor reverse_order(const Tensor& x) {
    if (x.dtype() == DType::uint8) return scalar_like(x, 255) - x;
    if (is_floating(x.dtype())) return -x;
    return -x - scalar_like(x, 1);
}

// (values, indices) of x sorted along `axis`; `op_name` names sort or argsort in errors.
std::pair<Tensor, Tensor> sort_impl(const Tensor& x,
                                    int64_t axis,
                                    std::string_view direction,
                                    std::string_view op_name) {
    if (!x.defined()) op_fail(kTopK, "the input of {} is an undefined tensor", op_name);
    const bool ascending = direction == "ASCENDING";
    if (!ascending && direction != "DESCENDING") {
        op_fail(kTopK,
                "{}: direction should be one of \"ASCENDING\", \"DESCENDING\", got \"{}\"",
                op_name,
                direction);
    }
    if (x.rank() == 0) op_fail(kTopK, "{} needs a tensor of rank >= 1, got a scalar", op_name);
    const int64_t a = normalize_axis(axis, x.rank(), op_type(kTopK));
    const Tensor keyed = ascending ? reverse_order(x) : x;
    const Tensor moved = axis_last(keyed, a);
    auto [values, indices] = math::top_k(moved, moved.shape()[-1]);
    values = axis_last(values, a);
    return {ascending ? reverse_order(values) : values, axis_last(indices, a)};
}

}  // namespace

std::span<const OpDef> sort_op_defs() {
    return kSortOps;
}

namespace math {

std::pair<Tensor, Tensor> top_k(const Tensor& x, int64_t k, bool sorted) {
    if (!x.defined()) op_fail(kTopK, "input of 'top_k' is an undefined tensor");
    if (x.dtype() == DType::bool_) {
        op_fail(kTopK,
                "top_k takes real numbers (float, int32, int64, uint8), got {} of shape {}",
                dtype_name(x.dtype()),
                x.shape().debug_string());
    }
    if (x.rank() < 1) {
        op_fail(kTopK,
                "input must be at least 1-dimensional, got shape {}; top_k works along the "
                "last axis",
                x.shape().debug_string());
    }
    if (k < 0) op_fail(kTopK, "Need k >= 0, got {}", k);
    const int64_t n = x.shape()[-1];
    if (n > std::numeric_limits<int32_t>::max()) {
        op_fail(kTopK,
                "the last dimension of shape {} is too large for int32 indices",
                x.shape().debug_string());
    }
    if (k > n) {
        op_fail(kTopK,
                "input must have at least k={} columns, got shape {} with {} in its last "
                "dimension; use k <= {}",
                k,
                x.shape().debug_string(),
                n,
                n);
    }
    std::vector<int64_t> dims = x.shape().dims();
    dims.back() = k;
    const OutputSpec specs[] = {{Shape(dims), x.dtype()}, {Shape(dims), DType::int32}};
    Attrs attrs;
    attrs.set("k", k).set("sorted", sorted);
    auto out = apply_multi(kTopK, std::span<const Tensor>(&x, 1), specs, attrs);
    return {out[0], out[1]};
}

}  // namespace math

Tensor sort(const Tensor& x, int64_t axis, std::string_view direction) {
    return sort_impl(x, axis, direction, "sort").first;
}

Tensor argsort(const Tensor& x, int64_t axis, std::string_view direction, bool /*stable*/) {
    // Indices have no gradient: the tape never sees x (an int32 target would otherwise reach x
    // through top_k's values as zeros; the contract is "unconnected").
    return sort_impl(x.defined() ? stop_gradient(x) : x, axis, direction, "argsort").second;
}

}  // namespace tapeflow
