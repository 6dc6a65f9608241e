// The batching rules of vectorized_map (vmap_rules.hpp). Most are generic over a family: the
// element-wise ops broadcast a batched input lifted to the output's rank; the axis ops run with
// their axis attributes shifted past the batch axis; the ops whose first axis is already a batch
// (convolutions, pooling, layer_norm, attention) fold the batch into it. Each rule calls apply()
// with the per-example call's attrs adjusted and the outputs' shapes given the batch axis, so the
// kernels are the ops' own. tests/autograd/test_vectorized_map.cpp checks every op of the op-case
// table against a loop over the examples.
#include "autograd/vmap_rules.hpp"

#include <algorithm>

#include <tapeflow/ops/array.hpp>
#include <tapeflow/ops/creation.hpp>
#include <tapeflow/ops/math.hpp>

#include "ops/apply.hpp"
#include "ops/nn_common.hpp"

namespace tapeflow {
namespace {

// A batched value with unit axes after the batch axis up to `rank` per-example axes, so that it
// broadcasts against the per-example values like the traced input did.
Tensor lifted(const VmapValue& v, int64_t rank) {
    if (!v.batched) return v.value;
    const Shape& s = v.value.shape();
    const int64_t own = s.rank() - 1;
    if (own >= rank) return v.value;
    std::vector<int64_t> dims{s[0]};
    dims.insert(dims.end(), static_cast<std::size_t>(rank - own), 1);
    dims.insert(dims.end(), s.dims().begin() + 1, s.dims().end());
    return reshape(v.value, Shape(std::move(dims)));
}

std::vector<Tensor> values(const VmapCall& c) {
    std::vector<Tensor> out;
    for (const VmapValue& v : c.in)
        out.push_back(v.value);
    return out;
}

VmapOutputs all_batched(std::vector<Tensor> outs) {
    VmapOutputs r;
    for (Tensor& t : outs)
        r.push_back({std::move(t), true});
    return r;
}

// The op on `inputs` with `attrs`, every output the traced one's with the batch axis in front;
// ops that never run a kernel (reshape, expand_dims, squeeze, stop_gradient) return views again.
VmapOutputs run(const VmapCall& c, const std::vector<Tensor>& inputs, const Attrs& attrs) {
    std::vector<OutputSpec> specs;
    const bool view = op_dispatch(c.op) == DispatchOn::none;
    for (const Tensor& t : c.traced_out)
        specs.push_back({with_batch(c.batch, t.shape()), t.dtype(), view ? 0 : -1, 0});
    return all_batched(apply_multi(c.op, inputs, specs, attrs));
}

bool any_batched(const VmapCall& c, std::initializer_list<std::size_t> inputs) {
    for (const std::size_t i : inputs) {
        if (i < c.in.size() && c.in[i].batched) return true;
    }
    return false;
}

int64_t shifted(int64_t axis) {
    return axis >= 0 ? axis + 1 : axis;
}

std::vector<int64_t> shifted(const std::vector<int64_t>& axes) {
    std::vector<int64_t> out;
    for (const int64_t a : axes)
        out.push_back(shifted(a));
    return out;
}

// ---- generic rules ----

// Element-wise ops with broadcasting (and the activation gradients, cast, where, ...).
VmapOutputs elementwise(const VmapCall& c) {
    const int64_t rank = c.traced_out[0].rank();
    std::vector<Tensor> inputs;
    for (const VmapValue& v : c.in)
        inputs.push_back(lifted(v, rank));
    return run(c, inputs, c.attrs);
}

// Ops whose inputs must have one shape (add_n).
VmapOutputs same_shape(const VmapCall& c) {
    std::vector<Tensor> inputs;
    for (const VmapValue& v : c.in)
        inputs.push_back(materialized(v, c.batch));
    return run(c, inputs, c.attrs);
}

// Ops that treat every axis before their last ones as independent rows (top_k, the cross-entropies
// of rank-2 logits are not: see fold_first): the same attrs, one more leading axis.
VmapOutputs leading(const VmapCall& c) {
    std::vector<Tensor> inputs;
    for (const VmapValue& v : c.in)
        inputs.push_back(materialized(v, c.batch));
    return run(c, inputs, c.attrs);
}

// One input, an integer attribute `axis` (argmax, cumsum, softmax, expand_dims, one_hot, ...).
template <const char* Name>
VmapOutputs axis_attr(const VmapCall& c) {
    Attrs attrs = c.attrs;
    attrs.set(Name, shifted(c.attrs.get<int64_t>(Name)));
    std::vector<Tensor> inputs;
    for (const VmapValue& v : c.in)
        inputs.push_back(materialized(v, c.batch));
    return run(c, inputs, attrs);
}

// A list-of-axes attribute (reduce_*: "axes"; squeeze: "squeeze_dims").
template <const char* Name>
VmapOutputs axes_attr(const VmapCall& c) {
    Attrs attrs = c.attrs;
    attrs.set(Name, shifted(c.attrs.get<std::vector<int64_t>>(Name)));
    return run(c, {c.in[0].value}, attrs);
}

// An attribute with one entry per axis, the batch axis's value in front (tile's multiples,
// slice's begin and size, the padding pairs, reshape's and broadcast_to's shapes).
Attrs prepend(Attrs attrs, const char* name, std::initializer_list<int64_t> front) {
    std::vector<int64_t> v(front);
    const AttrValue* old = nullptr;
    for (const auto& [key, value] : attrs.items()) {
        if (key == name) old = &value;
    }
    if (old != nullptr && std::holds_alternative<Shape>(*old)) {
        const auto& dims = std::get<Shape>(*old).dims();
        v.insert(v.end(), dims.begin(), dims.end());
        attrs.set(name, Shape(std::move(v)));
    } else {
        const auto& dims = attrs.get<std::vector<int64_t>>(name);
        v.insert(v.end(), dims.begin(), dims.end());
        attrs.set(name, std::move(v));
    }
    return attrs;
}

// ---- per-op rules ----

constexpr char kAxis[] = "axis";
constexpr char kAxes[] = "axes";
constexpr char kSqueezeDims[] = "squeeze_dims";

VmapOutputs reshape_rule(const VmapCall& c) {
    return run(c, {c.in[0].value}, prepend(c.attrs, "shape", {c.batch}));
}

VmapOutputs broadcast_to_rule(const VmapCall& c) {
    return run(c, {lifted(c.in[0], c.traced_out[0].rank())}, prepend(c.attrs, "shape", {c.batch}));
}

VmapOutputs transpose_rule(const VmapCall& c) {
    std::vector<int64_t> perm{0};
    for (const int64_t p : c.attrs.get<std::vector<int64_t>>("perm"))
        perm.push_back(p + 1);
    Attrs attrs = c.attrs;
    attrs.set("perm", std::move(perm));
    return run(c, {c.in[0].value}, attrs);
}

VmapOutputs tile_rule(const VmapCall& c) {
    return run(c, {c.in[0].value}, prepend(c.attrs, "multiples", {1}));
}

VmapOutputs slice_rule(const VmapCall& c) {
    return run(c, {c.in[0].value}, prepend(prepend(c.attrs, "begin", {0}), "size", {c.batch}));
}

VmapOutputs strided_slice_rule(const VmapCall& c) {
    Attrs attrs = prepend(c.attrs, "proc_begin", {0});
    attrs = prepend(attrs, "proc_strides", {1});
    attrs = prepend(attrs, "proc_sizes", {c.batch});
    if (c.op == Op::strided_slice_grad) attrs = prepend(attrs, "shape", {c.batch});
    return run(c, {c.in[0].value}, attrs);
}

VmapOutputs pad_rule(const VmapCall& c) {
    return run(c, {c.in[0].value}, prepend(c.attrs, "paddings", {0, 0}));
}

// concat, stack, unstack, split, split_v: every input batched, the axis past the batch axis.
VmapOutputs joined_rule(const VmapCall& c) {
    return axis_attr<kAxis>(c);
}

VmapOutputs matmul_rule(const VmapCall& c) {
    const bool batch_op = c.op == Op::batch_matmul;
    const bool ta = c.attrs.get<bool>(batch_op ? "adj_x" : "transpose_a");
    const bool tb = c.attrs.get<bool>(batch_op ? "adj_y" : "transpose_b");
    const VmapValue& a = c.in[0];
    const VmapValue& b = c.in[1];
    if (!batch_op && a.batched && !b.batched && !ta) {
        // One gemm with the examples' rows stacked: [B*m, k] x W.
        const Shape& s = a.value.shape();
        const Tensor y = matmul(reshape(a.value, Shape{s[0] * s[1], s[2]}), b.value, false, tb);
        return {{reshape(y, with_batch(c.batch, c.traced_out[0].shape())), true}};
    }
    const Shape& ea = c.traced_in[0].shape();
    if (!batch_op && a.batched && b.batched && ea[ta ? 0 : 1] == 1) {
        // Per-example outer products (a weight's gradient x^T dy of one example): a broadcasting
        // multiply [B, m, 1] * [B, 1, n], not B gemms with k = 1.
        const Shape& eb = c.traced_in[1].shape();
        const int64_t m = ea[ta ? 1 : 0];
        const int64_t n = eb[tb ? 0 : 1];
        return {{multiply(reshape(a.value, Shape{c.batch, m, 1}),
                          reshape(b.value, Shape{c.batch, 1, n})),
                 true}};
    }
    // Batched operands get unit batch axes up to the output's per-example rank, so that their
    // batch axes broadcast against the other operand's as the per-example ones did.
    const int64_t rank = c.traced_out[0].rank();
    return {{matmul(lifted(a, rank), lifted(b, rank), ta, tb), true}};
}

// gather(params, indices): both batched, one more batch dim (TF's pfor); embedding lookups
// (params the same for every example, axis 0) need no copy of the table.
VmapOutputs gather_rule(const VmapCall& c) {
    const auto axis = c.attrs.get<int64_t>("axis");
    const auto batch_dims = c.attrs.get<int64_t>("batch_dims");
    if (!c.in[0].batched && axis == 0 && batch_dims == 0) {
        return {{gather(c.in[0].value, c.in[1].value, 0, 0), true}};
    }
    if (c.in[0].batched && !c.in[1].batched && batch_dims == 0) {
        return {{gather(c.in[0].value, c.in[1].value, axis + 1, 0), true}};
    }
    return {{gather(materialized(c.in[0], c.batch),
                    materialized(c.in[1], c.batch),
                    axis + 1,
                    batch_dims + 1),
             true}};
}

VmapOutputs gather_nd_rule(const VmapCall& c) {
    return {{gather_nd(materialized(c.in[0], c.batch),
                       materialized(c.in[1], c.batch),
                       c.attrs.get<int64_t>("batch_dims") + 1),
             true}};
}

// unsorted_segment_sum(data, ids) with ids the same for every example: the batch axis moves
// behind the segmented axes, so the segments index the same rows.
// The batch index of every element of a [B, ...] tensor of `shape`, in `dtype`.
Tensor batch_index(int64_t batch, const Shape& shape, DType dtype) {
    std::vector<int64_t> dims(static_cast<std::size_t>(shape.rank()), 1);
    dims[0] = batch;
    return broadcast_to(
        reshape(range(int64_t{0}, batch, int64_t{1}, dtype), Shape(std::move(dims))), shape);
}

// Per-example segment ids: example b's ids move to the segments [b * S, (b + 1) * S) of one
// segment sum over the flattened batch; ids outside [0, S), whose rows are dropped, become -1.
VmapOutputs segment_sum_batched_ids(const VmapCall& c) {
    const Tensor ids = c.in[1].value;
    const Tensor data = materialized(c.in[0], c.batch);
    const auto segments = c.attrs.get<int64_t>("num_segments");
    const Tensor offset = batch_index(c.batch, ids.shape(), ids.dtype()) *
                          scalar_like(ids, static_cast<double>(segments));
    const Tensor dropped =
        logical_or(less(ids, zeros_like(ids)),
                   greater_equal(ids, scalar_like(ids, static_cast<double>(segments))));
    const Tensor moved = where(dropped, scalar_like(ids, -1.0), ids + offset);
    // [B, ids..., rest] -> [B * ids..., rest] and ids likewise.
    const int64_t k = ids.rank();
    std::vector<int64_t> flat{-1};
    flat.insert(flat.end(), data.shape().dims().begin() + k, data.shape().dims().end());
    Attrs attrs = c.attrs;
    attrs.set("num_segments", segments * c.batch);
    std::vector<int64_t> out_dims{segments * c.batch};
    out_dims.insert(out_dims.end(), data.shape().dims().begin() + k, data.shape().dims().end());
    const Tensor y = apply(c.op,
                           {reshape(data, Shape(std::move(flat))), reshape(moved, Shape{-1})},
                           OutputSpec{Shape(std::move(out_dims)), c.traced_out[0].dtype()},
                           attrs);
    return {{reshape(y, with_batch(c.batch, c.traced_out[0].shape())), true}};
}

// scatter_nd(indices [..., K], updates): the batch index becomes one more leading coordinate.
VmapOutputs scatter_nd_rule(const VmapCall& c) {
    const Tensor indices = materialized(c.in[0], c.batch);
    const Tensor updates = materialized(c.in[1], c.batch);
    std::vector<int64_t> dims = indices.shape().dims();
    dims.back() = 1;
    const Tensor b = batch_index(c.batch, Shape(std::move(dims)), indices.dtype());
    return run(c, {concat({b, indices}, -1), updates}, prepend(c.attrs, "shape", {c.batch}));
}

VmapOutputs segment_sum_rule(const VmapCall& c) {
    if (c.in[1].batched) return segment_sum_batched_ids(c);
    const int64_t k = c.in[1].value.rank();
    const int64_t rank = c.in[0].value.rank();
    std::vector<int64_t> perm;
    for (int64_t i = 1; i <= k; ++i)
        perm.push_back(i);
    perm.push_back(0);
    for (int64_t i = k + 1; i < rank; ++i)
        perm.push_back(i);
    const Tensor data = transpose(c.in[0].value, perm);
    Shape out = c.traced_out[0].shape();
    std::vector<int64_t> dims{out[0], c.batch};
    dims.insert(dims.end(), out.dims().begin() + 1, out.dims().end());
    const Tensor y = apply(c.op,
                           {data, c.in[1].value},
                           OutputSpec{Shape(std::move(dims)), c.traced_out[0].dtype()},
                           c.attrs);
    std::vector<int64_t> back{1, 0};
    for (int64_t i = 2; i < y.rank(); ++i)
        back.push_back(i);
    return {{transpose(y, back), true}};
}

VmapOutputs bias_add_rule(const VmapCall& c) {
    if (c.in[1].batched || c.attrs.get<bool>("nchw")) return {};
    return run(c, {c.in[0].value, c.in[1].value}, c.attrs);
}

// Ops whose inputs `data` share a leading batch axis of their own (NHWC images, the rows of
// layer_norm, attention's batch): the examples' batches are folded into one, [B*N, ...], and
// unfolded after. The other inputs (filters, scales) must be the same for every example.
template <int... Data>
VmapOutputs fold_first(const VmapCall& c) {
    std::vector<bool> is_data(std::max<std::size_t>(c.in.size(), 8), false);
    ((is_data[Data] = true), ...);
    std::vector<Tensor> inputs;
    for (std::size_t i = 0; i < c.in.size(); ++i) {
        if (!is_data[i]) {
            if (c.in[i].batched) return {};  // a per-example filter: run per example
            inputs.push_back(c.in[i].value);
            continue;
        }
        const Tensor x = materialized(c.in[i], c.batch);
        std::vector<int64_t> dims{x.shape()[0] * x.shape()[1]};
        dims.insert(dims.end(), x.shape().dims().begin() + 2, x.shape().dims().end());
        inputs.push_back(reshape(x, Shape(std::move(dims))));
    }
    std::vector<OutputSpec> specs;
    for (const Tensor& t : c.traced_out) {
        std::vector<int64_t> dims = t.shape().dims();
        dims[0] *= c.batch;
        specs.push_back({Shape(std::move(dims)), t.dtype()});
    }
    std::vector<Tensor> outs = apply_multi(c.op, inputs, specs, c.attrs);
    for (std::size_t j = 0; j < outs.size(); ++j)
        outs[j] = reshape(outs[j], with_batch(c.batch, c.traced_out[j].shape()));
    return all_batched(std::move(outs));
}

// MaxPool's second output, the flat index of each window's maximum in the input, counts from the
// start of the folded batch: example b's indices are made its own again.
VmapOutputs max_pool_rule(const VmapCall& c) {
    VmapOutputs out = fold_first<0>(c);
    if (out.size() < 2) return out;
    Tensor& index = out[1].value;
    const double per_example = static_cast<double>(c.traced_in[0].num_elements());
    index = index -
            batch_index(c.batch, index.shape(), index.dtype()) * scalar_like(index, per_example);
    return out;
}

// Attention with a bias or a mask broadcast over its batch: per example.
template <int... Data>
VmapOutputs attention_rule(const VmapCall& c) {
    if (c.attrs.get<bool>("has_bias") || c.attrs.get<bool>("has_mask")) return {};
    return fold_first<Data...>(c);
}

// The labels of every example checked as the per-example call checked them (the CPU kernel
// relies on it), then one call on the leading rows.
VmapOutputs sparse_xent_rule(const VmapCall& c) {
    nn_detail::check_label_range(materialized(c.in[1], c.batch), c.traced_in[0].shape()[-1]);
    return leading(c);
}

// Identity's copy is not needed: tensors are immutable.
VmapOutputs identity_rule(const VmapCall& c) {
    return {c.in[0]};
}

// The shape of a batched value is the per-example one (the same for every example).
VmapOutputs shape_rule(const VmapCall& c) {
    return {{c.traced_out[0], false}};
}

}  // namespace

Shape with_batch(int64_t batch, const Shape& shape) {
    std::vector<int64_t> dims{batch};
    dims.insert(dims.end(), shape.dims().begin(), shape.dims().end());
    return Shape(std::move(dims));
}

Tensor materialized(const VmapValue& v, int64_t batch) {
    return v.batched ? v.value : broadcast_to(v.value, with_batch(batch, v.value.shape()));
}

VmapFn vmap_rule(Op op) {
    switch (op) {
        case Op::identity:
            return identity_rule;
        case Op::cast:
        case Op::stop_gradient:
        case Op::add:
        case Op::subtract:
        case Op::multiply:
        case Op::divide:
        case Op::floordiv:
        case Op::floormod:
        case Op::pow:
        case Op::maximum:
        case Op::minimum:
        case Op::squared_difference:
        case Op::divide_no_nan:
        case Op::negative:
        case Op::abs:
        case Op::sign:
        case Op::exp:
        case Op::expm1:
        case Op::log:
        case Op::log1p:
        case Op::sqrt:
        case Op::rsqrt:
        case Op::square:
        case Op::reciprocal:
        case Op::sin:
        case Op::cos:
        case Op::tanh:
        case Op::sigmoid:
        case Op::erf:
        case Op::floor:
        case Op::ceil:
        case Op::round:
        case Op::softplus:
        case Op::equal:
        case Op::not_equal:
        case Op::less:
        case Op::less_equal:
        case Op::greater:
        case Op::greater_equal:
        case Op::logical_and:
        case Op::logical_or:
        case Op::logical_not:
        case Op::where:
        case Op::relu:
        case Op::relu_grad:
        case Op::relu6:
        case Op::relu6_grad:
        case Op::elu:
        case Op::elu_grad:
        case Op::selu:
        case Op::selu_grad:
        case Op::leaky_relu:
        case Op::leaky_relu_grad:
        case Op::gelu:
        case Op::gelu_approximate:
        case Op::silu:
        case Op::softsign:
        case Op::log_sigmoid:
            return elementwise;
        case Op::add_n:
            return same_shape;
        case Op::reduce_sum:
        case Op::reduce_mean:
        case Op::reduce_max:
        case Op::reduce_min:
        case Op::reduce_prod:
        case Op::reduce_any:
        case Op::reduce_all:
            return axes_attr<kAxes>;
        case Op::squeeze:
            return axes_attr<kSqueezeDims>;
        case Op::argmax:
        case Op::argmin:
        case Op::cumsum:
        case Op::cumprod:
        case Op::softmax:
        case Op::log_softmax:
        case Op::expand_dims:
        case Op::one_hot:
            return axis_attr<kAxis>;
        case Op::concat:
        case Op::stack:
        case Op::unstack:
        case Op::split:
        case Op::split_v:
            return joined_rule;
        case Op::reshape:
            return reshape_rule;
        case Op::broadcast_to:
            return broadcast_to_rule;
        case Op::transpose:
            return transpose_rule;
        case Op::tile:
            return tile_rule;
        case Op::shape:
            return shape_rule;
        case Op::slice:
            return slice_rule;
        case Op::strided_slice:
        case Op::strided_slice_grad:
            return strided_slice_rule;
        case Op::pad:
        case Op::mirror_pad:
        case Op::mirror_pad_grad:
            return pad_rule;
        case Op::gather:
            return gather_rule;
        case Op::gather_nd:
            return gather_nd_rule;
        case Op::unsorted_segment_sum:
            return segment_sum_rule;
        case Op::scatter_nd:
            return scatter_nd_rule;
        case Op::matmul:
        case Op::batch_matmul:
            return matmul_rule;
        case Op::bias_add:
            return bias_add_rule;
        case Op::top_k:
        case Op::softmax_xent:
        case Op::sparse_xent_grad:
            return leading;
        case Op::sparse_softmax_xent:
            return sparse_xent_rule;
        case Op::conv2d:
        case Op::depthwise_conv2d:
        case Op::max_pool:
            return max_pool_rule;
        case Op::avg_pool:
        case Op::avg_pool_grad:
        case Op::layer_norm:
            return fold_first<0>;
        case Op::conv2d_backprop_input:
        case Op::depthwise_conv2d_backprop_input:
            return fold_first<1>;
        case Op::attention:
            return attention_rule<0, 1, 2>;
        case Op::attention_grad:
            return attention_rule<0, 1, 2, 3, 4, 5>;
        default:
            return nullptr;
    }
}

}  // namespace tapeflow
