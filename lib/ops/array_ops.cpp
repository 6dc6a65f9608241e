// Shape ops: public wrappers and gradient rows of reshape, expand_dims, squeeze, transpose, concat,
// stack, unstack, split, tile, broadcast_to, stop_gradient, shape. Wrappers check arguments with
// TensorFlow's messages and return views (OutputSpec::alias_input) where the output's bytes are a
// contiguous piece of an input; copies run in kernels/cpu/array_ops_cpu.cpp. Gradients follow
// TensorFlow's array_grad.py, written with these same ops.
#include <algorithm>
#include <limits>
#include <numeric>

#include <fmt/ranges.h>

#include <tapeflow/ops/array.hpp>

#include "ops/apply.hpp"
#include "ops/op_families.hpp"
#include "ops/sum_to_shape.hpp"

namespace tapeflow {
namespace {

void check_defined(Op op, const Tensor& x) {
    if (!x.defined()) op_fail(op, "input of '{}' is an undefined tensor", op_name(op));
}

// The inputs of a variadic op: defined, non-empty, one dtype (TensorFlow's eager type check).
void check_list(Op op, const std::vector<Tensor>& values) {
    if (values.empty())
        op_fail(op, "'{}' needs at least one input tensor, got an empty list", op_name(op));
    for (std::size_t i = 0; i < values.size(); ++i) {
        if (!values[i].defined())
            op_fail(op, "input {} of '{}' is an undefined tensor", i, op_name(op));
        if (values[i].dtype() != values[0].dtype())
            fail_input_dtype(op, i, values[0].dtype(), values[i].dtype());
    }
}

int64_t product(std::span<const int64_t> dims, std::size_t begin, std::size_t end) {
    int64_t n = 1;
    for (std::size_t i = begin; i < end; ++i)
        n *= dims[i];
    return n;
}

// A view of `x` (input `index` of the op) with the given shape, `elements` elements in.
OutputSpec view_of(const Tensor& x, Shape shape, int64_t elements = 0, int index = 0) {
    return {std::move(shape),
            x.dtype(),
            index,
            static_cast<std::size_t>(elements) * dtype_size(x.dtype())};
}

// TensorFlow's reshape_op.h: zero sizes are left out of the product, so a -1 can still be inferred
// next to a 0 ([0, 6] -> [0, -1] gives [0, 6]).
Shape resolve_reshape(const Tensor& x, std::span<const int64_t> sizes) {
    constexpr Op op = Op::reshape;
    int64_t known = 1;
    int64_t unknown = -1;
    bool has_zero = false;
    std::vector<int64_t> dims(sizes.begin(), sizes.end());
    for (std::size_t d = 0; d < sizes.size(); ++d) {
        const int64_t size = sizes[d];
        if (size == -1) {
            if (unknown != -1)
                op_fail(op, "Only one input size may be -1, not both {} and {}", unknown, d);
            unknown = static_cast<int64_t>(d);
        } else if (size < 0) {
            op_fail(op, "Size {} must be non-negative, not {}", d, size);
        } else if (size == 0) {
            has_zero = true;
        } else if (__builtin_mul_overflow(known, size, &known)) {
            op_fail(
                op, "Requested shape [{}] has more than 2^63-1 elements", fmt::join(sizes, ","));
        }
    }
    const int64_t n = x.num_elements();
    if (unknown != -1) {
        int64_t counted = 1;
        bool input_has_zero = false;
        bool input_has_positive = false;
        for (int64_t dim : x.shape().dims()) {
            if (dim > 0 || !has_zero) {
                counted *= dim;
            } else {
                input_has_zero = true;
            }
            input_has_positive = input_has_positive || dim > 0;
        }
        // Every input size is 0: nothing is left to infer the -1 from ([0] -> [-1, 0]).
        if (input_has_zero && !input_has_positive) {
            op_fail(op,
                    "Reshape cannot infer the missing input size for an empty tensor unless all "
                    "specified input sizes are non-zero");
        }
        const int64_t missing = counted / known;
        if (!input_has_zero && missing * known != counted) {
            op_fail(op,
                    "Input to reshape is a tensor with {} values, but the requested shape requires "
                    "a multiple of {}",
                    counted,
                    known);
        }
        dims[static_cast<std::size_t>(unknown)] = missing;
    }
    int64_t total = 1;
    for (int64_t dim : dims) {
        if (__builtin_mul_overflow(total, dim, &total)) total = -1;
    }
    if (total != n) {
        op_fail(op,
                "Input to reshape is a tensor with {} values, but the requested shape has {}",
                n,
                total < 0 ? fmt::format("more than 2^63-1") : fmt::format("{}", total));
    }
    return Shape(std::move(dims));
}

Tensor reshape_impl(const Tensor& x, std::span<const int64_t> sizes) {
    check_defined(Op::reshape, x);
    Shape shape = resolve_reshape(x, sizes);
    return apply(Op::reshape, {x}, view_of(x, shape), Attrs().set("shape", shape));
}

// Axis for ops with TensorFlow's "axis = 3 not in [-3, 3)" message (Pack, Unpack).
int64_t pack_axis(Op op, int64_t axis, int64_t rank) {
    if (axis < -rank || axis >= rank) op_fail(op, "axis = {} not in [{}, {})", axis, -rank, rank);
    return axis < 0 ? axis + rank : axis;
}

// An op has at most 2^31-1 outputs, as TensorFlow counts them (in int): split(zeros({0}), 1 << 40)
// would otherwise ask for 2^40 output handles before any memory check could fail cleanly.
void check_output_count(Op op, int64_t count, std::string_view what) {
    if (count > INT32_MAX) {
        op_fail(op, "{} = {} is more outputs than an op can have (at most 2^31-1)", what, count);
    }
}

// Axis of Split and SplitV.
int64_t split_axis(Op op, int64_t axis, int64_t rank) {
    if (axis < -rank || axis >= rank) {
        op_fail(
            op, "-input rank(-{}) <= split_dim < input rank ({}), but got {}", rank, rank, axis);
    }
    return axis < 0 ? axis + rank : axis;
}

// Splits x along `axis` into pieces of `sizes`; views when the pieces are contiguous (every axis
// before `axis` has size 1, or there is one piece), a copy kernel otherwise.
std::vector<Tensor> split_impl(Op op,
                               const Tensor& x,
                               const std::vector<int64_t>& sizes,
                               int64_t axis,
                               bool keep_axis,
                               const Attrs& attrs) {
    const auto& dims = x.shape().dims();
    const int64_t outer = product(dims, 0, static_cast<std::size_t>(axis));
    const int64_t inner = product(dims, static_cast<std::size_t>(axis) + 1, dims.size());
    const bool views = outer == 1 || sizes.size() == 1;
    std::vector<OutputSpec> specs;
    specs.reserve(sizes.size());
    int64_t offset = 0;
    for (int64_t size : sizes) {
        std::vector<int64_t> out_dims = dims;
        if (keep_axis) {
            out_dims[static_cast<std::size_t>(axis)] = size;
        } else {
            out_dims.erase(out_dims.begin() + axis);
        }
        if (views) {
            specs.push_back(view_of(x, Shape(std::move(out_dims)), offset * inner));
        } else {
            specs.push_back({Shape(std::move(out_dims)), x.dtype()});
        }
        offset += size;
    }
    return apply_multi(op, std::span<const Tensor>(&x, 1), specs, attrs);
}

// The sizes along `axis` of each input (concat's gradient splits the upstream gradient by them).
std::vector<int64_t> sizes_along(std::span<const TensorMeta> meta, int64_t axis) {
    std::vector<int64_t> sizes;
    sizes.reserve(meta.size());
    for (const TensorMeta& m : meta)
        sizes.push_back(m.shape.dims()[static_cast<std::size_t>(axis)]);
    return sizes;
}

}  // namespace

Tensor reshape(const Tensor& x, const Shape& shape) {
    return reshape_impl(x, shape.dims());
}

Tensor reshape(const Tensor& x, std::vector<int64_t> shape) {
    return reshape_impl(x, shape);
}

Tensor reshape(const Tensor& x, std::initializer_list<int64_t> shape) {
    return reshape_impl(x, std::span<const int64_t>(shape.begin(), shape.size()));
}

Tensor expand_dims(const Tensor& x, int64_t axis) {
    check_defined(Op::expand_dims, x);
    const int64_t rank = x.rank();
    if (axis < -1 - rank || axis > rank) {
        op_fail(Op::expand_dims,
                "Tried to expand dim index {} for tensor with {} dimensions.",
                axis,
                rank);
    }
    const int64_t where = axis < 0 ? axis + rank + 1 : axis;
    std::vector<int64_t> dims = x.shape().dims();
    dims.insert(dims.begin() + where, 1);
    return apply(
        Op::expand_dims, {x}, view_of(x, Shape(std::move(dims))), Attrs().set("axis", where));
}

Tensor squeeze(const Tensor& x, Axes axis) {
    constexpr Op op = Op::squeeze;
    check_defined(op, x);
    const auto& dims = x.shape().dims();
    const int64_t rank = x.rank();
    std::vector<char> drop(dims.size(), 0);
    if (axis.all()) {
        for (std::size_t i = 0; i < dims.size(); ++i)
            drop[i] = dims[i] == 1;
    } else {
        for (int64_t a : axis.list()) {
            if (a < -rank || a >= rank) {
                op_fail(
                    op, "Tried to squeeze dim index {} for tensor with {} dimensions.", a, rank);
            }
            drop[static_cast<std::size_t>(a < 0 ? a + rank : a)] = 1;
        }
        for (std::size_t i = 0; i < dims.size(); ++i) {
            if (drop[i] != 0 && dims[i] != 1) {
                op_fail(
                    op, "Can not squeeze dim[{}], expected a dimension of 1, got {}", i, dims[i]);
            }
        }
    }
    std::vector<int64_t> kept;
    std::vector<int64_t> squeezed;
    for (std::size_t i = 0; i < dims.size(); ++i) {
        if (drop[i] != 0) {
            squeezed.push_back(static_cast<int64_t>(i));
        } else {
            kept.push_back(dims[i]);
        }
    }
    return apply(
        op, {x}, view_of(x, Shape(std::move(kept))), Attrs().set("squeeze_dims", squeezed));
}

Tensor transpose(const Tensor& x, std::vector<int64_t> perm) {
    constexpr Op op = Op::transpose;
    check_defined(op, x);
    const int64_t rank = x.rank();
    if (perm.empty() && rank > 0) {
        perm.resize(static_cast<std::size_t>(rank));
        std::iota(perm.rbegin(), perm.rend(), int64_t{0});
    }
    if (static_cast<int64_t>(perm.size()) != rank) {
        op_fail(op,
                "transpose expects a vector of size {}. But input(1) is a vector of size {}",
                rank,
                perm.size());
    }
    std::vector<char> seen(perm.size(), 0);
    for (int64_t d : perm) {
        if (d < 0 || d >= rank) op_fail(op, "{} is out of range [0 .. {})", d, rank);
        seen[static_cast<std::size_t>(d)] = 1;
    }
    for (std::size_t i = 0; i < seen.size(); ++i) {
        if (seen[i] == 0) op_fail(op, "{} is missing from {{{}}}.", i, fmt::join(perm, ","));
    }
    const auto& dims = x.shape().dims();
    std::vector<int64_t> out_dims;
    out_dims.reserve(perm.size());
    for (int64_t d : perm)
        out_dims.push_back(dims[static_cast<std::size_t>(d)]);
    // Moving only size-1 axes keeps every element in place: the output is a view.
    bool in_place = true;
    int64_t last = -1;
    for (int64_t d : perm) {
        if (dims[static_cast<std::size_t>(d)] == 1) continue;
        in_place = in_place && d > last;
        last = d;
    }
    const Attrs attrs = Attrs().set("perm", perm);
    if (in_place) return apply(op, {x}, view_of(x, Shape(std::move(out_dims))), attrs);
    return apply(op, {x}, {Shape(std::move(out_dims)), x.dtype()}, attrs);
}

Tensor concat(const std::vector<Tensor>& values, int64_t axis) {
    constexpr Op op = Op::concat;
    check_list(op, values);
    const Shape& first = values[0].shape();
    const int64_t rank = first.rank();
    if (axis < -rank || axis >= rank) {
        op_fail(op,
                "ConcatOp : Expected concatenating dimensions in the range [{}, {}), but got {}{}",
                -rank,
                rank,
                axis,
                rank == 0 ? " (scalars cannot be concatenated: use stack)" : "");
    }
    const int64_t a = axis < 0 ? axis + rank : axis;
    int64_t total = 0;
    int nonempty = 0;
    int nonempty_index = 0;
    for (std::size_t i = 0; i < values.size(); ++i) {
        const Shape& s = values[i].shape();
        if (s.rank() != rank) {
            op_fail(op,
                    "ConcatOp : Ranks of all input tensors should match: shape[0] = {} vs. "
                    "shape[{}] = {}",
                    first.debug_string(),
                    i,
                    s.debug_string());
        }
        for (int64_t j = 0; j < rank; ++j) {
            if (j != a && s.dims()[j] != first.dims()[j]) {
                op_fail(op,
                        "ConcatOp : Dimension {} in both shapes must be equal: shape[0] = {} vs. "
                        "shape[{}] = {}",
                        j,
                        first.debug_string(),
                        i,
                        s.debug_string());
            }
        }
        total = checked_dim_add(total, s.dims()[a], op_type(op));  // empty inputs can be long
        if (s.num_elements() != 0) {
            ++nonempty;
            nonempty_index = static_cast<int>(i);
        }
    }
    std::vector<int64_t> dims = first.dims();
    dims[a] = total;
    Shape shape = op_shape(std::move(dims), op_type(op));
    const Attrs attrs = Attrs().set("axis", a);
    // One input with elements: the output is that input's bytes.
    if (nonempty == 1 || values.size() == 1) {
        return apply(op, values, view_of(values[0], std::move(shape), 0, nonempty_index), attrs);
    }
    return apply(op, values, {std::move(shape), values[0].dtype()}, attrs);
}

Tensor stack(const std::vector<Tensor>& values, int64_t axis) {
    constexpr Op op = Op::stack;
    check_list(op, values);
    const Shape& first = values[0].shape();
    const int64_t a = pack_axis(op, axis, first.rank() + 1);
    for (std::size_t i = 1; i < values.size(); ++i) {
        if (values[i].shape() != first) {
            op_fail(
                op,
                "Shapes of all inputs must match: values[0].shape = {} != values[{}].shape = {}",
                first.debug_string(),
                i,
                values[i].shape().debug_string());
        }
    }
    std::vector<int64_t> dims = first.dims();
    dims.insert(dims.begin() + a, static_cast<int64_t>(values.size()));
    const Attrs attrs = Attrs().set("axis", a);
    if (values.size() == 1)
        return apply(op, values, view_of(values[0], Shape(std::move(dims))), attrs);
    return apply(op, values, {Shape(std::move(dims)), values[0].dtype()}, attrs);
}

std::vector<Tensor> unstack(const Tensor& x, int64_t axis) {
    constexpr Op op = Op::unstack;
    check_defined(op, x);
    const int64_t a = pack_axis(op, axis, x.rank());
    const int64_t num = x.shape().dims()[a];
    if (num == 0) return {};
    check_output_count(op, num, "num");
    return oom_as_error(op_type(op), [&] {  // one output per row: num can be 2^62 rows of nothing
        return split_impl(op,
                          x,
                          std::vector<int64_t>(static_cast<std::size_t>(num), 1),
                          a,
                          /*keep_axis=*/false,
                          Attrs().set("axis", a).set("num", num));
    });
}

std::vector<Tensor> split(const Tensor& x, int64_t num_splits, int64_t axis) {
    constexpr Op op = Op::split;
    check_defined(op, x);
    const int64_t a = split_axis(op, axis, x.rank());
    if (num_splits <= 0)
        op_fail(op, "Number of ways to split should be > 0, but got {}", num_splits);
    check_output_count(op, num_splits, "num_split");
    const int64_t size = x.shape().dims()[a];
    if (size % num_splits != 0) {
        op_fail(op,
                "Number of ways to split should evenly divide the split dimension, but got "
                "split_dim {} (size = {}) and num_split {}",
                a,
                size,
                num_splits);
    }
    return oom_as_error(op_type(op), [&] {  // split(zeros({0}), 1 << 40) asks for 2^40 outputs
        return split_impl(
            op,
            x,
            std::vector<int64_t>(static_cast<std::size_t>(num_splits), size / num_splits),
            a,
            /*keep_axis=*/true,
            Attrs().set("axis", a).set("num_split", num_splits));
    });
}

std::vector<Tensor> split(const Tensor& x, std::vector<int64_t> sizes, int64_t axis) {
    constexpr Op op = Op::split_v;
    check_defined(op, x);
    const int64_t a = split_axis(op, axis, x.rank());
    if (sizes.empty()) op_fail(op, "size_splits must have at least one element, got an empty list");
    const int64_t size = x.shape().dims()[a];
    int64_t unknown = -1;
    int64_t determined = 0;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
        if (sizes[i] == -1) {
            if (unknown != -1) op_fail(op, "There can only be one -1 in the input.");
            unknown = static_cast<int64_t>(i);
        } else if (sizes[i] < 0) {
            op_fail(op, "Split size at index {} must be >= 0. Got: {}", i, sizes[i]);
        } else {
            determined = checked_dim_add(determined, sizes[i], op_type(op));
        }
    }
    if ((unknown == -1 && determined != size) || (unknown != -1 && determined > size)) {
        op_fail(op,
                "Determined shape must either match input shape along split_dim exactly if fully "
                "specified, or be less than the size of the input along split_dim if not fully "
                "specified.  Got: {}",
                determined);
    }
    if (unknown != -1) sizes[static_cast<std::size_t>(unknown)] = size - determined;
    return split_impl(
        op, x, sizes, a, /*keep_axis=*/true, Attrs().set("axis", a).set("size_splits", sizes));
}

