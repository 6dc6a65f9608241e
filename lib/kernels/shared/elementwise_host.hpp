// The host side of the element-wise kernels that both devices' glue uses: broadcast plans (NOTE
// [Broadcast runs] in kernels/cpu/elementwise_loops.hpp), the integer operand checks TensorFlow
// makes before a division or a power, and the DTypeSet of a kernel table's TypeSet. Host
// compilers only (the registry's types); the .cu kernels get plain index plans (cuda/launch.hpp).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <type_traits>

#include <tapeflow/core/error.hpp>

#include "kernels/shared/type_sets.hpp"
#include "ops/dispatch.hpp"

namespace tapeflow::ew {

/// Most dimensions a broadcast may have after merging (TF's kernels stop at 5 or 8).
inline constexpr int kMaxDims = 16;

/// The dtypes a kernel table row with set `k` is registered for (the same on every device).
constexpr DTypeSet dtypes_of(TypeSet k) {
    switch (k) {
        case TypeSet::floats:
            return kFloatTypes;
        case TypeSet::signed_numbers:
            return kFloatTypes | DTypeSet{DType::int32, DType::int64};
        case TypeSet::numbers:
            return kFloatTypes | kIntTypes;
        case TypeSet::all:
            return kAllTypes;
        case TypeSet::bools:
            return DTypeSet{DType::bool_};
    }
    return {};
}

/// A broadcast with more than kMaxDims dimensions after merging (UnimplementedError).
[[noreturn]] void throw_too_many_dims(const KernelContext& ctx);

// ---- broadcast plans ----

/// The merged layout of an N-operand broadcast (NOTE [Broadcast runs]). strides[k][d] is operand
/// k's element stride along merged dimension d: 0 where it is broadcast.
template <int N>
struct BroadcastPlan {
    int rank = 0;
    std::array<int64_t, kMaxDims> dims{};
    std::array<std::array<int64_t, kMaxDims>, N> strides{};
};

/// Builds the plan of `in` broadcast to `out`; false when more than kMaxDims dimensions remain.
template <int N>
bool make_plan(const Shape& out, const std::array<const Shape*, N>& in, BroadcastPlan<N>& plan) {
    const auto& od = out.dims();
    const auto rank = static_cast<int64_t>(od.size());
    std::array<std::array<bool, kMaxDims>, N> bcast{};
    int r = 0;
    for (int64_t i = 0; i < rank; ++i) {
        if (od[static_cast<std::size_t>(i)] == 1) continue;  // every operand has 1 there too
        std::array<bool, N> b{};
        for (int k = 0; k < N; ++k) {
            const auto& id = in[k]->dims();
            const int64_t j = i - (rank - static_cast<int64_t>(id.size()));
            b[k] = j < 0 || id[static_cast<std::size_t>(j)] == 1;
        }
        bool same = r > 0;
        for (int k = 0; k < N && same; ++k)
            same = bcast[k][r - 1] == b[k];
        if (same) {
            plan.dims[r - 1] *= od[static_cast<std::size_t>(i)];
            continue;
        }
        if (r == kMaxDims) return false;
        plan.dims[r] = od[static_cast<std::size_t>(i)];
        for (int k = 0; k < N; ++k)
            bcast[k][r] = b[k];
        ++r;
    }
    if (r == 0) {  // every dimension is 1: one element
        plan.dims[0] = 1;
        for (int k = 0; k < N; ++k)
            bcast[k][0] = false;
        r = 1;
    }
    plan.rank = r;
    for (int k = 0; k < N; ++k) {
        int64_t stride = 1;
        for (int d = r - 1; d >= 0; --d) {
            plan.strides[k][d] = bcast[k][d] ? 0 : stride;
            if (!bcast[k][d]) stride *= plan.dims[d];
        }
    }
    return true;
}

// ---- integer operand checks ----

// Integer ops that TensorFlow rejects for some divisor or exponent values. The check runs over
// the (unbroadcast) second input before the loop, because kernels must not throw from inside the
// parallel region.
enum class IntCheck { none, nonzero_divisor, nonnegative_exponent };

template <IntCheck C, class S>
void check_integer_operand(const KernelContext& ctx) {
    if constexpr (C != IntCheck::none && std::is_integral_v<S>) {
        if (ctx.outputs[0].num_elements() == 0) return;
        const Tensor& y = ctx.inputs[1];
        const auto* p = static_cast<const S*>(y.raw_data());
        const int64_t n = y.num_elements();
        bool bad = false;
        for (int64_t i = 0; i < n; ++i) {
            if constexpr (C == IntCheck::nonzero_divisor) {
                bad = bad || p[i] == 0;
            } else if constexpr (std::is_signed_v<S>) {
                bad = bad || p[i] < 0;
            }
        }
        if (!bad) return;
        throw errors::InvalidArgumentError(
            C == IntCheck::nonzero_divisor ? "Integer division by zero"
                                           : "Integers to negative integer powers are not allowed",
            std::string(op_type(ctx.op)));
    }
}

}  // namespace tapeflow::ew
