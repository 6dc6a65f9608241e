// FLOPs of one op call from its shapes, for the ops whose cost the shapes fix: the products
// (MatMul, BatchMatMulV2) and the convolutions with their backprops. A multiply-add counts 2, as
// tfprof's float_ops do.
#pragma once

#include <span>

#include <tapeflow/core/tensor.hpp>

#include "ops/attrs.hpp"
#include "ops/op.hpp"

namespace tapeflow::profiler::detail {

/// The call's FLOPs, or -1 when this op type has no formula.
double op_flops(Op op,
                std::span<const Tensor> inputs,
                std::span<const Tensor> outputs,
                const Attrs& attrs);

}  // namespace tapeflow::profiler::detail
