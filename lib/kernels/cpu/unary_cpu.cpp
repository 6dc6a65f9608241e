// CPU kernels of the element-wise unary ops (negative ... softplus). float and double run the
// transcendental functions through xsimd batches (4-8x faster than std::exp);
// the simple ops are plain loops the compiler vectorizes. Comparisons, logic and where are in
// compare_cpu.cpp; the shared loops in elementwise_loops.hpp.
#include "kernels/cpu/elementwise_loops.hpp"
#include "kernels/shared/elementwise_functors.hpp"

namespace tapeflow::cpu::ew {
namespace {

template <class F, TypeSet K, int64_t Grain = kGrain>
void unary_kernel(const KernelContext& ctx) {
    visit_in_set<K>(ctx, ctx.inputs[0].dtype(), [&](auto tag) {
        using S = typename decltype(tag)::type;
        if constexpr (kFusable<S>) {
            if (fusion::try_defer(ctx, &unary_block<F, S>)) return;
        }
        unary_loop<F, S>(ctx, F{}, Grain);
    });
}

}  // namespace

void register_unary_cpu(KernelRegistry& r) {
    namespace f = tapeflow::ew;
    constexpr auto kCpu = DeviceType::cpu;
    constexpr auto kSigned = TypeSet::signed_numbers;
    constexpr auto kFloat = TypeSet::floats;
    constexpr int64_t kHeavy = kHeavyGrain;  // transcendental: worth threads at fewer elements
    r.add(Op::negative, kCpu, unary_kernel<f::Negative, kSigned>, dtypes_of(kSigned));
    r.add(Op::abs, kCpu, unary_kernel<f::Abs, kSigned>, dtypes_of(kSigned));
    r.add(Op::sign, kCpu, unary_kernel<f::Sign, kSigned>, dtypes_of(kSigned));
    r.add(Op::square, kCpu, unary_kernel<f::Square, kSigned>, dtypes_of(kSigned));
    r.add(Op::round, kCpu, unary_kernel<f::Round, kSigned>, dtypes_of(kSigned));
    r.add(Op::reciprocal, kCpu, unary_kernel<f::Reciprocal, kFloat>, dtypes_of(kFloat));
    r.add(Op::exp, kCpu, unary_kernel<f::Exp, kFloat, kHeavy>, dtypes_of(kFloat));
    r.add(Op::expm1, kCpu, unary_kernel<f::Expm1, kFloat, kHeavy>, dtypes_of(kFloat));
    r.add(Op::log, kCpu, unary_kernel<f::Log, kFloat, kHeavy>, dtypes_of(kFloat));
    r.add(Op::log1p, kCpu, unary_kernel<f::Log1p, kFloat, kHeavy>, dtypes_of(kFloat));
    r.add(Op::sqrt, kCpu, unary_kernel<f::Sqrt, kFloat>, dtypes_of(kFloat));
    r.add(Op::rsqrt, kCpu, unary_kernel<f::Rsqrt, kFloat>, dtypes_of(kFloat));
    r.add(Op::sin, kCpu, unary_kernel<f::Sin, kFloat, kHeavy>, dtypes_of(kFloat));
    r.add(Op::cos, kCpu, unary_kernel<f::Cos, kFloat, kHeavy>, dtypes_of(kFloat));
    r.add(Op::tanh, kCpu, unary_kernel<f::Tanh, kFloat, kHeavy>, dtypes_of(kFloat));
    r.add(Op::sigmoid, kCpu, unary_kernel<f::Sigmoid, kFloat, kHeavy>, dtypes_of(kFloat));
    r.add(Op::erf, kCpu, unary_kernel<f::Erf, kFloat, kHeavy>, dtypes_of(kFloat));
    r.add(Op::floor, kCpu, unary_kernel<f::Floor, kFloat>, dtypes_of(kFloat));
    r.add(Op::ceil, kCpu, unary_kernel<f::Ceil, kFloat>, dtypes_of(kFloat));
    r.add(Op::softplus, kCpu, unary_kernel<f::Softplus, kFloat, kHeavy>, dtypes_of(kFloat));
}

}  // namespace tapeflow::cpu::ew
