// CPU kernels of the nn activations (Relu, Relu6, Elu, Selu, LeakyRelu) and their *Grad ops,
// with TensorFlow's kernel formulas (relu_op_functor.h): the masks test `x > 0` / `y < 0`, which
// fixes the values at the kinks (relu6 passes nothing at 0 and 6, selu's slope at 0 is scale).
// The loops are the element-wise ones (elementwise_loops.hpp): xsimd batches for elu and selu.
#include "kernels/cpu/elementwise_loops.hpp"
#include "ops/op_families.hpp"

namespace tapeflow::cpu {
namespace {

using ew::TypeSet;

constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
constexpr double kSeluScale = 1.0507009873554804934193349852946;

// The element type of a scalar or of an xsimd batch.
template <class V>
struct Elem {
    using type = V;
};
template <class T, class A>
struct Elem<xsimd::batch<T, A>> {
    using type = T;
};

// c ? a : b for scalars and for xsimd batches.
template <class V, class C>
V pick(const C& c, const V& a, const V& b) {
    if constexpr (std::is_arithmetic_v<V>) {
        return c ? a : b;
    } else {
        return xsimd::select(c, a, b);
    }
}

struct Relu {
    static constexpr bool kSimd = false;  // the plain loop vectorizes
    template <class V>
    V operator()(V x) const {
        return x > V(0) ? x : V(0);
    }
};
struct Relu6 {
    static constexpr bool kSimd = false;
    template <class V>
    V operator()(V x) const {
        return x > V(0) ? (x < V(6) ? x : V(6)) : V(0);
    }
};
struct Elu {
    static constexpr bool kSimd = true;
    template <class V>
    V operator()(V x) const {
        using std::expm1;
        return pick(x < V(0), V(expm1(x)), x);
    }
};
struct Selu {
    static constexpr bool kSimd = true;
    template <class V>
    V operator()(V x) const {
        using std::expm1;
        const V scale(static_cast<typename Elem<V>::type>(kSeluScale));
        const V scale_alpha(static_cast<typename Elem<V>::type>(kSeluScale * kSeluAlpha));
        return pick(x < V(0), V(scale_alpha * expm1(x)), V(scale * x));
    }
};
struct LeakyRelu {
    static constexpr bool kSimd = false;
    double alpha;
    template <class V>
    V operator()(V x) const {
        return x > V(0) ? x : static_cast<V>(x * static_cast<V>(alpha));
    }
};

// The *Grad ops: f(g, x) with x the features (relu, relu6, leaky) or the outputs (elu, selu).
struct ReluGrad {
    template <class T>
    T operator()(T g, T x) const {
        return x > T(0) ? g : T(0);
    }
};
struct Relu6Grad {
    template <class T>
    T operator()(T g, T x) const {
        return (x > T(0) && x < T(6)) ? g : T(0);
    }
};
struct EluGrad {
    template <class T>
    T operator()(T g, T y) const {
        return y < T(0) ? static_cast<T>(g * (y + T(1))) : g;
    }
};
struct SeluGrad {
    template <class T>
    T operator()(T g, T y) const {
        return y < T(0) ? static_cast<T>(g * (y + static_cast<T>(kSeluScale * kSeluAlpha)))
                        : static_cast<T>(g * static_cast<T>(kSeluScale));
    }
};
struct LeakyReluGrad {
    double alpha;
    template <class T>
    T operator()(T g, T x) const {
        return x > T(0) ? g : static_cast<T>(g * static_cast<T>(alpha));
    }
};

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
    constexpr auto kCpu = DeviceType::cpu;
    constexpr auto kSigned = TypeSet::signed_numbers;
    constexpr auto kFloat = TypeSet::floats;
    r.add(Op::relu, kCpu, forward_kernel<Relu, kSigned>, ew::dtypes_of(kSigned));
    r.add(Op::relu_grad, kCpu, grad_kernel<ReluGrad, kSigned>, ew::dtypes_of(kSigned));
    r.add(Op::relu6, kCpu, forward_kernel<Relu6, kSigned>, ew::dtypes_of(kSigned));
    r.add(Op::relu6_grad, kCpu, grad_kernel<Relu6Grad, kSigned>, ew::dtypes_of(kSigned));
    r.add(Op::elu, kCpu, forward_kernel<Elu, kFloat>, ew::dtypes_of(kFloat));
    r.add(Op::elu_grad, kCpu, grad_kernel<EluGrad, kFloat>, ew::dtypes_of(kFloat));
    r.add(Op::selu, kCpu, forward_kernel<Selu, kFloat>, ew::dtypes_of(kFloat));
    r.add(Op::selu_grad, kCpu, grad_kernel<SeluGrad, kFloat>, ew::dtypes_of(kFloat));
    r.add(Op::leaky_relu, kCpu, forward_kernel<LeakyRelu, kFloat>, ew::dtypes_of(kFloat));
    r.add(Op::leaky_relu_grad, kCpu, grad_kernel<LeakyReluGrad, kFloat>, ew::dtypes_of(kFloat));
}

}  // namespace tapeflow
