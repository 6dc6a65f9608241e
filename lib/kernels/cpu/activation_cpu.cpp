// CPU kernels of the nn activations (Relu, Relu6, Elu, Selu, LeakyRelu) and their *Grad ops. The
// math is kernels/shared/activation_functors.hpp (shared with the CUDA kernels); the loops are the
// element-wise ones (elementwise_loops.hpp): xsimd batches for elu and selu.
#include "kernels/cpu/elementwise_loops.hpp"
#include "kernels/shared/activation_functors.hpp"
#include "ops/op_families.hpp"

namespace tapeflow::cpu {
namespace {

using ew::TypeSet;
using namespace act;

template <class F>
F make_functor(const KernelContext& ctx) {
    if constexpr (std::is_same_v<F, LeakyRelu> || std::is_same_v<F, LeakyReluGrad>) {
        return F{ctx.attrs.get<double>("alpha")};
    } else {
        return F{};
    }
}

template <class F, TypeSet K>
void forward_kernel(const KernelContext& ctx) {
    ew::visit_in_set<K>(ctx, ctx.inputs[0].dtype(), [&](auto tag) {
        using S = typename decltype(tag)::type;
        ew::unary_loop<F, S>(ctx, make_functor<F>(ctx), F::kSimd ? ew::kHeavyGrain : ew::kGrain);
    });
}

template <class F, TypeSet K>
void grad_kernel(const KernelContext& ctx) {
    ew::visit_in_set<K>(ctx, ctx.inputs[0].dtype(), [&](auto tag) {
        using S = typename decltype(tag)::type;
        ew::binary_loop<F, S, S>(ctx, make_functor<F>(ctx));
    });
}

}  // namespace
}  // namespace tapeflow::cpu

namespace tapeflow {

void register_activation_cpu(KernelRegistry& r) {
    using namespace cpu;
    using cpu::ew::dtypes_of;  // not tapeflow::ew's: `ew` alone is ambiguous here
    constexpr auto kCpu = DeviceType::cpu;
    constexpr auto kSigned = TypeSet::signed_numbers;
    constexpr auto kFloat = TypeSet::floats;
    r.add(Op::relu, kCpu, forward_kernel<Relu, kSigned>, dtypes_of(kSigned));
    r.add(Op::relu_grad, kCpu, grad_kernel<ReluGrad, kSigned>, dtypes_of(kSigned));
    r.add(Op::relu6, kCpu, forward_kernel<Relu6, kSigned>, dtypes_of(kSigned));
    r.add(Op::relu6_grad, kCpu, grad_kernel<Relu6Grad, kSigned>, dtypes_of(kSigned));
    r.add(Op::elu, kCpu, forward_kernel<Elu, kFloat>, dtypes_of(kFloat));
    r.add(Op::elu_grad, kCpu, grad_kernel<EluGrad, kFloat>, dtypes_of(kFloat));
    r.add(Op::selu, kCpu, forward_kernel<Selu, kFloat>, dtypes_of(kFloat));
    r.add(Op::selu_grad, kCpu, grad_kernel<SeluGrad, kFloat>, dtypes_of(kFloat));
    r.add(Op::leaky_relu, kCpu, forward_kernel<LeakyRelu, kFloat>, dtypes_of(kFloat));
    r.add(Op::leaky_relu_grad, kCpu, grad_kernel<LeakyReluGrad, kFloat>, dtypes_of(kFloat));
}

}  // namespace tapeflow
