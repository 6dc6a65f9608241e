// The gradient table: one OpDef row per op, collected from the family files. Every op in
// op_list.def must have exactly one row (checked when the table is built and by
// tests/ops/test_registry.cpp).
#include "ops/op_def.hpp"

#include <array>

#include <tapeflow/core/error.hpp>
#include <tapeflow/ops/creation.hpp>

#include "ops/apply.hpp"
#include "ops/op_families.hpp"

namespace tapeflow {
namespace {

std::array<const OpDef*, kNumOps> build_table() {
    std::array<const OpDef*, kNumOps> table{};
    for (auto rows : all_op_defs()) {
        for (const OpDef& row : rows) {
            const auto i = static_cast<std::size_t>(row.op);
            if (table[i] != nullptr) {
                throw errors::InternalError(fmt::format(
                    "op '{}' has two gradient rows; this is a tapeflow bug", op_name(row.op)));
            }
            table[i] = &row;
        }
    }
    return table;
}

}  // namespace

Shape GradCtx::batched(const Shape& shape) const {
    if (batch_dims == 0) return shape;
    const auto& g = grads[0].shape().dims();
    std::vector<int64_t> dims(g.begin(), g.begin() + batch_dims);
    dims.insert(dims.end(), shape.dims().begin(), shape.dims().end());
    return Shape(std::move(dims));
}

namespace {

// The spec of output j, a view of the same input at the same offset when the primal output is one.
OutputSpec spec_like(const JvpCtx& c, std::size_t j) {
    const Tensor& y = c.out[j];
    OutputSpec spec{y.shape(), y.dtype()};
    for (std::size_t i = 0; i < c.in.size(); ++i) {
        const TensorImpl& in = *c.in[i].impl();
        const TensorImpl& out = *y.impl();
        if (in.storage != out.storage || out.offset < in.offset) continue;
        spec.alias_input = static_cast<int>(i);
        spec.byte_offset = out.offset - in.offset;
        break;
    }
    return spec;
}

// `c.op` on `inputs` with the primal call's attrs and output specs.
std::vector<Tensor> rerun(const JvpCtx& c, const std::vector<Tensor>& inputs) {
    std::vector<OutputSpec> specs;
    specs.reserve(c.out.size());
    for (std::size_t j = 0; j < c.out.size(); ++j)
        specs.push_back(spec_like(c, j));
    return apply_multi(c.op, inputs, specs, c.attrs);
}

Tangents only_floating(const JvpCtx& c, std::vector<Tensor> ys) {
    for (std::size_t j = 0; j < ys.size(); ++j) {
        if (!is_floating(c.out[j].dtype())) ys[j] = Tensor();
    }
    return ys;
}

}  // namespace

Tangents jvp_linear(const JvpCtx& c) {
    std::vector<Tensor> inputs(c.in.begin(), c.in.end());
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        if (!is_floating(inputs[i].dtype())) continue;
        inputs[i] = c.has(i) ? c.t(i) : zeros_like(c.in[i]);
    }
    return only_floating(c, rerun(c, inputs));
}

Tangents jvp_linear_in_first(const JvpCtx& c) {
    if (!c.has(0)) return Tangents(c.out.size());
    std::vector<Tensor> inputs(c.in.begin(), c.in.end());
    inputs[0] = c.t(0);
    return only_floating(c, rerun(c, inputs));
}

Tangents jvp_bilinear(const JvpCtx& c) {
    Tangents total(c.out.size());
    for (std::size_t i = 0; i < c.in.size(); ++i) {
        if (!c.has(i) || !is_floating(c.in[i].dtype())) continue;
        std::vector<Tensor> inputs(c.in.begin(), c.in.end());
        inputs[i] = c.t(i);
        const std::vector<Tensor> term = rerun(c, inputs);
        for (std::size_t j = 0; j < total.size(); ++j)
            total[j] = add_tangents(total[j], term[j]);
    }
    return only_floating(c, std::move(total));
}

Tangents jvp_self_adjoint(const JvpCtx& c) {
    const OpDef& def = op_def(c.op);
    std::vector<TensorMeta> in_meta;
    for (const Tensor& x : c.in)
        in_meta.push_back({x.shape(), x.dtype(), x.device()});
    const TensorMeta out_meta{c.out[0].shape(), c.out[0].dtype(), c.out[0].device()};
    Tensor total;
    for (std::size_t i = 0; i < c.in.size(); ++i) {
        if (!c.has(i)) continue;
        const Tensor& t = c.t(i);
        std::vector<char> needs(c.in.size(), 0);
        needs[i] = 1;
        const GradCtx g{std::span<const Tensor>(&t, 1),
                        c.in,
                        c.out,
                        c.attrs,
                        in_meta,
                        std::span<const TensorMeta>(&out_meta, 1),
                        0,
                        needs};
        const Grads d = def.backward(g);
        if (i < d.size() && d[i].defined()) total = add_tangents(total, d[i].dense());
    }
    return {total};
}

const OpDef& op_def(Op op) {
    static const std::array<const OpDef*, kNumOps> table = build_table();
    const OpDef* row = table[static_cast<std::size_t>(op)];
    if (row == nullptr) {
        throw errors::InternalError(
            fmt::format("op '{}' has no gradient row; this is a tapeflow bug", op_name(op)));
    }
    return *row;
}

}  // namespace tapeflow
