// The combine rules named by the reduction kernel table (kernels/shared/reduce_ops.def): how the
// reduced elements of one output meet, and where each starts. Plain C++ for both compilers; each
// device implements the rules for its own types (kernels/cpu/reduce_cpu.hpp,
// cuda/reduce_kernels.cu).
#pragma once

#include <limits>
#include <type_traits>

#include "core/hd.hpp"

namespace tapeflow::reduction {

/// sum and mean add (mean then divides by the count), prod multiplies, max and min propagate NaN,
/// any and all are the logical or / and of bools.
enum class Combine { sum, mean, prod, max, min, any, all };

/// The value a combine starts from, in its accumulator type L: 0, 1, false, true, and for max and
/// min the far end of L (-inf and inf for floats: the max of no elements is -inf, as in
/// TensorFlow).
template <Combine K, class L>
TAPEFLOW_HD constexpr L identity() {
    if constexpr (K == Combine::sum || K == Combine::mean) return L(0);
    if constexpr (K == Combine::prod) return L(1);
    if constexpr (K == Combine::any) return false;
    if constexpr (K == Combine::all) return true;
    if constexpr (K == Combine::max) {
        if constexpr (std::is_floating_point_v<L>)
            return -std::numeric_limits<L>::infinity();
        else
            return std::numeric_limits<L>::lowest();
    }
    if constexpr (K == Combine::min) {
        if constexpr (std::is_floating_point_v<L>)
            return std::numeric_limits<L>::infinity();
        else
            return std::numeric_limits<L>::max();
    }
}

}  // namespace tapeflow::reduction
