// Slicing and padding ops: slice, strided_slice, pad (CONSTANT, REFLECT, SYMMETRIC). The wrappers
// check arguments with TensorFlow's messages and compute output shapes (contiguous results are
// views of the input); the gradient rows follow TensorFlow's array_grad.py. The internal
// primitives strided_slice_grad and mirror_pad_grad exist only as gradients. Kernels:
// lib/kernels/cpu/slicing_cpu.cpp. Gathers and scatters: gather_scatter.cpp.
#include <algorithm>
#include <cctype>
#include <optional>
#include <string>

#include <tapeflow/ops/array.hpp>
#include <tapeflow/ops/creation.hpp>
#include <tapeflow/ops/math.hpp>

#include "ops/apply.hpp"
#include "ops/index_common.hpp"
#include "ops/number_conversion.hpp"
#include "ops/op_families.hpp"

namespace tapeflow {
namespace {

using index_detail::check_defined;
using index_detail::dims_string;
using index_detail::product;

// When the box (begin/stride/size per axis) of a row-major tensor is one contiguous run, its first
// element's offset in elements: the op's output can then be a view of the input (TensorFlow's
// Slice and StridedSlice alias such results too). Empty boxes get their own (empty) output.
std::optional<int64_t> contiguous_offset(const Shape& in,
                                         const std::vector<int64_t>& begin,
                                         const std::vector<int64_t>& strides,
                                         const std::vector<int64_t>& sizes) {
    const auto& dims = in.dims();
    if (product(sizes, 0, sizes.size()) == 0) return std::nullopt;
    auto d = static_cast<int64_t>(dims.size()) - 1;
    // Axes taken whole (or of extent 1) at the end are contiguous whatever precedes them.
    while (d >= 0 && begin[d] == 0 && sizes[d] == dims[d] && (strides[d] == 1 || dims[d] == 1))
        --d;
    // One partial axis with unit step (or one element) is still one run ...
    if (d >= 0 && strides[d] != 1 && sizes[d] != 1) return std::nullopt;
    // ... provided every axis before it contributes a single element.
    for (int64_t i = 0; i < d; ++i) {
        if (sizes[i] != 1) return std::nullopt;
    }
    int64_t offset = 0;
    int64_t stride = 1;
    for (auto i = static_cast<int64_t>(dims.size()) - 1; i >= 0; --i) {
        offset += begin[i] * stride;
        stride *= dims[i];
    }
    return offset;
}

OutputSpec maybe_view(const Tensor& x,
                      Shape shape,
                      const std::vector<int64_t>& begin,
                      const std::vector<int64_t>& strides,
                      const std::vector<int64_t>& sizes) {
    OutputSpec spec{std::move(shape), x.dtype()};
    if (const auto offset = contiguous_offset(x.shape(), begin, strides, sizes)) {
        spec.alias_input = 0;
        spec.byte_offset = static_cast<std::size_t>(*offset) * dtype_size(x.dtype());
    }
    return spec;
}

// ---- strided_slice: TensorFlow's ValidateStridedSliceOp (core/util/strided_slice_op.cc) ----

// The slice in "processing" form: one (begin, stride, size) per input axis, all canonical (in
// range, masks applied); `final_shape` drops shrunk axes and adds the new ones.
struct StridedSliceSpec {
    std::vector<int64_t> begin;
    std::vector<int64_t> strides;
    std::vector<int64_t> sizes;
    std::vector<int64_t> final_shape;
};

constexpr int64_t kNewAxis = -1;
constexpr int64_t kShrinkAxis = -2;

StridedSliceSpec strided_slice_spec(Op op,
                                    const Shape& input,
                                    const std::vector<int64_t>& begin,
                                    const std::vector<int64_t>& end,
                                    const std::vector<int64_t>& strides,
                                    int64_t begin_mask,
                                    int64_t end_mask,
                                    int64_t ellipsis_mask,
                                    int64_t new_axis_mask,
                                    int64_t shrink_axis_mask) {
    if (begin.size() != strides.size() || end.size() != strides.size() || begin.size() >= 32) {
        op_fail(
            op,
            "Expected begin, end, and strides to be 1D equal size tensors, but got shapes [{}], "
            "[{}], and [{}] instead.",
            begin.size(),
            end.size(),
            strides.size());
    }
    if (ellipsis_mask != 0 && (ellipsis_mask & (ellipsis_mask - 1)) != 0) {
        op_fail(op, "Multiple ellipses in slice spec not allowed");
    }
    const auto bit = [](int64_t mask, int64_t i) {
        return ((mask >> i) & 1) != 0;
    };

    // Step 1: count the new axes after the ellipsis; without an ellipsis, one is implied at the
    // end.
    auto sparse_dims = static_cast<int64_t>(strides.size());
    int64_t new_axes_after_ellipsis = 0;
    bool ellipsis_seen = false;
    for (int64_t i = 0; i < sparse_dims; ++i) {
        if (ellipsis_seen && bit(new_axis_mask, i)) ++new_axes_after_ellipsis;
        if (bit(ellipsis_mask, i)) ellipsis_seen = true;
    }
    if (!ellipsis_seen) {
        ellipsis_mask |= int64_t{1} << sparse_dims;
        ++sparse_dims;
    }

    // Step 2: the sparse spec (one entry per given index) becomes a dense one (one per input axis).
    const int64_t dims = input.rank();
    StridedSliceSpec spec;
    spec.begin.assign(static_cast<std::size_t>(dims), 0);
    std::vector<int64_t> dense_end(static_cast<std::size_t>(dims), 0);
    spec.strides.assign(static_cast<std::size_t>(dims), 1);
    int64_t dense_begin_mask = 0;
    int64_t dense_end_mask = 0;
    int64_t dense_shrink_mask = 0;
    std::vector<int64_t> final_gather;  // an input axis, kNewAxis or kShrinkAxis per output entry
    int64_t full = 0;
    for (int64_t i = 0; i < sparse_dims; ++i) {
        if (bit(ellipsis_mask, i)) {
            const int64_t next =
                std::min(dims - (sparse_dims - i) + 1 + new_axes_after_ellipsis, dims);
            for (; full < next; ++full) {
                spec.begin[full] = dense_end[full] = 0;
                spec.strides[full] = 1;
                dense_begin_mask |= int64_t{1} << full;
                dense_end_mask |= int64_t{1} << full;
                final_gather.push_back(full);
            }
        } else if (bit(new_axis_mask, i)) {
            final_gather.push_back(kNewAxis);
        } else {
            if (full == dims) {
                if (dims == 0) op_fail(op, "Attempting to slice scalar input.");
                op_fail(op,
                        "Index out of range using input dim {}; input has only {} dims",
                        full,
                        dims);
            }
            spec.begin[full] = begin[i];
            dense_end[full] = end[i];
            spec.strides[full] = strides[i];
            if (bit(begin_mask, i)) dense_begin_mask |= int64_t{1} << full;
            if (bit(end_mask, i)) dense_end_mask |= int64_t{1} << full;
            if (bit(shrink_axis_mask, i)) {
                final_gather.push_back(kShrinkAxis);
                dense_shrink_mask |= int64_t{1} << full;
            } else {
                final_gather.push_back(full);
            }
            ++full;
        }
    }

    // Step 3: make masked and negative bounds explicit, clamp them, and size each axis.
    spec.sizes.assign(static_cast<std::size_t>(dims), 0);
    for (int64_t i = 0; i < dims; ++i) {
        int64_t& b = spec.begin[i];
        int64_t& e = dense_end[i];
        const int64_t s = spec.strides[i];
        const int64_t dim = input.dims()[i];
        if (s == 0) op_fail(op, "strides[{}] must be non-zero", i);
        const bool shrink = bit(dense_shrink_mask, i);
        if (shrink && s <= 0) op_fail(op, "only stride 1 allowed on non-range indexing.");
        // Valid range of a bound: [0, dim] going forward, [-1, dim - 1] going backward.
        const int64_t lo = s > 0 ? 0 : -1;
        const int64_t hi = s > 0 ? dim : dim - 1;
        const auto canonical = [&](int64_t x, bool masked, bool is_end) {
            if (masked) return (s > 0) != is_end ? lo : hi;
            const int64_t fwd = x < 0 ? dim + x : x;
            return std::clamp(fwd, lo, hi);
        };
        if (shrink) {
            // foo[-1] arrives as begin -1, end 0; the end is recreated as begin + 1.
            const int64_t fwd = b < 0 ? dim + b : b;
            b = fwd;
            e = b + 1;
            if (fwd < 0 || fwd >= dim)
                op_fail(op, "slice index {} of dimension {} out of bounds.", b, i);
        } else {
            b = canonical(b, bit(dense_begin_mask, i), false);
            e = canonical(e, bit(dense_end_mask, i), true);
        }
        const int64_t length = e - b;
        if (length == 0 || ((length < 0) != (s < 0))) {
            spec.sizes[i] = 0;
        } else {
            spec.sizes[i] = length / s + (length % s != 0 ? 1 : 0);
        }
    }

    // Step 4: the final shape, from the processing shape plus new axes minus shrunk ones.
    for (int64_t g : final_gather) {
        if (g >= 0) {
            spec.final_shape.push_back(spec.sizes[g]);
        } else if (g == kNewAxis) {
            spec.final_shape.push_back(1);
        }
    }
    return spec;
}

Attrs strided_slice_attrs(const std::vector<int64_t>& begin,
                          const std::vector<int64_t>& end,
                          const std::vector<int64_t>& strides,
                          int64_t begin_mask,
                          int64_t end_mask,
                          int64_t ellipsis_mask,
                          int64_t new_axis_mask,
                          int64_t shrink_axis_mask,
                          const StridedSliceSpec& spec) {
    return Attrs()
        .set("begin", begin)
        .set("end", end)
        .set("strides", strides)
        .set("begin_mask", begin_mask)
        .set("end_mask", end_mask)
        .set("ellipsis_mask", ellipsis_mask)
        .set("new_axis_mask", new_axis_mask)
        .set("shrink_axis_mask", shrink_axis_mask)
        .set("proc_begin", spec.begin)
        .set("proc_strides", spec.strides)
        .set("proc_sizes", spec.sizes);
}

// The strided slice a recorded StridedSlice or StridedSliceGrad describes, applied to `x`.
Tensor strided_slice_from(const Tensor& x, const Attrs& a) {
    return strided_slice(x,
                         a.get<std::vector<int64_t>>("begin"),
                         a.get<std::vector<int64_t>>("end"),
                         a.get<std::vector<int64_t>>("strides"),
                         a.get<int64_t>("begin_mask"),
                         a.get<int64_t>("end_mask"),
                         a.get<int64_t>("ellipsis_mask"),
                         a.get<int64_t>("new_axis_mask"),
                         a.get<int64_t>("shrink_axis_mask"));
}

// StridedSliceGrad: `dy` (the slice's shape) scattered into zeros of the input `shape`.
Tensor strided_slice_grad(const Tensor& dy, const Shape& shape, const Attrs& forward) {
    constexpr Op op = Op::strided_slice_grad;
    check_defined(op, dy, "dy");
    const auto& begin = forward.get<std::vector<int64_t>>("begin");
    const auto& end = forward.get<std::vector<int64_t>>("end");
    const auto& strides = forward.get<std::vector<int64_t>>("strides");
    const auto begin_mask = forward.get<int64_t>("begin_mask");
    const auto end_mask = forward.get<int64_t>("end_mask");
    const auto ellipsis_mask = forward.get<int64_t>("ellipsis_mask");
    const auto new_axis_mask = forward.get<int64_t>("new_axis_mask");
    const auto shrink_axis_mask = forward.get<int64_t>("shrink_axis_mask");
    const StridedSliceSpec spec = strided_slice_spec(op,
                                                     shape,
                                                     begin,
                                                     end,
                                                     strides,
                                                     begin_mask,
                                                     end_mask,
                                                     ellipsis_mask,
                                                     new_axis_mask,
                                                     shrink_axis_mask);
    if (dy.shape() != Shape(spec.final_shape)) {
        op_fail(op,
                "shape of dy was {} instead of {}",
                dy.shape().debug_string(),
                dims_string(spec.final_shape));
    }
    Attrs attrs = strided_slice_attrs(begin,
                                      end,
                                      strides,
                                      begin_mask,
                                      end_mask,
                                      ellipsis_mask,
                                      new_axis_mask,
                                      shrink_axis_mask,
                                      spec);
    attrs.set("shape", shape);
    return apply(op, {dy}, {shape, dy.dtype()}, attrs);
}

// ---- pad ----

std::vector<int64_t> flat_paddings(const std::vector<std::pair<int64_t, int64_t>>& paddings) {
    std::vector<int64_t> flat;
    flat.reserve(paddings.size() * 2);
    for (const auto& [before, after] : paddings) {
        flat.push_back(before);
        flat.push_back(after);
    }
    return flat;
}

std::vector<std::pair<int64_t, int64_t>> paired(const std::vector<int64_t>& flat) {
    std::vector<std::pair<int64_t, int64_t>> pairs;
    for (std::size_t i = 0; i + 1 < flat.size(); i += 2)
        pairs.emplace_back(flat[i], flat[i + 1]);
    return pairs;
}

// MirrorPadGrad: folds the mirrored borders of `grad` back onto the elements they copy.
Tensor mirror_pad_grad(const Tensor& grad,
                       const std::vector<int64_t>& paddings,
                       const std::string& mode) {
    std::vector<int64_t> dims = grad.shape().dims();
    for (std::size_t d = 0; d < dims.size(); ++d)
        dims[d] -= paddings[2 * d] + paddings[2 * d + 1];
    return apply(Op::mirror_pad_grad,
                 {grad},
                 {Shape(dims), grad.dtype()},
                 Attrs().set("paddings", paddings).set("mode", mode));
}

// ---- gradient rows ----

// Slice and Pad are batchable: a batched gradient's leading batch dims are kept whole
// (NOTE [Vectorized jacobians] in lib/autograd/backward.cpp).
Grads slice_grad(const GradCtx& c) {  // pad the gradient with zeros back to the input's shape
    const auto& begin = c.attrs.get<std::vector<int64_t>>("begin");
    const auto& size = c.attrs.get<std::vector<int64_t>>("size");
    const auto& dims = c.in_meta[0].shape.dims();
    std::vector<std::pair<int64_t, int64_t>> paddings(static_cast<std::size_t>(c.batch_dims));
    for (std::size_t i = 0; i < dims.size(); ++i)
        paddings.emplace_back(begin[i], dims[i] - begin[i] - size[i]);
    return {pad(c.grad(), paddings)};
}

Grads pad_grad(const GradCtx& c) {  // the gradient's interior, where the input was copied
    const auto& paddings = c.attrs.get<std::vector<int64_t>>("paddings");
    const Shape size = c.batched(c.in_meta[0].shape);
    std::vector<int64_t> begin(static_cast<std::size_t>(c.batch_dims), 0);
    for (std::size_t i = 0; i < c.in_meta[0].shape.dims().size(); ++i)
        begin.push_back(paddings[2 * i]);
    return {slice(c.grad(), begin, size.dims())};
}

// Pad is affine: the tangent is padded with zeros, not with the constant value.
Tangents pad_jvp(const JvpCtx& c) {
    Attrs attrs = c.attrs;
    attrs.set("constant_values", 0.0);
    return {apply(Op::pad, {c.t(0)}, {c.out[0].shape(), c.out[0].dtype()}, attrs)};
}

const OpDef kSlicingOps[] = {
    {Op::slice, Save::nothing, slice_grad, kBatchable, jvp_linear},
    // StridedSliceGrad scatters the gradient back; it is linear, so its own gradient slices again.
    {Op::strided_slice,
     Save::nothing,
     [](const GradCtx& c) -> Grads {
         return {strided_slice_grad(c.grad(), c.in_meta[0].shape, c.attrs)};
     },
     kNotBatchable,
     jvp_linear},
    {Op::strided_slice_grad,
     Save::nothing,
     [](const GradCtx& c) -> Grads { return {strided_slice_from(c.grad(), c.attrs)}; },
     kNotBatchable,
     jvp_linear},
    {Op::pad, Save::nothing, pad_grad, kBatchable, pad_jvp},
    // MirrorPad and MirrorPadGrad are each other's transpose (both linear).
    {Op::mirror_pad,
     Save::nothing,
     [](const GradCtx& c) -> Grads {
         return {mirror_pad_grad(c.grad(),
                                 c.attrs.get<std::vector<int64_t>>("paddings"),
                                 c.attrs.get<std::string>("mode"))};
     },
     kNotBatchable,
     jvp_linear},
    {Op::mirror_pad_grad,
     Save::nothing,
     [](const GradCtx& c) -> Grads {
         return {pad(c.grad(),
                     paired(c.attrs.get<std::vector<int64_t>>("paddings")),
                     c.attrs.get<std::string>("mode"))};
     },
     kNotBatchable,
     jvp_linear},
};

}  // namespace

std::span<const OpDef> slicing_op_defs() {
    return kSlicingOps;
}

// ---- public wrappers ----

Tensor slice(const Tensor& x, std::vector<int64_t> begin, std::vector<int64_t> size) {
    constexpr Op op = Op::slice;
    check_defined(op, x, "input");
    const int64_t rank = x.rank();
    if (static_cast<int64_t>(begin.size()) != rank || static_cast<int64_t>(size.size()) != rank) {
        op_fail(
            op,
            "Expected begin and size arguments to be 1-D tensors of size {}, but got shapes [{}] "
            "and [{}] instead.",
            rank,
            begin.size(),
            size.size());
    }
    const auto& dims = x.shape().dims();
    for (std::size_t i = 0; i < dims.size(); ++i) {
        const int64_t b = begin[i];
        int64_t& s = size[i];
        if (dims[i] == 0) {
            if (s == -1) s = 0;  // "to the end" of an empty axis
            if (b != 0 || s != 0) {
                op_fail(op,
                        "Expected begin[{}] == 0 (got {}) and size[{}] == 0 (got {}) when "
                        "input.dim_size({}) == 0",
                        i,
                        b,
                        i,
                        s,
                        i);
            }
            continue;
        }
        if (b < 0 || b > dims[i])
            op_fail(op, "Expected begin[{}] in [0, {}], but got {}", i, dims[i], b);
        if (s == -1) s = dims[i] - b;
        if (s < 0 || s > dims[i] - b)  // not b + s > dims[i]: that sum can wrap
            op_fail(op, "Expected size[{}] in [0, {}], but got {}", i, dims[i] - b, s);
    }
    const std::vector<int64_t> strides(dims.size(), 1);
    return apply(op,
                 {x},
                 maybe_view(x, Shape(size), begin, strides, size),
                 Attrs().set("begin", begin).set("size", size));
}

Tensor strided_slice(const Tensor& x,
                     std::vector<int64_t> begin,
                     std::vector<int64_t> end,
                     std::vector<int64_t> strides,
                     int64_t begin_mask,
                     int64_t end_mask,
                     int64_t ellipsis_mask,
                     int64_t new_axis_mask,
                     int64_t shrink_axis_mask) {
    constexpr Op op = Op::strided_slice;
    check_defined(op, x, "input");
    const StridedSliceSpec spec = strided_slice_spec(op,
                                                     x.shape(),
                                                     begin,
                                                     end,
                                                     strides,
                                                     begin_mask,
                                                     end_mask,
                                                     ellipsis_mask,
                                                     new_axis_mask,
                                                     shrink_axis_mask);
    const Attrs attrs = strided_slice_attrs(begin,
                                            end,
                                            strides,
                                            begin_mask,
                                            end_mask,
                                            ellipsis_mask,
                                            new_axis_mask,
                                            shrink_axis_mask,
                                            spec);
    return apply(op,
                 {x},
                 maybe_view(x, Shape(spec.final_shape), spec.begin, spec.strides, spec.sizes),
                 attrs);
}

Tensor pad(const Tensor& x,
           std::vector<std::pair<int64_t, int64_t>> paddings,
           std::string_view mode,
           double constant_values) {
    std::string m(mode);
    for (char& ch : m)
        ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    if (m != "CONSTANT" && m != "REFLECT" && m != "SYMMETRIC") {
        op_fail(Op::pad,
                "Value of argument `mode` expected to be one of \"CONSTANT\", \"REFLECT\", or "
                "\"SYMMETRIC\". Received `mode` = {}",
                mode);
    }
    const Op op = m == "CONSTANT" ? Op::pad : Op::mirror_pad;
    check_defined(op, x, "input");
    const auto& dims = x.shape().dims();
    if (paddings.size() != dims.size()) {
        op_fail(op,
                "The first dimension of paddings must be the rank of inputs[{},2] {}",
                paddings.size(),
                x.shape().debug_string());
    }
    std::vector<int64_t> out_dims = dims;
    for (std::size_t d = 0; d < dims.size(); ++d) {
        const auto [before, after] = paddings[d];
        if (before < 0 || after < 0) {
            op_fail(op,
                    "{}addings must be non-negative: {} {}",
                    op == Op::pad ? "P" : "p",
                    before,
                    after);
        }
        if (m == "REFLECT" && (before >= dims[d] || after >= dims[d])) {
            op_fail(op,
                    "paddings must be less than the dimension size: {}, {} not less than {}",
                    before,
                    after,
                    dims[d]);
        }
        if (m == "SYMMETRIC" && (before > dims[d] || after > dims[d])) {
            op_fail(op,
                    "paddings must be no greater than the dimension size: {}, {} greater than {}",
                    before,
                    after,
                    dims[d]);
        }
        const int64_t padded = checked_dim_add(dims[d], before, op_type(op));
        out_dims[d] = checked_dim_add(padded, after, op_type(op));
    }
    Attrs attrs;
    attrs.set("paddings", flat_paddings(paddings));
    if (op == Op::pad) {
        detail::check_number_fits(constant_values, x.dtype(), op_type(op));
        attrs.set("constant_values", constant_values);
    } else {
        attrs.set("mode", m);
    }
    return apply(op, {x}, {op_shape(out_dims, op_type(op)), x.dtype()}, attrs);
}

}  // namespace tapeflow
