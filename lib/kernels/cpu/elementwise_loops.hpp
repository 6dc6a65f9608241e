// The CPU loops behind every element-wise kernel: unary (linear, or xsimd batches), binary and
// three-way (where) with NumPy broadcasting, and the arithmetic kernel template. Internal to the
// element-wise kernel files (elementwise_cpu.cpp, binary_cpu.cpp, unary_cpu.cpp, compare_cpu.cpp);
// the math itself is in kernels/elementwise_functors.hpp.
//
// NOTE [Broadcast runs]: an element-wise op with broadcasting is executed as a sequence of *runs*:
// contiguous stretches of the output along the innermost (merged) dimension, in which each operand
// is either contiguous too (stride 1) or one repeated value (stride 0). Dimensions in which every
// operand has the same broadcast pattern are merged first, so the common layouts reduce to:
//   same shape, scalar op tensor:   one run of n elements (stride pattern 11, 10 or 01)
//   [R,C] op [C] (row broadcast):   R runs of C, pattern 11, the second operand restarting each run
//   [R,C] op [R,1] (column):        R runs of C, pattern 10: a vector-scalar loop per row
//   [N,1] op [1,M] (outer):         N runs of M, pattern 01
// The run loops are plain pointer loops that the compiler vectorizes; the odometer that moves from
// run to run costs one step per run, never per element. The output is split across threads by
// element ranges (parallel_for), so the results do not depend on the thread count.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>

#include <xsimd/xsimd.hpp>

#include "core/dtype_dispatch.hpp"
#include "core/parallel.hpp"
#include "kernels/cpu/fusion.hpp"
#include "ops/dispatch.hpp"

