// CPU kernels of the element-wise unary ops: one kernel template over the functors of
// kernels/shared/elementwise_functors.hpp, registered for every row of the unary kernel table
// (kernels/shared/unary_ops.def). float and double run the transcendental functions through
// xsimd batches (4-8x faster than std::exp); the simple ops are plain loops the compiler
// vectorizes. Large float results are deferred and fused (kernels/cpu/fusion.hpp). logical_not is
// in compare_cpu.cpp; the shared loops in elementwise_loops.hpp.
#include "kernels/cpu/elementwise_loops.hpp"
#include "kernels/shared/elementwise_functors.hpp"

namespace tapeflow::cpu::ew {
namespace {

template <class F, TypeSet K, int64_t Grain>
void unary_kernel(const KernelContext& ctx) {
    visit_in_set<K>(ctx, ctx.inputs[0].dtype(), [&](auto tag) {
        using S = typename decltype(tag)::type;
        if constexpr (kFusable<S>) {
            if (fusion::try_defer(ctx, &unary_block<F, S>)) return;
        }
        unary_loop<F, S>(ctx, F{}, Grain);
    });
}

constexpr int64_t grain_of(Cost cost) {
    return cost == Cost::heavy ? kHeavyGrain : kGrain;
}

}  // namespace

void register_unary_cpu(KernelRegistry& r) {
#define TFL_UNARY(op, functor, dtypes, cost)                                          \
    r.add(Op::op,                                                                     \
          DeviceType::cpu,                                                            \
          unary_kernel<tapeflow::ew::functor, TypeSet::dtypes, grain_of(Cost::cost)>, \
          dtypes_of(TypeSet::dtypes));
#include "kernels/shared/unary_ops.def"
#undef TFL_UNARY
}

}  // namespace tapeflow::cpu::ew
