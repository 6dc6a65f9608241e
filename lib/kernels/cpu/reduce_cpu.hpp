// The combine rules of the CPU reductions and scans (reduce_cpu.cpp, arg_scan_cpu.cpp): the
// accumulator type of each rule and dtype, the identity, the scalar and xsimd combine steps and the
// final conversion (NOTE [Deterministic reductions] in reduce_cpu.cpp), plus the work-size
// constants both files cut their loops by.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <type_traits>

#include <xsimd/xsimd.hpp>

#include "core/dtype_dispatch.hpp"
#include "kernels/shared/reduce_combine.hpp"
#include "kernels/shared/type_sets.hpp"
#include "ops/dispatch.hpp"

namespace tapeflow::cpu::reduce_detail {

using reduction::Combine;

// Output columns per work item of a row accumulation; elements per thread before a loop goes
// parallel.
inline constexpr int64_t kColumns = 1 << 12;
inline constexpr int64_t kParallelElems = 1 << 16;

inline int64_t ceil_div(int64_t a, int64_t b) {
    return (a + b - 1) / b;
}

// Uninitialized scratch of n values (std::vector<bool> has no data()).
template <class L>
std::unique_ptr<L[]> scratch(int64_t n) {
    return std::make_unique_for_overwrite<L[]>(static_cast<std::size_t>(n));
}

/// Whether the element type T is in the kernel table's dtype set K (kernels/shared/reduce_ops.def).
template <ew::TypeSet K, class T>
constexpr bool in_set() {
    return ew::type_in_set(K,
                           std::is_floating_point_v<T> || is_half_v<T>,
                           std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t>,
                           std::is_same_v<T, bool>);
}

template <class T>
constexpr bool is_int_v = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// The type a reduction accumulates in: float for the 16-bit floats, the unsigned type for integers
// (so overflow wraps as in TensorFlow instead of being undefined), bool for any/all.
template <Combine K, class T>
struct Lane {
    using type = compute_t<T>;
};
template <Combine K, class T>
requires(is_int_v<T>&& K != Combine::max && K != Combine::min) struct Lane<K, T> {
    using type = std::make_unsigned_t<T>;
};
template <class T>
struct Lane<Combine::any, T> {
    using type = bool;
};
template <class T>
struct Lane<Combine::all, T> {
    using type = bool;
};
template <Combine K, class T>
using lane_t = typename Lane<K, T>::type;

template <class L, class In>
L to_lane(In v) {
    if constexpr (std::is_same_v<L, bool>) {
        return static_cast<float>(v) != 0.0f;
    } else if constexpr (is_half_v<In>) {
        return static_cast<L>(static_cast<float>(v));
    } else {
        return static_cast<L>(v);
    }
}

template <class V>
bool is_nan(V v) {
    if constexpr (std::is_floating_point_v<V>) {
        return std::isnan(v);
    } else {
        return false;
    }
}

template <Combine K, class T>
struct Reducer {
    using L = lane_t<K, T>;
    // Hand-vectorized loops for float32/float64 (the other types use plain loops).
    static constexpr bool kSimd =
        (std::is_same_v<T, float> || std::is_same_v<T, double>)&&K != Combine::any &&
        K != Combine::all;
    static constexpr bool kSum = K == Combine::sum || K == Combine::mean;

    static L identity() { return reduction::identity<K, L>(); }

    // max and min propagate NaN (keeping the accumulator when it is NaN already).
    static L combine(L a, L v) {
        if constexpr (kSum) return static_cast<L>(a + v);
        if constexpr (K == Combine::prod) return static_cast<L>(a * v);
        if constexpr (K == Combine::any) return a || v;
        if constexpr (K == Combine::all) return a && v;
        if constexpr (K == Combine::max) return (v > a || is_nan(v)) ? v : a;
        if constexpr (K == Combine::min) return (v < a || is_nan(v)) ? v : a;
    }

    // vmaxps/vminps return the second operand when either is NaN: max(v, a) keeps a NaN
    // accumulator, and the select takes a NaN v (isnan: xsimd's != is an ordered compare).
    template <class B>
    static B vcombine(const B& a, const B& v) {
        if constexpr (kSum) return a + v;
        if constexpr (K == Combine::prod) return a * v;
        if constexpr (K == Combine::max) return xsimd::select(xsimd::isnan(v), v, xsimd::max(v, a));
        if constexpr (K == Combine::min) return xsimd::select(xsimd::isnan(v), v, xsimd::min(v, a));
    }

    // Combines n partial results p[0], p[stride], ... in order; float32 sums in double.
    static L combine_partials(const L* p, int64_t n, int64_t stride) {
        if constexpr (kSum && std::is_same_v<L, float>) {
            double acc = 0;
            for (int64_t i = 0; i < n; ++i)
                acc += p[i * stride];
            return static_cast<float>(acc);
        } else {
            L acc = identity();
            for (int64_t i = 0; i < n; ++i)
                acc = combine(acc, p[i * stride]);
            return acc;
        }
    }

    static T finalize(L a, int64_t count) {
        if constexpr (K == Combine::mean) {
            if constexpr (is_int_v<T>) {
                return count == 0 ? T(0) : static_cast<T>(static_cast<T>(a) / count);
            } else {
                return convert_element<T>(a / static_cast<L>(count));
            }
        } else if constexpr (is_int_v<T>) {
            return static_cast<T>(a);
        } else {
            return convert_element<T>(a);
        }
    }
};

}  // namespace tapeflow::cpu::reduce_detail

namespace tapeflow::cpu {

/// Registers the TFL_ARG_REDUCE and TFL_SCAN rows (arg_scan_cpu.cpp; called by
/// register_reduce_cpu).
void register_arg_scan_cpu(KernelRegistry& r);

}  // namespace tapeflow::cpu