Tensor tile(const Tensor& x, std::vector<int64_t> multiples) {
    constexpr Op op = Op::tile;
    check_defined(op, x);
    const auto& dims = x.shape().dims();
    if (multiples.size() != dims.size()) {
        op_fail(op,
                "Expected multiples argument to be a vector of length {} but got length {}",
                dims.size(),
                multiples.size());
    }
    std::vector<int64_t> out_dims(dims.size());
    bool all_ones = true;
    for (std::size_t i = 0; i < dims.size(); ++i) {
        if (multiples[i] < 0)
            op_fail(op, "Expected multiples[{}] >= 0, but got {}", i, multiples[i]);
        if (__builtin_mul_overflow(dims[i], multiples[i], &out_dims[i])) {
            op_fail(op,
                    "Tiling dimension {} of size {} by {} overflows int64",
                    i,
                    dims[i],
                    multiples[i]);
        }
        all_ones = all_ones && multiples[i] == 1;
    }
    const Attrs attrs = Attrs().set("multiples", multiples);
    if (all_ones) return apply(op, {x}, view_of(x, x.shape()), attrs);  // TensorFlow forwards x too
    return apply(op, {x}, {op_shape(std::move(out_dims), op_type(op)), x.dtype()}, attrs);
}

Tensor broadcast_to(const Tensor& x, const Shape& shape) {
    constexpr Op op = Op::broadcast_to;
    check_defined(op, x);
    const auto& in = x.shape().dims();
    const auto& out = shape.dims();
    if (in.size() > out.size()) {
        op_fail(op,
                "Rank of input ({}) must be no greater than rank of output shape ({}).",
                in.size(),
                out.size());
    }
    const std::size_t lead = out.size() - in.size();
    for (std::size_t i = 0; i < in.size(); ++i) {
        if (in[i] != out[lead + i] && in[i] != 1) {
            op_fail(op,
                    "Unable to broadcast tensor of shape {} to tensor of shape {}",
                    x.shape().debug_string(),
                    shape.debug_string());
        }
    }
    const Attrs attrs = Attrs().set("shape", shape);
    // Same element count: only size-1 axes were added, the bytes do not change.
    if (shape.num_elements() == x.num_elements()) return apply(op, {x}, view_of(x, shape), attrs);
    return apply(op, {x}, {shape, x.dtype()}, attrs);
}

