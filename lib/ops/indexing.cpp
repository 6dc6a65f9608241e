// Indexing ops: slice, strided_slice, pad (CONSTANT, REFLECT, SYMMETRIC), gather, gather_nd,
// scatter_nd and unsorted_segment_sum. The wrappers check arguments with TensorFlow's messages and
// compute output shapes; the gradient rows follow TensorFlow's array_grad.py. The internal
// primitives strided_slice_grad and mirror_pad_grad exist only as gradients. Kernels:
// lib/kernels/cpu/indexing_cpu.cpp.
#include <algorithm>
#include <cctype>
#include <optional>
#include <string>

#include <tapeflow/ops/array.hpp>
#include <tapeflow/ops/creation.hpp>
#include <tapeflow/ops/math.hpp>

#include "ops/apply.hpp"
#include "ops/op_families.hpp"

namespace tapeflow {
namespace {

void check_defined(Op op, const Tensor& t, std::string_view what) {
    if (!t.defined()) op_fail(op, "{} is an undefined tensor", what);
}

void check_index_dtype(Op op, const Tensor& t, std::string_view what) {
    if (t.dtype() != DType::int32 && t.dtype() != DType::int64) {
        op_fail(op, "{} must be int32 or int64, got {}", what, dtype_name(t.dtype()));
    }
}

int64_t product(const std::vector<int64_t>& dims, std::size_t from, std::size_t to) {
    int64_t n = 1;
    for (std::size_t i = from; i < to; ++i)
        n *= dims[i];
    return n;
}

std::vector<int64_t> sub_dims(const std::vector<int64_t>& dims, std::size_t from, std::size_t to) {
    return {dims.begin() + static_cast<std::ptrdiff_t>(from),
            dims.begin() + static_cast<std::ptrdiff_t>(to)};
}

std::string dims_string(const std::vector<int64_t>& dims) {
    return Shape(dims).debug_string();
}

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

// ---- gather ----

// Params gradient of gather when it cannot be IndexedSlices (axis > 0 or batch_dims > 0), as
// TensorFlow's _GatherV2Grad: move the gathered axes in front, sum rows by index with
// unsorted_segment_sum (batch b's indices shifted by b * params.shape[axis]), move them back.
Tensor gather_dense_grad(const Tensor& grad,
                         const Tensor& indices,
                         const Shape& params_shape,
                         int64_t axis,
                         int64_t batch_dims) {
    const auto& p = params_shape.dims();
    const auto& idims = indices.shape().dims();
    const auto nb = static_cast<std::size_t>(batch_dims);
    const auto ax = static_cast<std::size_t>(axis);
    const std::size_t na = ax - nb;            // params axes between the batch axes and `axis`
    const std::size_t nj = idims.size() - nb;  // index axes after the batch axes
    const std::size_t ni = p.size() - ax - 1;  // params axes after `axis`
    const int64_t batch = product(p, 0, nb);
    const int64_t num_indices = product(idims, nb, idims.size());
    const int64_t n = p[ax];
    if (batch * num_indices == 0) {
        const DeviceScope scope(grad.device());
        return zeros(params_shape, grad.dtype());
    }
    // grad is [B, A, J, I] -> [B, J, A, I] -> [B*J, A, I].
    std::vector<int64_t> perm;
    for (std::size_t i = 0; i < nb; ++i)
        perm.push_back(static_cast<int64_t>(i));
    for (std::size_t i = 0; i < nj; ++i)
        perm.push_back(static_cast<int64_t>(nb + na + i));
    for (std::size_t i = 0; i < na; ++i)
        perm.push_back(static_cast<int64_t>(nb + i));
    for (std::size_t i = 0; i < ni; ++i)
        perm.push_back(static_cast<int64_t>(nb + na + nj + i));
    Tensor values = na > 0 && nj > 0 ? transpose(grad, perm) : grad;
    std::vector<int64_t> flat_dims{batch * num_indices};
    for (std::size_t i = 0; i < na; ++i)
        flat_dims.push_back(p[nb + i]);
    for (std::size_t i = 0; i < ni; ++i)
        flat_dims.push_back(p[ax + 1 + i]);
    values = reshape(values, Shape(flat_dims));

    Tensor ids = reshape(indices, Shape{batch, num_indices});
    if (nb > 0) {
        const DeviceScope scope(indices.device());
        const Tensor offsets =
            range(0, static_cast<double>(batch * n), static_cast<double>(n), indices.dtype());
        ids = add(ids, reshape(offsets, Shape{batch, 1}));
    }
    ids = reshape(ids, Shape{batch * num_indices});
    Tensor summed = unsorted_segment_sum(values, ids, batch * n);  // [B*N, A, I]

    // [B*N, A, I] -> [B, N, A, I] -> [B, A, N, I].
    std::vector<int64_t> split_dims = sub_dims(p, 0, nb);
    split_dims.push_back(n);
    for (std::size_t i = 0; i < na; ++i)
        split_dims.push_back(p[nb + i]);
    for (std::size_t i = 0; i < ni; ++i)
        split_dims.push_back(p[ax + 1 + i]);
    summed = reshape(summed, Shape(split_dims));
    if (na == 0) return summed;
    std::vector<int64_t> back;
    for (std::size_t i = 0; i < nb; ++i)
        back.push_back(static_cast<int64_t>(i));
    for (std::size_t i = 0; i < na; ++i)
        back.push_back(static_cast<int64_t>(nb + 1 + i));
    back.push_back(static_cast<int64_t>(nb));
    for (std::size_t i = 0; i < ni; ++i)
        back.push_back(static_cast<int64_t>(nb + 1 + na + i));
    return transpose(summed, back);
}

// gather_nd with batch_dims b as a plain gather_nd: each index tuple gets its b batch coordinates
// prepended ([B..., J..., K] -> [B..., J..., b + K]).
Tensor with_batch_coordinates(const Tensor& indices, int64_t batch_dims) {
    const auto& idims = indices.shape().dims();
    const auto nb = static_cast<std::size_t>(batch_dims);
    const int64_t batch = product(idims, 0, nb);
    std::vector<int64_t> coords(static_cast<std::size_t>(batch * batch_dims));
    for (int64_t flat = 0; flat < batch; ++flat) {
        int64_t rest = flat;
        for (auto d = batch_dims - 1; d >= 0; --d) {
            coords[static_cast<std::size_t>(flat * batch_dims + d)] = rest % idims[d];
            rest /= idims[d];
        }
    }
    std::vector<int64_t> coord_dims = sub_dims(idims, 0, nb);
    coord_dims.resize(idims.size() - 1, 1);
    coord_dims.push_back(batch_dims);
    std::vector<int64_t> target = sub_dims(idims, 0, idims.size() - 1);
    target.push_back(batch_dims);
    const DeviceScope scope(indices.device());
    const Tensor c =
        broadcast_to(constant(coords, Shape(coord_dims), indices.dtype()), Shape(target));
    return concat({c, indices}, static_cast<int64_t>(idims.size()) - 1);
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

Grads gather_grad(const GradCtx& c) {
    const Tensor& indices = c.in[1];
    const Shape& params_shape = c.in_meta[0].shape;
    const auto axis = c.attrs.get<int64_t>("axis");
    const auto batch_dims = c.attrs.get<int64_t>("batch_dims");
    if (axis != 0 || batch_dims != 0) {
        return {gather_dense_grad(c.grad(), indices, params_shape, axis, batch_dims), Gradient()};
    }
    // Only the gathered rows get a gradient: IndexedSlices, as TensorFlow returns.
    const int64_t n = indices.num_elements();
    std::vector<int64_t> value_dims{n};
    value_dims.insert(value_dims.end(), params_shape.dims().begin() + 1, params_shape.dims().end());
    return {IndexedSlices{
                reshape(c.grad(), Shape(value_dims)), reshape(indices, Shape{n}), params_shape},
            Gradient()};
}

Grads gather_nd_grad(const GradCtx& c) {  // ScatterNd of the gradient into zeros
    const auto batch_dims = c.attrs.get<int64_t>("batch_dims");
    const Tensor indices = batch_dims > 0 ? with_batch_coordinates(c.in[1], batch_dims) : c.in[1];
    return {scatter_nd(indices, c.grad(), c.in_meta[0].shape), Gradient()};
}

Grads unsorted_segment_sum_grad(const GradCtx& c) {
    // data[i] went to row ids[i]: its gradient is that row of grad, or zero when the id was out of
    // range (TensorFlow's _GatherDropNegatives). Out-of-range ids read an extra zero row.
    const Tensor& ids = c.in[1];
    const auto num_segments = c.attrs.get<int64_t>("num_segments");
    const Tensor& grad = c.grad();
    const DeviceScope scope(grad.device());
    if (num_segments == 0) return {zeros(c.in_meta[0].shape, grad.dtype()), Gradient()};
    const Tensor valid =
        logical_and(greater_equal(ids, scalar_like(ids, 0)),
                    less(ids, scalar_like(ids, static_cast<double>(num_segments))));
    const Tensor safe = where(valid, ids, scalar_like(ids, static_cast<double>(num_segments)));
    std::vector<std::pair<int64_t, int64_t>> extra_row(static_cast<std::size_t>(grad.rank()),
                                                       {0, 0});
    extra_row[0].second = 1;
    return {gather(pad(grad, extra_row), safe), Gradient()};
}

const OpDef kIndexingOps[] = {
    {Op::slice, Save::nothing, slice_grad, kBatchable},
    // StridedSliceGrad scatters the gradient back; it is linear, so its own gradient slices again.
    {Op::strided_slice,
     Save::nothing,
     [](const GradCtx& c) -> Grads {
         return {strided_slice_grad(c.grad(), c.in_meta[0].shape, c.attrs)};
     }},
    {Op::strided_slice_grad,
     Save::nothing,
     [](const GradCtx& c) -> Grads {
         return {strided_slice_from(c.grad(), c.attrs)};
     }},
    {Op::pad, Save::nothing, pad_grad, kBatchable},
    // MirrorPad and MirrorPadGrad are each other's transpose (both linear).
    {Op::mirror_pad,
     Save::nothing,
     [](const GradCtx& c) -> Grads {
         return {mirror_pad_grad(c.grad(),
                                 c.attrs.get<std::vector<int64_t>>("paddings"),
                                 c.attrs.get<std::string>("mode"))};
     }},
    {Op::mirror_pad_grad,
     Save::nothing,
     [](const GradCtx& c) -> Grads {
         return {pad(c.grad(),
                     paired(c.attrs.get<std::vector<int64_t>>("paddings")),
                     c.attrs.get<std::string>("mode"))};
     }},
    {Op::gather, Save::inputs, gather_grad},
    {Op::gather_nd, Save::inputs, gather_nd_grad},
    // ScatterNd: d/d(updates) gathers the gradient at the same indices; indices have none.
    {Op::scatter_nd,
     Save::inputs,
     [](const GradCtx& c) -> Grads {
         return {Gradient(), gather_nd(c.grad(), c.in[0])};
     }},
    {Op::unsorted_segment_sum, Save::inputs, unsorted_segment_sum_grad},
};

}  // namespace

std::span<const OpDef> indexing_op_defs() {
    return kIndexingOps;
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
        attrs.set("constant_values", constant_values);
    } else {
        attrs.set("mode", m);
    }
    return apply(op, {x}, {op_shape(out_dims, op_type(op)), x.dtype()}, attrs);
}

Tensor gather(const Tensor& params, const Tensor& indices, int64_t axis, int64_t batch_dims) {
    constexpr Op op = Op::gather;
    check_defined(op, params, "params");
    check_defined(op, indices, "indices");
    check_index_dtype(op, indices, "indices");
    const int64_t prank = params.rank();
    const int64_t irank = indices.rank();
    if (prank < 1) op_fail(op, "params must be at least 1 dimensional");
    if (axis < -prank || axis >= prank) {
        op_fail(op, "Expected axis in the range [{}, {}), but got {}", -prank, prank, axis);
    }
    if (axis < 0) axis += prank;
    if (batch_dims != 0) {
        if (batch_dims < -irank || batch_dims > irank) {
            op_fail(op,
                    "Expected batch_dims in the range [{}, {}], but got {}",
                    -irank,
                    irank,
                    batch_dims);
        }
        if (batch_dims < 0) batch_dims += irank;
        if (batch_dims >= prank) {
            op_fail(op, "batch_dims ({}) must be less than rank(params) ({}).", batch_dims, prank);
        }
        if (axis < batch_dims) {
            op_fail(
                op, "batch_dims ({}) must be less than or equal to axis ({}).", batch_dims, axis);
        }
        for (int64_t i = 0; i < batch_dims; ++i) {
            if (params.shape().dims()[i] != indices.shape().dims()[i]) {
                op_fail(op,
                        "params.shape[{}]: {} should be equal to indices.shape[{}]: {}",
                        i,
                        params.shape().dims()[i],
                        i,
                        indices.shape().dims()[i]);
            }
        }
    }
    const auto& p = params.shape().dims();
    std::vector<int64_t> out_dims = sub_dims(p, 0, static_cast<std::size_t>(axis));
    const auto& idims = indices.shape().dims();
    out_dims.insert(out_dims.end(), idims.begin() + batch_dims, idims.end());
    out_dims.insert(out_dims.end(), p.begin() + axis + 1, p.end());
    return apply(op,
                 {params, indices},
                 {Shape(out_dims), params.dtype()},
                 Attrs().set("axis", axis).set("batch_dims", batch_dims));
}

Tensor gather_nd(const Tensor& params, const Tensor& indices, int64_t batch_dims) {
    constexpr Op op = Op::gather_nd;
    check_defined(op, params, "params");
    check_defined(op, indices, "indices");
    check_index_dtype(op, indices, "indices");
    const int64_t prank = params.rank();
    const int64_t irank = indices.rank();
    if (prank < 1) op_fail(op, "params must be at least a vector");
    if (irank < 1) op_fail(op, "indices must be at least a vector");
    if (batch_dims < 0) op_fail(op, "batch_dims must be non-negative, got {}", batch_dims);
    if (batch_dims >= irank) {
        op_fail(op, "batch_dims ({}) must be less than rank(indices) ({}).", batch_dims, irank);
    }
    if (batch_dims >= prank) {
        op_fail(op, "batch_dims ({}) must be less than rank(params) ({}).", batch_dims, prank);
    }
    const auto& p = params.shape().dims();
    const auto& idims = indices.shape().dims();
    for (int64_t i = 0; i < batch_dims; ++i) {
        if (p[i] != idims[i]) {
            op_fail(op,
                    "params.shape[{}]: {} should be equal to indices.shape[{}]: {}",
                    i,
                    p[i],
                    i,
                    idims[i]);
        }
    }
    const int64_t k = idims.back();
    if (k > prank - batch_dims) {
        op_fail(op,
                "index innermost dimension length must be <= params rank; saw: {} vs. {}",
                k,
                prank - batch_dims);
    }
    std::vector<int64_t> out_dims = sub_dims(idims, 0, idims.size() - 1);
    out_dims.insert(out_dims.end(), p.begin() + batch_dims + k, p.end());
    return apply(op,
                 {params, indices},
                 {Shape(out_dims), params.dtype()},
                 Attrs().set("batch_dims", batch_dims));
}

Tensor scatter_nd(const Tensor& indices, const Tensor& updates, const Shape& shape) {
    constexpr Op op = Op::scatter_nd;
    check_defined(op, indices, "indices");
    check_defined(op, updates, "updates");
    check_index_dtype(op, indices, "indices");
    if (indices.rank() < 1)
        op_fail(
            op, "indices must be at least a vector, got shape {}", indices.shape().debug_string());
    const auto& idims = indices.shape().dims();
    const auto& udims = updates.shape().dims();
    const auto& sdims = shape.dims();
    const int64_t k = idims.back();
    if (k > shape.rank()) {
        op_fail(
            op,
            "indices.shape[-1] must be <= shape.rank(), but saw indices shape: {} and shape: {}",
            indices.shape().debug_string(),
            shape.debug_string());
    }
    const std::size_t outer = idims.size() - 1;
    const std::size_t inner = sdims.size() - static_cast<std::size_t>(k);
    if (udims.size() != outer + inner || sub_dims(udims, 0, outer) != sub_dims(idims, 0, outer)) {
        op_fail(op,
                "Dimensions [0,{}) of indices[shape={}] = {} must match dimensions [0,{}) of "
                "updates[shape={}] = {}",
                outer,
                indices.shape().debug_string(),
                dims_string(sub_dims(idims, 0, outer)),
                outer,
                updates.shape().debug_string(),
                dims_string(sub_dims(udims, 0, std::min(outer, udims.size()))));
    }
    if (sub_dims(udims, outer, udims.size()) !=
        sub_dims(sdims, static_cast<std::size_t>(k), sdims.size())) {
        op_fail(op,
                "Dimensions [{},{}) of input[shape={}] = {} must match dimensions [{},{}) of "
                "updates[shape={}] = {}",
                k,
                sdims.size(),
                shape.debug_string(),
                dims_string(sub_dims(sdims, static_cast<std::size_t>(k), sdims.size())),
                outer,
                udims.size(),
                updates.shape().debug_string(),
                dims_string(sub_dims(udims, outer, udims.size())));
    }
    if (shape.num_elements() == 0 && updates.num_elements() != 0) {
        op_fail(op, "Indices and updates specified for empty output shape");
    }
    return apply(op, {indices, updates}, {shape, updates.dtype()}, Attrs().set("shape", shape));
}

Tensor unsorted_segment_sum(const Tensor& data, const Tensor& segment_ids, int64_t num_segments) {
    constexpr Op op = Op::unsorted_segment_sum;
    check_defined(op, data, "data");
    check_defined(op, segment_ids, "segment_ids");
    check_index_dtype(op, segment_ids, "segment_ids");
    if (num_segments < 0)
        op_fail(op, "Input num_segments == {} must not be negative.", num_segments);
    const auto& d = data.shape().dims();
    const auto& ids = segment_ids.shape().dims();
    if (ids.size() > d.size() || !std::equal(ids.begin(), ids.end(), d.begin())) {
        op_fail(op,
                "data.shape = {} does not start with segment_ids.shape = {}",
                data.shape().debug_string(),
                segment_ids.shape().debug_string());
    }
    std::vector<int64_t> out_dims{num_segments};
    out_dims.insert(out_dims.end(), d.begin() + static_cast<std::ptrdiff_t>(ids.size()), d.end());
    return apply(op,
                 {data, segment_ids},
                 {Shape(out_dims), data.dtype()},
                 Attrs().set("num_segments", num_segments));
}

}  // namespace tapeflow
