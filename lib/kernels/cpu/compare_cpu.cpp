// CPU kernels of the comparisons (bool results; the TFL_COMPARE rows of
// kernels/shared/binary_ops.def), the logical ops and where (SelectV2, three-way broadcasting).
// Loops and broadcast runs: elementwise_loops.hpp; math: elementwise_functors.hpp.
#include "kernels/cpu/elementwise_loops.hpp"
#include "kernels/shared/elementwise_functors.hpp"

namespace tapeflow::cpu::ew {
namespace {

template <class F, TypeSet K>
void compare_kernel(const KernelContext& ctx) {
    visit_in_set<K>(ctx, ctx.inputs[0].dtype(), [&](auto tag) {
        using S = typename decltype(tag)::type;
        binary_loop<F, S, bool>(ctx, F{});
    });
}

void logical_not_kernel(const KernelContext& ctx) {
    unary_loop<tapeflow::ew::LogicalNot, uint8_t>(ctx, tapeflow::ew::LogicalNot{}, kGrain);
}

// ---- where: only bytes move, so the loops are instantiated per element size, not per dtype.
// The condition is read as bytes (0/1): the select vectorizes with a uint8_t condition, not with
// a bool one (GCC 12). ----

template <bool VC, bool VX, bool VY, class E>
inline void where_run(const uint8_t* __restrict c,
                      const E* __restrict x,
                      const E* __restrict y,
                      E* __restrict out,
                      int64_t n) {
    if constexpr (!VC) {
        if (c[0] != 0) {
            if constexpr (VX)
                std::copy(x, x + n, out);
            else
                std::fill(out, out + n, x[0]);
        } else {
            if constexpr (VY)
                std::copy(y, y + n, out);
            else
                std::fill(out, out + n, y[0]);
        }
    } else {
        for (int64_t i = 0; i < n; ++i)
            out[i] = c[i] != 0 ? x[VX ? i : 0] : y[VY ? i : 0];
    }
}

template <bool VC, bool VX, bool VY, class E>
void where_runs(
    const BroadcastPlan<3>& p, const uint8_t* c, const E* x, const E* y, E* out, int64_t n) {
    for_each_run<3>(p, n, kGrain, [&](int64_t pos, int64_t len, const std::array<int64_t, 3>& off) {
        where_run<VC, VX, VY>(c + off[0], x + off[1], y + off[2], out + pos, len);
    });
}

template <class E>
void where_typed(const KernelContext& ctx) {
    const Tensor& out = ctx.outputs[0];
    const int64_t n = out.num_elements();
    if (n == 0) return;
    const auto* c = static_cast<const uint8_t*>(ctx.inputs[0].raw_data());
    const auto* x = static_cast<const E*>(ctx.inputs[1].raw_data());
    const auto* y = static_cast<const E*>(ctx.inputs[2].raw_data());
    auto* o = static_cast<E*>(out.mutable_raw_data());
    BroadcastPlan<3> p;
    if (!make_plan<3>(out.shape(),
                      {&ctx.inputs[0].shape(), &ctx.inputs[1].shape(), &ctx.inputs[2].shape()},
                      p)) {
        throw_too_many_dims(ctx);
    }
    const int last = p.rank - 1;
    const int pattern = (p.strides[0][last] != 0 ? 4 : 0) | (p.strides[1][last] != 0 ? 2 : 0) |
                        (p.strides[2][last] != 0 ? 1 : 0);
    switch (pattern) {
        case 0:
            return where_runs<false, false, false>(p, c, x, y, o, n);
        case 1:
            return where_runs<false, false, true>(p, c, x, y, o, n);
        case 2:
            return where_runs<false, true, false>(p, c, x, y, o, n);
        case 3:
            return where_runs<false, true, true>(p, c, x, y, o, n);
        case 4:
            return where_runs<true, false, false>(p, c, x, y, o, n);
        case 5:
            return where_runs<true, false, true>(p, c, x, y, o, n);
        case 6:
            return where_runs<true, true, false>(p, c, x, y, o, n);
        default:
            return where_runs<true, true, true>(p, c, x, y, o, n);
    }
}

void where_kernel(const KernelContext& ctx) {
    switch (dtype_size(ctx.outputs[0].dtype())) {
        case 1:
            return where_typed<uint8_t>(ctx);
        case 2:
            return where_typed<uint16_t>(ctx);
        case 4:
            return where_typed<uint32_t>(ctx);
        case 8:
            return where_typed<uint64_t>(ctx);
        default:
            throw_bad_dtype(ctx, ctx.outputs[0].dtype());
    }
}

}  // namespace

void register_compare_cpu(KernelRegistry& r) {
    constexpr auto kCpu = DeviceType::cpu;
#define TFL_BINARY(op, functor, dtypes, check, cost)
#define TFL_COMPARE(op, functor, dtypes)                          \
    r.add(Op::op,                                                 \
          kCpu,                                                   \
          compare_kernel<tapeflow::ew::functor, TypeSet::dtypes>, \
          dtypes_of(TypeSet::dtypes));
#include "kernels/shared/binary_ops.def"
#undef TFL_COMPARE
#undef TFL_BINARY
    r.add(Op::logical_not, kCpu, logical_not_kernel, dtypes_of(TypeSet::bools));
    r.add(Op::where, kCpu, where_kernel, dtypes_of(TypeSet::all));
}

}  // namespace tapeflow::cpu::ew