Tensor stop_gradient(const Tensor& x) {
    check_defined(Op::stop_gradient, x);
    return apply(Op::stop_gradient, {x}, view_of(x, x.shape()));
}

Tensor shape(const Tensor& x) {
    check_defined(Op::shape, x);
    for (std::size_t i = 0; i < x.shape().dims().size(); ++i) {
        const int64_t dim = x.shape().dims()[i];
        if (dim > std::numeric_limits<int32_t>::max()) {
            op_fail(Op::shape, "Shape output type is 32-bit but dim {} is {}", i, dim);
        }
    }
    const OutputSpec spec{Shape{x.rank()}, DType::int32};
    if (x.device().is_cpu()) return apply(Op::shape, {x}, spec);
    // The kernel writes host memory (the dims live on the host): build on the CPU, then copy.
    const Tensor host = Tensor::empty(spec.shape, spec.dtype);
    auto* out = static_cast<int32_t*>(host.mutable_raw_data());
    for (std::size_t i = 0; i < x.shape().dims().size(); ++i) {
        out[i] = static_cast<int32_t>(x.shape().dims()[i]);
    }
    return host.to(x.device());
}

namespace {

// reshape, expand_dims, squeeze: the gradient is the upstream gradient in the input's shape.
// Every formula below is batchable: shapes get the batch dims in front (c.batched), axes and
// permutations are shifted past them (NOTE [Vectorized jacobians]).
Grads reshape_back(const GradCtx& c) {
    return {reshape(c.grad(), c.batched(c.in_meta[0].shape))};
}

Grads transpose_grad(const GradCtx& c) {
    const auto& perm = c.attrs.get<std::vector<int64_t>>("perm");
    std::vector<int64_t> inverse(perm.size() + static_cast<std::size_t>(c.batch_dims));
    for (int64_t d = 0; d < c.batch_dims; ++d)
        inverse[static_cast<std::size_t>(d)] = d;
    for (std::size_t i = 0; i < perm.size(); ++i)
        inverse[static_cast<std::size_t>(c.batched_axis(perm[i]))] =
            c.batched_axis(static_cast<int64_t>(i));
    return {transpose(c.grad(), inverse)};
}

Grads concat_grad(const GradCtx& c) {
    if (c.in_meta.size() == 1) return {c.grad()};
    const int64_t axis = c.attrs.get<int64_t>("axis");
    const std::vector<Tensor> parts =
        split(c.grad(), sizes_along(c.in_meta, axis), c.batched_axis(axis));
    return Grads(parts.begin(), parts.end());
}

Grads stack_grad(const GradCtx& c) {
    const std::vector<Tensor> parts =
        unstack(c.grad(), c.batched_axis(c.attrs.get<int64_t>("axis")));
    return Grads(parts.begin(), parts.end());
}

Grads unstack_grad(const GradCtx& c) {
    return {stack(std::vector<Tensor>(c.grads.begin(), c.grads.end()),
                  c.batched_axis(c.attrs.get<int64_t>("axis")))};
}

Grads split_grad(const GradCtx& c) {
    return {concat(std::vector<Tensor>(c.grads.begin(), c.grads.end()),
                   c.batched_axis(c.attrs.get<int64_t>("axis")))};
}

// TensorFlow's _TileGrad: the gradient [m0*d0, m1*d1, ...] reshaped to [m0, d0, m1, d1, ...] and
// summed over the multiples' axes (axes with a multiple of 1 are left out of both).
Grads tile_grad(const GradCtx& c) {
    const auto& multiples = c.attrs.get<std::vector<int64_t>>("multiples");
    const Shape& in = c.in_meta[0].shape;
    std::vector<int64_t> split_shape;
    std::vector<int64_t> axes;
    for (std::size_t i = 0; i < multiples.size(); ++i) {
        if (multiples[i] != 1) {
            axes.push_back(static_cast<int64_t>(split_shape.size()));
            split_shape.push_back(multiples[i]);
        }
        split_shape.push_back(in.dims()[i]);
    }
    if (axes.empty()) return {c.grad()};
    for (int64_t& a : axes)
        a = c.batched_axis(a);
    return {
        reduce_sum(reshape(c.grad(), c.batched(Shape(std::move(split_shape)))), Axes(axes), false)};
}

// The output shape differs from the input's on purpose, so the gradient is summed down here.
Grads broadcast_to_grad(const GradCtx& c) {
    return {sum_to_shape(c.grad(), c.in_meta[0].shape, c.batch_dims)};
}

const OpDef kArrayOps[] = {
    {Op::reshape,
     Save::nothing,
     reshape_back,
     kBatchable,
     jvp_linear},  // same elements, other shape
    {Op::expand_dims,
     Save::nothing,
     reshape_back,
     kBatchable,
     jvp_linear},  // same elements, other shape
    {Op::squeeze,
     Save::nothing,
     reshape_back,
     kBatchable,
     jvp_linear},                                 // same elements, other shape
    {Op::stop_gradient, Save::nothing, nullptr},  // no gradient by definition
    {Op::transpose,
     Save::nothing,
     transpose_grad,
     kBatchable,
     jvp_linear},  // y = P x  ->  dx = P^-1 dy
    {Op::concat,
     Save::nothing,
     concat_grad,
     kBatchable,
     jvp_linear},  // dx_i = dy[piece i along axis]
    {Op::stack, Save::nothing, stack_grad, kBatchable, jvp_linear},      // dx_i = dy[i along axis]
    {Op::unstack, Save::nothing, unstack_grad, kBatchable, jvp_linear},  // dx = stack(dy_i)
    {Op::split, Save::nothing, split_grad, kBatchable, jvp_linear},      // dx = concat(dy_i)
    {Op::split_v, Save::nothing, split_grad, kBatchable, jvp_linear},    // dx = concat(dy_i)
    {Op::tile, Save::nothing, tile_grad, kBatchable, jvp_linear},  // dx = sum over the copies of dy
    {Op::broadcast_to, Save::nothing, broadcast_to_grad, kBatchable, jvp_linear},  // dx = dy summed
    {Op::shape, Save::nothing, nullptr},                                           // integer output
};

}  // namespace

std::span<const OpDef> array_op_defs() {
    return kArrayOps;
}

}  // namespace tapeflow
