// The combine rules named by the reduction kernel table (kernels/shared/reduce_ops.def): how the
// reduced elements of one output meet. Plain C++ for both compilers; each device implements the
// rules for its own types (kernels/cpu/reduce_cpu.hpp, cuda/reduce_kernels.cu).
#pragma once

namespace tapeflow::reduction {

/// sum and mean add (mean then divides by the count), prod multiplies, max and min propagate NaN,
/// any and all are the logical or / and of bools.
enum class Combine { sum, mean, prod, max, min, any, all };

}  // namespace tapeflow::reduction
