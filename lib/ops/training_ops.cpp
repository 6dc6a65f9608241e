// Training ops: the fused optimizer updates of op_list.def's "Training ops" section. They have no
// outputs (the kernel writes the variable's and slots' buffers in place) and no gradient.
#include "ops/training_ops.hpp"

#include <algorithm>
#include <atomic>
#include <optional>
#include <unordered_map>

#include <fmt/ranges.h>

#include <tapeflow/ops/array.hpp>
#include <tapeflow/ops/creation.hpp>
#include <tapeflow/ops/math.hpp>

#include "autograd/variable_update.hpp"
#include "ops/apply.hpp"
#include "ops/op_families.hpp"

namespace tapeflow {
namespace {

// One row per row of the update table (lib/kernels/shared/optimizer_ops.def): the training ops
// update in place and have no gradient.
const OpDef kTrainingOps[] = {
#define TFL_UPDATE(op, functor, form, attrs) {Op::op, Save::nothing, nullptr},
#include "kernels/shared/optimizer_ops.def"
#undef TFL_UPDATE
};

// The attrs each training op takes, from the same table (space separated).
std::string_view attr_names(Op op) {
    switch (op) {
#define TFL_UPDATE(op, functor, form, attrs) \
    case Op::op:                             \
        return attrs;
#include "kernels/shared/optimizer_ops.def"
#undef TFL_UPDATE
        default:
            return {};
    }
}

// Calls fn(name) for each space-separated name of `names`.
template <class Fn>
void for_each_name(std::string_view names, const Fn& fn) {
    while (!names.empty()) {
        const std::size_t space = names.find(' ');
        fn(names.substr(0, space));
        if (space == std::string_view::npos) break;
        names.remove_prefix(space + 1);
    }
}

// The kernels read the attrs into a plain struct in which an attr nobody set reads 0, so every call
// must set exactly its op's attrs: a missing or misspelled key is a tapeflow bug, raised here.
void check_attrs(Op op, const Attrs& attrs) {
    // Each call site sets the same attrs every time: checking an op's first call finds the bug.
    static std::atomic<bool> checked[kNumOps] = {};
    if (checked[static_cast<int>(op)].load(std::memory_order_relaxed)) return;
    const std::string_view names = attr_names(op);
    for (const auto& [name, value] : attrs.items()) {
        if (!training::takes_attr(op, name)) {
            op_fail<errors::InternalError>(
                op, "unknown attr '{}' (the op takes: {}); this is a tapeflow bug", name, names);
        }
    }
    for_each_name(names, [&](std::string_view name) {
        if (!attrs.has(name)) {
            op_fail<errors::InternalError>(
                op, "attr '{}' is not set (the op takes: {}); this is a tapeflow bug", name, names);
        }
    });
    checked[static_cast<int>(op)].store(true, std::memory_order_relaxed);
}

void check_dtype(Op op, const Variable& var, DType dtype) {
    if (dtype != var.dtype()) {
        op_fail(op,
                "Cannot update variable '{}' of dtype {} with a gradient of dtype {}",
                var.name(),
                dtype_name(var.dtype()),
                dtype_name(dtype));
    }
    if (var.dtype() != DType::float32 && var.dtype() != DType::float64) {
        op_fail<errors::UnimplementedError>(
            op,
            "optimizer updates support float32 and float64 variables, not {} ('{}')",
            dtype_name(var.dtype()),
            var.name());
    }
}

// Locks var and slots, un-shares their buffers and runs the op on them plus `rest`.
void run(Op op,
         const Variable& var,
         const std::vector<Variable>& slots,
         std::vector<Tensor> rest,
         const Attrs& attrs) {
    constexpr std::size_t kMaxSlots = 4;
    if (slots.size() > kMaxSlots)
        op_fail<errors::InternalError>(op, "too many slots; this is a tapeflow bug");
    check_attrs(op, attrs);
    const VariableUpdate var_guard(var);
    std::optional<VariableUpdate> slot_guards[kMaxSlots];  // in place: no allocation per update
    std::vector<Tensor> inputs;
    inputs.reserve(1 + slots.size() + rest.size());
    inputs.push_back(var_guard.buffer());
    for (std::size_t k = 0; k < slots.size(); ++k)
        inputs.push_back(slot_guards[k].emplace(slots[k]).buffer());
    for (Tensor& t : rest)
        inputs.push_back(std::move(t));
    apply_multi(op, inputs, {}, attrs);
}

}  // namespace

std::span<const OpDef> training_op_defs() {
    return kTrainingOps;
}

namespace training {
std::string_view op_attrs(Op op) {
    return attr_names(op);
}

bool takes_attr(Op op, std::string_view name) {
    bool found = false;
    for_each_name(attr_names(op), [&](std::string_view n) { found = found || n == name; });
    return found;
}
}  // namespace training

namespace training {

void apply_dense(Op op,
                 const Variable& var,
                 const std::vector<Variable>& slots,
                 const Tensor& grad,
                 const Attrs& attrs) {
    if (!grad.defined()) op_fail(op, "the gradient of variable '{}' is undefined", var.name());
    check_dtype(op, var, grad.dtype());
    if (grad.shape() != var.shape()) {
        op_fail(op,
                "var and grad do not have the same shape{} {} (variable '{}')",
                var.shape().debug_string(),
                grad.shape().debug_string(),
                var.name());
    }
    run(op, var, slots, {grad}, attrs);
}

Tensor sum_segments_in_order(const Tensor& values, const std::vector<int64_t>& segment, int64_t n) {
    const Device device = values.device();
    const auto count = static_cast<int64_t>(segment.size());
    std::vector<std::vector<int64_t>> rows(static_cast<std::size_t>(n));
    std::size_t depth = 0;
    for (int64_t i = 0; i < count; ++i) {
        auto& r = rows[static_cast<std::size_t>(segment[static_cast<std::size_t>(i)])];
        r.push_back(i);
        depth = std::max(depth, r.size());
    }
    std::vector<int64_t> dims = values.shape().dims();
    dims[0] = 1;
    // row `count` of padded is zero: what rows shorter than j + 1 repetitions add at step j
    const Tensor padded = concat({values, zeros(Shape(dims), values.dtype()).to(device)}, 0);
    dims[0] = n;
    Tensor sum = zeros(Shape(dims), values.dtype()).to(device);
    std::vector<int64_t> pick(static_cast<std::size_t>(n));
    for (std::size_t j = 0; j < depth; ++j) {
        for (std::size_t u = 0; u < rows.size(); ++u) {
            pick[u] = j < rows[u].size() ? rows[u][j] : count;
        }
        sum = sum + gather(padded, constant(pick, Shape{n}, DType::int64).to(device));
    }
    return sum;
}

IndexedSlices deduplicate(const IndexedSlices& slices) {
    const std::vector<int64_t> indices = slices.indices.to_vector<int64_t>();
    std::unordered_map<int64_t, int64_t> position;
    std::vector<int64_t> unique;
    std::vector<int64_t> segment(indices.size());
    for (std::size_t i = 0; i < indices.size(); ++i) {
        auto [it, inserted] = position.try_emplace(indices[i], static_cast<int64_t>(unique.size()));
        if (inserted) unique.push_back(indices[i]);
        segment[i] = it->second;
    }
    if (unique.size() == indices.size()) return slices;
    const auto n = static_cast<int64_t>(unique.size());
    const Device device = slices.values.device();
    // The CPU's segment sum adds in row order; other devices' segment sums add with atomics in no
    // fixed order (3+ duplicates could differ in the last bits between runs), so they use the
    // gather-and-add chain in the CPU's order: deterministic, and equal to the CPU's sums.
    const auto count = static_cast<int64_t>(segment.size());
    Tensor sum;
    if (device.is_cpu()) {
        const Tensor ids = constant(segment, Shape{count}, DType::int64).to(device);
        sum = unsorted_segment_sum(slices.values, ids, n);
    } else {
        sum = sum_segments_in_order(slices.values, segment, n);
    }
    return IndexedSlices{
        std::move(sum), constant(unique, Shape{n}, DType::int64).to(device), slices.dense_shape};
}

void apply_sparse(Op op,
                  const Variable& var,
                  const std::vector<Variable>& slots,
                  const IndexedSlices& slices,
                  const Attrs& attrs) {
    if (!slices.values.defined() || !slices.indices.defined()) {
        op_fail(op, "the IndexedSlices gradient of variable '{}' is undefined", var.name());
    }
    check_dtype(op, var, slices.values.dtype());
    const Shape& v = slices.values.shape();
    const Tensor& idx = slices.indices;
    bool ok = var.shape().rank() >= 1 && idx.rank() == 1 && v.rank() == var.shape().rank() &&
              v[0] == idx.shape()[0] &&
              (idx.dtype() == DType::int32 || idx.dtype() == DType::int64);
    for (int64_t d = 1; ok && d < v.rank(); ++d)
        ok = v[d] == var.shape()[d];
    if (!ok) {
        op_fail(op,
                "grad must be var.shape[1:] rows: var {}, grad values {}, indices {} {} (variable "
                "'{}')",
                var.shape().debug_string(),
                v.debug_string(),
                idx.shape().debug_string(),
                dtype_name(idx.dtype()),
                var.name());
    }
    const IndexedSlices unique = deduplicate(slices);
    const int64_t rows = var.shape()[0];
    const std::vector<int64_t> list = unique.indices.to_vector<int64_t>();
    for (std::size_t i = 0; i < list.size(); ++i) {
        if (list[i] < 0 || list[i] >= rows) {
            op_fail(op,
                    "Index {} at offset {} in indices is out of range [0, {}) (variable '{}')",
                    list[i],
                    i,
                    rows,
                    var.name());
        }
    }
    if (list.empty()) return;
    run(op, var, slots, {unique.values, unique.indices}, attrs);
}

}  // namespace training
}  // namespace tapeflow
