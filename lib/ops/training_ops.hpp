// The training ops' wrappers: validate, take the variable and slot buffers for in-place writing
// (VariableUpdate) and dispatch the fused update kernel of (op, device). Used by lib/train and
// lib/keras; the kernels live in lib/kernels/cpu/optimizer_cpu.cpp and cuda/optimizer_kernels.cu.
#pragma once

#include <string_view>
#include <vector>

#include <tapeflow/autograd/variable.hpp>

#include "ops/attrs.hpp"
#include "ops/op.hpp"

namespace tapeflow::training {

/// The attrs a training op takes, space separated ("lr momentum use_nesterov"): its row of
/// kernels/shared/optimizer_ops.def. A call must set exactly these (InternalError otherwise).
std::string_view op_attrs(Op op);
/// Whether `name` is one of op_attrs(op).
bool takes_attr(Op op, std::string_view name);

/// Runs a dense training op: `var` and `slots` (in the op's input order) updated in place with
/// `grad`, which must have the variable's shape and dtype (InvalidArgumentError otherwise).
void apply_dense(Op op,
                 const Variable& var,
                 const std::vector<Variable>& slots,
                 const Tensor& grad,
                 const Attrs& attrs);

/// Runs a sparse training op on the rows `slices.indices` (duplicates summed first, indices checked
/// against the variable's first dimension): only those rows of var and slots change.
void apply_sparse(Op op,
                  const Variable& var,
                  const std::vector<Variable>& slots,
                  const IndexedSlices& slices,
                  const Attrs& attrs);

/// TF1's _deduplicate_indexed_slices: unique indices in order of first appearance, the values of
/// repeated indices summed. Returns `slices` itself when the indices are already unique.
/// On the CPU the sum is unsorted_segment_sum; elsewhere sum_segments_in_order (deterministic).
IndexedSlices deduplicate(const IndexedSlices& slices);

/// Row u sums the rows i of `values` with segment[i] == u (u < n) in increasing i, starting from
/// zero: the CPU unsorted_segment_sum's order, as one gather and add per repetition of the most
/// repeated segment, on values' device. No atomics: deterministic, and equal to the CPU's sum.
Tensor sum_segments_in_order(const Tensor& values, const std::vector<int64_t>& segment, int64_t n);

}  // namespace tapeflow::training
