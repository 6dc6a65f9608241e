// The dtype sets of the kernel tables (unary_ops.def): which element types a kernel is compiled
// and registered for. Plain C++ for both compilers: each device decides membership from its own
// C++ types (the CPU's Half/BFloat16, CUDA's __half/__nv_bfloat16) through type_in_set.
#pragma once

namespace tapeflow::ew {

enum class TypeSet { floats, signed_numbers, numbers, all, bools };

/// Whether an element type with these traits belongs to `k` (uint8 is a number, not signed).
constexpr bool type_in_set(TypeSet k, bool is_float, bool is_signed_int, bool is_bool) {
    switch (k) {
        case TypeSet::floats:
            return is_float;
        case TypeSet::signed_numbers:
            return is_float || is_signed_int;
        case TypeSet::numbers:
            return !is_bool;
        case TypeSet::all:
            return true;
        case TypeSet::bools:
            return is_bool;
    }
    return false;
}

/// How much work one element is: `heavy` (transcendental) kernels use threads at fewer elements.
enum class Cost { light, heavy };

}  // namespace tapeflow::ew
