// The gradient table: one OpDef row per op, collected from the family files. Every op in
// op_list.def must have exactly one row (checked when the table is built and by
// tests/ops/test_registry.cpp).
#include "ops/op_def.hpp"

#include <array>

#include <tapeflow/core/error.hpp>

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
