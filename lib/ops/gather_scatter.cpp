// Gathers and scatters: gather, gather_nd, scatter_nd and unsorted_segment_sum. The wrappers check
// arguments (index dtypes, batch dims) with TensorFlow's messages and compute output shapes; the
// gradient rows follow TensorFlow's array_grad.py (gather's is IndexedSlices, as TensorFlow's).
// Kernels: lib/kernels/cpu/gather_cpu.cpp. Slicing and padding: slicing.cpp.
#include <algorithm>
#include <cctype>
#include <optional>
#include <string>

#include <tapeflow/ops/array.hpp>
#include <tapeflow/ops/creation.hpp>
#include <tapeflow/ops/math.hpp>

#include "ops/apply.hpp"
#include "ops/index_common.hpp"
#include "ops/op_families.hpp"

namespace tapeflow {
namespace {

using index_detail::check_defined;
using index_detail::dims_string;
using index_detail::product;

void check_index_dtype(Op op, const Tensor& t, std::string_view what) {
    if (t.dtype() != DType::int32 && t.dtype() != DType::int64) {
        op_fail(op, "{} must be int32 or int64, got {}", what, dtype_name(t.dtype()));
    }
}

std::vector<int64_t> sub_dims(const std::vector<int64_t>& dims, std::size_t from, std::size_t to) {
    return {dims.begin() + static_cast<std::ptrdiff_t>(from),
            dims.begin() + static_cast<std::ptrdiff_t>(to)};
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

const OpDef kGatherScatterOps[] = {
    {Op::gather, Save::inputs, gather_grad, kNotBatchable, jvp_linear},
    {Op::gather_nd, Save::inputs, gather_nd_grad, kNotBatchable, jvp_linear},
    // ScatterNd: d/d(updates) gathers the gradient at the same indices; indices have none.
    {Op::scatter_nd,
     Save::inputs,
     [](const GradCtx& c) -> Grads {
         return {Gradient(), gather_nd(c.grad(), c.in[0])};
     },
     kNotBatchable,
     jvp_linear},
    {Op::unsorted_segment_sum, Save::inputs, unsorted_segment_sum_grad, kNotBatchable, jvp_linear},
};

}  // namespace

std::span<const OpDef> gather_scatter_op_defs() {
    return kGatherScatterOps;
}

// ---- public wrappers ----

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