namespace tapeflow::cpu::ew {

/// Elements per parallel chunk for cheap ops (add, compare); transcendental ops use less.
inline constexpr int64_t kGrain = 1 << 15;
inline constexpr int64_t kHeavyGrain = 1 << 14;
/// Most dimensions a broadcast may have after merging (TF's kernels stop at 5 or 8).
inline constexpr int kMaxDims = 16;

// ---- the dtypes a kernel is instantiated and registered for ----

enum class TypeSet { floats, signed_numbers, numbers, all, bools };

template <TypeSet K, class S>
constexpr bool in_set() {
    constexpr bool is_float = std::is_floating_point_v<S> || is_half_v<S>;
    constexpr bool is_signed_int = std::is_same_v<S, int32_t> || std::is_same_v<S, int64_t>;
    switch (K) {
        case TypeSet::floats:
            return is_float;
        case TypeSet::signed_numbers:
            return is_float || is_signed_int;
        case TypeSet::numbers:
            return !std::is_same_v<S, bool>;
        case TypeSet::all:
            return true;
        case TypeSet::bools:
            return std::is_same_v<S, bool>;
    }
    return false;
}

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

/// Reached only if the registry let through a dtype the kernel was not registered for.
[[noreturn]] void throw_bad_dtype(const KernelContext& ctx, DType dtype);
/// A broadcast with more than kMaxDims dimensions after merging.
[[noreturn]] TAPEFLOW_PLUGIN_API void throw_too_many_dims(const KernelContext& ctx);

/// Registration of the kernels of binary_cpu.cpp, unary_cpu.cpp and compare_cpu.cpp (called by
/// register_elementwise_cpu).
void register_binary_cpu(KernelRegistry& r);
void register_unary_cpu(KernelRegistry& r);
void register_compare_cpu(KernelRegistry& r);

// ---- storage <-> compute conversions (the 16-bit floats compute in float) ----

template <class S>
inline compute_t<S> load(S v) {
    if constexpr (is_half_v<S>) {
        return static_cast<float>(v);
    } else {
        return v;
    }
}

template <class S, class C>
inline S store(C v) {
    if constexpr (is_half_v<S>) {
        return S(static_cast<float>(v));
    } else {
        return static_cast<S>(v);
    }
}

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

/// Calls run(out_pos, len, offsets) for every run of the output elements [0, n), where
/// offsets[k] is operand k's element offset at out_pos; parallel over element ranges.
template <int N, class Run>
void for_each_run(const BroadcastPlan<N>& p, int64_t n, int64_t grain, const Run& run) {
    const int r = p.rank;
    const int64_t inner = p.dims[r - 1];
    parallel_for(n, grain, [&](int64_t begin, int64_t end) {
        std::array<int64_t, kMaxDims> idx{};
        std::array<int64_t, N> row_off{};  // operand offsets at the start of the current row
        int64_t row = begin / inner;
        int64_t col = begin % inner;
        for (int d = r - 2; d >= 0; --d) {
            idx[d] = row % p.dims[d];
            row /= p.dims[d];
            for (int k = 0; k < N; ++k)
                row_off[k] += idx[d] * p.strides[k][d];
        }
        int64_t pos = begin;
        for (;;) {
            const int64_t len = std::min(inner - col, end - pos);
            std::array<int64_t, N> off;
            for (int k = 0; k < N; ++k)
                off[k] = row_off[k] + col * p.strides[k][r - 1];
            run(pos, len, off);
            pos += len;
            if (pos >= end) break;
            col = 0;
            for (int d = r - 2; d >= 0; --d) {  // the odometer over the outer dimensions
                for (int k = 0; k < N; ++k)
                    row_off[k] += p.strides[k][d];
                if (++idx[d] < p.dims[d]) break;
                for (int k = 0; k < N; ++k)
                    row_off[k] -= p.dims[d] * p.strides[k][d];
                idx[d] = 0;
            }
        }
    });
}

// ---- binary ----

// One run: VA / VB say whether operand a / b advances (stride 1) or repeats (stride 0).
template <bool VA, bool VB, class F, class S, class O>
inline void binary_run(
    const F& f, const S* __restrict a, const S* __restrict b, O* __restrict out, int64_t n) {
    if constexpr (!VA && !VB) {
        std::fill(out, out + n, store<O>(f(load(a[0]), load(b[0]))));
    } else if constexpr (!VA) {
        const auto s = load(a[0]);
        for (int64_t i = 0; i < n; ++i)
            out[i] = store<O>(f(s, load(b[i])));
    } else if constexpr (!VB) {
        const auto s = load(b[0]);
        for (int64_t i = 0; i < n; ++i)
            out[i] = store<O>(f(load(a[i]), s));
    } else {
        for (int64_t i = 0; i < n; ++i)
            out[i] = store<O>(f(load(a[i]), load(b[i])));
    }
}

template <bool VA, bool VB, class F, class S, class O>
void binary_linear(const F& f, const S* a, const S* b, O* out, int64_t n, int64_t grain) {
    parallel_for(n, grain, [&](int64_t begin, int64_t end) {
        binary_run<VA, VB>(f, a + (VA ? begin : 0), b + (VB ? begin : 0), out + begin, end - begin);
    });
}

template <bool VA, bool VB, class F, class S, class O>
void binary_broadcast(const F& f,
                      const BroadcastPlan<2>& p,
                      const S* a,
                      const S* b,
                      O* out,
                      int64_t n,
                      int64_t grain) {
    for_each_run<2>(p, n, grain, [&](int64_t pos, int64_t len, const std::array<int64_t, 2>& off) {
        binary_run<VA, VB>(f, a + off[0], b + off[1], out + pos, len);
    });
}

/// out = f(a, b) with broadcasting; a and b have storage type S, out has O.
template <class F, class S, class O>
void binary_loop(const KernelContext& ctx, const F& f, int64_t grain = kGrain) {
    const Tensor& ta = ctx.inputs[0];
    const Tensor& tb = ctx.inputs[1];
    const Tensor& to = ctx.outputs[0];
    const int64_t n = to.num_elements();
    if (n == 0) return;
    const auto* a = static_cast<const S*>(ta.raw_data());
    const auto* b = static_cast<const S*>(tb.raw_data());
    auto* out = static_cast<O*>(to.mutable_raw_data());
    const int64_t na = ta.num_elements();
    const int64_t nb = tb.num_elements();
    // Fast paths without a plan: an operand with n elements has the output's layout.
    if (na == n && nb == n) return binary_linear<true, true>(f, a, b, out, n, grain);
    if (na == n && nb == 1) return binary_linear<true, false>(f, a, b, out, n, grain);
    if (na == 1 && nb == n) return binary_linear<false, true>(f, a, b, out, n, grain);
    BroadcastPlan<2> p;
    if (!make_plan<2>(to.shape(), {&ta.shape(), &tb.shape()}, p)) throw_too_many_dims(ctx);
    const bool va = p.strides[0][p.rank - 1] != 0;
    const bool vb = p.strides[1][p.rank - 1] != 0;
    if (va && vb) return binary_broadcast<true, true>(f, p, a, b, out, n, grain);
    if (va) return binary_broadcast<true, false>(f, p, a, b, out, n, grain);
    // Here b advances: the last merged dimension is > 1 in the output, so not both operands are
    // broadcast along it.
    binary_broadcast<false, true>(f, p, a, b, out, n, grain);
}

// ---- the arithmetic kernels (elementwise_cpu.cpp, binary_cpu.cpp) ----

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

/// The dispatch every element-wise kernel starts with: f(TypeTag<S>{}) for the C++ type S of
/// `dtype` when S is in the kernel's set K, else the kernel's dtype error.
template <TypeSet K, class Body>
void visit_in_set(const KernelContext& ctx, DType dtype, Body&& body) {
    visit_dtype(dtype, [&](auto tag) {
        using S = typename decltype(tag)::type;
        if constexpr (!in_set<K, S>()) {
            throw_bad_dtype(ctx, dtype);
        } else {
            body(tag);
        }
    });
}

/// float and double: the types whose large element-wise results may be deferred and fused.
template <class S>
inline constexpr bool kFusable = std::is_same_v<S, float> || std::is_same_v<S, double>;

/// The fusion block function of a binary functor (fusion::BlockFn).
template <class F, class S>
void binary_block(const void* a, bool va, const void* b, bool vb, void* out, int64_t n) {
    const auto* pa = static_cast<const S*>(a);
    const auto* pb = static_cast<const S*>(b);
    auto* po = static_cast<S*>(out);
    if (va && vb) return binary_run<true, true>(F{}, pa, pb, po, n);
    if (va) return binary_run<true, false>(F{}, pa, pb, po, n);
    if (vb) return binary_run<false, true>(F{}, pa, pb, po, n);
    binary_run<false, false>(F{}, pa, pb, po, n);
}

template <class F, TypeSet K, IntCheck C = IntCheck::none, int64_t Grain = kGrain>
void arithmetic_kernel(const KernelContext& ctx) {
    visit_in_set<K>(ctx, ctx.inputs[0].dtype(), [&](auto tag) {
        using S = typename decltype(tag)::type;
        if constexpr (kFusable<S>) {
            if (fusion::try_defer(ctx, &binary_block<F, S>)) return;
        }
        check_integer_operand<C, S>(ctx);
        binary_loop<F, S, S>(ctx, F{}, Grain);
    });
}

// ---- unary ----

/// out[i] = f(in[i]) over contiguous memory. float and double go through xsimd batches when the
/// functor allows it (F::kSimd); the tail is padded into one more batch, so every element is
/// computed by the same code whatever the chunking (results independent of the thread count).
template <class F, class S>
void unary_run(const F& f, const S* __restrict in, S* __restrict out, int64_t n) {
    if constexpr (F::kSimd && (std::is_same_v<S, float> || std::is_same_v<S, double>)) {
        using B = xsimd::batch<S>;
        constexpr auto W = static_cast<int64_t>(B::size);
        int64_t i = 0;
        for (; i + W <= n; i += W)
            f(B::load_unaligned(in + i)).store_unaligned(out + i);
        if (i < n) {
            alignas(64) S buf[W];
            std::fill(buf, buf + W, S(1));
            std::copy(in + i, in + n, buf);
            f(B::load_aligned(buf)).store_aligned(buf);
            std::copy(buf, buf + (n - i), out + i);
        }
    } else {
        for (int64_t i = 0; i < n; ++i)
            out[i] = store<S>(f(load(in[i])));
    }
}

/// The fusion block function of a unary functor (fusion::BlockFn; the operand always varies).
template <class F, class S>
void unary_block(const void* a, bool, const void*, bool, void* out, int64_t n) {
    unary_run(F{}, static_cast<const S*>(a), static_cast<S*>(out), n);
}

template <class F, class S>
void unary_loop(const KernelContext& ctx, const F& f, int64_t grain) {
    const Tensor& x = ctx.inputs[0];
    const auto* in = static_cast<const S*>(x.raw_data());
    auto* out = static_cast<S*>(ctx.outputs[0].mutable_raw_data());
    parallel_for(x.num_elements(), grain, [&](int64_t begin, int64_t end) {
        unary_run(f, in + begin, out + begin, end - begin);
    });
}

}  // namespace tapeflow::cpu::ew
