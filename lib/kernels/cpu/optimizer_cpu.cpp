// CPU kernels of the training ops: each optimizer's update as one functor, run as one fused pass
// over the variable, its slots and the gradient (xsimd batches, then a scalar tail; threads for
// large variables). Sparse ops run the same functor over the listed rows only (indices are unique,
// checked by lib/ops/training_ops.cpp). Formulas follow TensorFlow's CPU kernels
// (training_ops.cc) in their order of operations; SEMANTICS.md section 4 gives them.
#include <array>
#include <cmath>
#include <utility>

#include <xsimd/xsimd.hpp>

#include "core/parallel.hpp"
#include "ops/op_families.hpp"

namespace tapeflow {
namespace {

// Element-wise helpers for both a scalar T and an xsimd batch, so one formula serves both loops.
template <class T>
T vsqrt(T x) { return std::sqrt(x); }
template <class T, class A>
xsimd::batch<T, A> vsqrt(const xsimd::batch<T, A>& x) { return xsimd::sqrt(x); }
template <class T>
T vabs(T x) { return std::abs(x); }
template <class T, class A>
xsimd::batch<T, A> vabs(const xsimd::batch<T, A>& x) { return xsimd::abs(x); }
template <class T>
T vmax(T a, T b) { return a > b ? a : b; }  // NaN in a propagates, as Eigen's max
template <class T, class A>
xsimd::batch<T, A> vmax(const xsimd::batch<T, A>& a, const xsimd::batch<T, A>& b) {
    return xsimd::select(a > b, a, b);
}
template <class T>
T vpow(T x, T p) { return std::pow(x, p); }
template <class T, class A>
xsimd::batch<T, A> vpow(const xsimd::batch<T, A>& x, T p) { return xsimd::pow(x, xsimd::batch<T, A>(p)); }
template <class T>
T vselect(bool c, T a, T b) { return c ? a : b; }
template <class T, class A>
xsimd::batch<T, A> vselect(const xsimd::batch_bool<T, A>& c, const xsimd::batch<T, A>& a,
                           const xsimd::batch<T, A>& b) {
    return xsimd::select(c, a, b);
}
// sign(x) in {-1, 0, 1}.
template <class B, class T>
B vsign(const B& x, T) {
    return vselect(x > B(T(0)), B(T(1)), vselect(x < B(T(0)), B(T(-1)), B(T(0))));
}
// Proximal step: sign(u)·max(|u| − shrink, 0) / scale (l1 > 0), else u / scale.
template <class B, class T>
B proximal(const B& u, T shrink, T scale, bool l1) {
    if (!l1) return u / B(scale);
    return vsign(u, T()) * vmax(vabs(u) - B(shrink), B(T(0))) / B(scale);
}

template <class T>
T attr(const Attrs& a, std::string_view name) { return static_cast<T>(a.get<double>(name)); }

// ---- the update functors: operator()(var, slots..., grad) ----

template <class T>
struct GradientDescent {
    static constexpr std::size_t kSlots = 0;
    T alpha;
    explicit GradientDescent(const Attrs& a) : alpha(attr<T>(a, "alpha")) {}
    template <class B>
    void operator()(B& var, const B& g) const { var -= g * B(alpha); }
};

template <class T>
struct ProximalGradientDescent {
    static constexpr std::size_t kSlots = 0;
    T alpha, l1, l2;
    explicit ProximalGradientDescent(const Attrs& a)
        : alpha(attr<T>(a, "alpha")), l1(attr<T>(a, "l1")), l2(attr<T>(a, "l2")) {}
    template <class B>
    void operator()(B& var, const B& g) const {
        const B u = var - B(alpha) * g;
        var = proximal(u, alpha * l1, T(1) + alpha * l2, l1 > T(0));
    }
};

template <class T>
struct Momentum {
    static constexpr std::size_t kSlots = 1;
    T lr, momentum;
    bool nesterov;
    explicit Momentum(const Attrs& a)
        : lr(attr<T>(a, "lr")), momentum(attr<T>(a, "momentum")), nesterov(a.get<bool>("use_nesterov")) {}
    template <class B>
    void operator()(B& var, B& accum, const B& g) const {
        accum = accum * B(momentum) + g;
        if (nesterov) {
            var -= g * B(lr) + accum * B(momentum) * B(lr);
        } else {
            var -= accum * B(lr);
        }
    }
};

template <class T>
struct KerasMomentum {
    static constexpr std::size_t kSlots = 1;
    T lr, momentum;
    bool nesterov;
    explicit KerasMomentum(const Attrs& a)
        : lr(attr<T>(a, "lr")), momentum(attr<T>(a, "momentum")), nesterov(a.get<bool>("use_nesterov")) {}
    template <class B>
    void operator()(B& var, B& accum, const B& g) const {
        accum = accum * B(momentum) - g * B(lr);
        if (nesterov) {
            var += accum * B(momentum) - g * B(lr);
        } else {
            var += accum;
        }
    }
};

template <class T>
struct Adagrad {
    static constexpr std::size_t kSlots = 1;
    T lr, epsilon;
    bool inside;  // Keras 3: sqrt(acc + eps); TF: sqrt(acc) + eps (TF1 passes eps = 0)
    explicit Adagrad(const Attrs& a)
        : lr(attr<T>(a, "lr")), epsilon(attr<T>(a, "epsilon")), inside(a.get<bool>("epsilon_inside_sqrt")) {}
    template <class B>
    void operator()(B& var, B& accum, const B& g) const {
        accum += g * g;
        const B denom = inside ? vsqrt(accum + B(epsilon)) : vsqrt(accum) + B(epsilon);
        var -= g * B(lr) / denom;
    }
};

template <class T>
struct ProximalAdagrad {
    static constexpr std::size_t kSlots = 1;
    T lr, l1, l2;
    explicit ProximalAdagrad(const Attrs& a)
        : lr(attr<T>(a, "lr")), l1(attr<T>(a, "l1")), l2(attr<T>(a, "l2")) {}
    template <class B>
    void operator()(B& var, B& accum, const B& g) const {
        accum += g * g;
        const B eta = B(lr) / vsqrt(accum);
        const B u = var - eta * g;
        if (l1 > T(0)) {
            var = vsign(u, T()) * vmax(vabs(u) - eta * B(l1), B(T(0))) / (B(T(1)) + eta * B(l2));
        } else {
            var = u / (B(T(1)) + eta * B(l2));
        }
    }
};

template <class T>
struct Adadelta {
    static constexpr std::size_t kSlots = 2;
    T lr, rho, epsilon;
    explicit Adadelta(const Attrs& a)
        : lr(attr<T>(a, "lr")), rho(attr<T>(a, "rho")), epsilon(attr<T>(a, "epsilon")) {}
    template <class B>
    void operator()(B& var, B& accum, B& accum_update, const B& g) const {
        accum = accum * B(rho) + g * g * B(T(1) - rho);
        const B update = vsqrt(accum_update + B(epsilon)) / vsqrt(accum + B(epsilon)) * g;
        accum_update = accum_update * B(rho) + update * update * B(T(1) - rho);
        var -= update * B(lr);
    }
};

// Adam's step size: lr·sqrt(1 − beta2^t)/(1 − beta1^t), computed in T as TensorFlow does.
template <class T>
T adam_alpha(const Attrs& a) {
    return attr<T>(a, "lr") * std::sqrt(T(1) - attr<T>(a, "beta2_power")) / (T(1) - attr<T>(a, "beta1_power"));
}

template <class T>
struct Adam {
    static constexpr std::size_t kSlots = 2;
    T alpha, beta1, beta2, epsilon;
    explicit Adam(const Attrs& a)
        : alpha(adam_alpha<T>(a)), beta1(attr<T>(a, "beta1")), beta2(attr<T>(a, "beta2")),
          epsilon(attr<T>(a, "epsilon")) {}
    template <class B>
    void operator()(B& var, B& m, B& v, const B& g) const {
        m += (g - m) * B(T(1) - beta1);
        v += (g * g - v) * B(T(1) - beta2);
        var -= (m * B(alpha)) / (vsqrt(v) + B(epsilon));
    }
};

template <class T>
struct AdamWithAmsgrad {
    static constexpr std::size_t kSlots = 3;
    Adam<T> adam;
    explicit AdamWithAmsgrad(const Attrs& a) : adam(a) {}
    template <class B>
    void operator()(B& var, B& m, B& v, B& vhat, const B& g) const {
        m += (g - m) * B(T(1) - adam.beta1);
        v += (g * g - v) * B(T(1) - adam.beta2);
        vhat = vmax(vhat, v);
        var -= (m * B(adam.alpha)) / (vsqrt(vhat) + B(adam.epsilon));
    }
};

template <class T>
struct AdaMax {
    static constexpr std::size_t kSlots = 2;
    T step, beta1, beta2, epsilon;
    explicit AdaMax(const Attrs& a)
        : step(attr<T>(a, "lr") / (T(1) - attr<T>(a, "beta1_power"))), beta1(attr<T>(a, "beta1")),
          beta2(attr<T>(a, "beta2")), epsilon(attr<T>(a, "epsilon")) {}
    template <class B>
    void operator()(B& var, B& m, B& u, const B& g) const {
        m += (g - m) * B(T(1) - beta1);
        u = vmax(u * B(beta2), vabs(g));
        var -= B(step) * (m / (u + B(epsilon)));
    }
};

// Keras 3 Nadam; the caller passes u_t, u_{t+1}, the product P (already times u_t) and beta2^t.
template <class T>
struct Nadam {
    static constexpr std::size_t kSlots = 2;
    T lr, beta1, beta2, epsilon, c_m, c_g, c_v;
    explicit Nadam(const Attrs& a)
        : lr(attr<T>(a, "lr")), beta1(attr<T>(a, "beta1")), beta2(attr<T>(a, "beta2")),
          epsilon(attr<T>(a, "epsilon")),
          c_m(attr<T>(a, "u_t1") / (T(1) - attr<T>(a, "u_product") * attr<T>(a, "u_t1"))),
          c_g((T(1) - attr<T>(a, "u_t")) / (T(1) - attr<T>(a, "u_product"))),
          c_v(T(1) / (T(1) - attr<T>(a, "beta2_power"))) {}
    template <class B>
    void operator()(B& var, B& m, B& v, const B& g) const {
        m += (g - m) * B(T(1) - beta1);
        v += (g * g - v) * B(T(1) - beta2);
        const B m_hat = B(c_m) * m + B(c_g) * g;
        const B v_hat = v * B(c_v);
        var -= (m_hat * B(lr)) / (vsqrt(v_hat) + B(epsilon));
    }
};

template <class T>
struct Ftrl {
    static constexpr std::size_t kSlots = 2;
    T lr, l1, l2, shrinkage, power;
    bool sqrt_power;
    explicit Ftrl(const Attrs& a)
        : lr(attr<T>(a, "lr")), l1(attr<T>(a, "l1")), l2(attr<T>(a, "l2")),
          shrinkage(attr<T>(a, "l2_shrinkage")), power(-attr<T>(a, "lr_power")),
          sqrt_power(attr<T>(a, "lr_power") == T(-0.5)) {}
    template <class B>
    B accum_pow(const B& x) const { return sqrt_power ? vsqrt(x) : vpow(x, power); }
    template <class B>
    void operator()(B& var, B& accum, B& linear, const B& g) const {
        const B g_s = shrinkage > T(0) ? g + B(T(2) * shrinkage) * var : g;
        const B new_accum = accum + g * g;
        const B new_pow = accum_pow(new_accum);
        linear += g_s - (new_pow - accum_pow(accum)) / B(lr) * var;
        const B quadratic = new_pow / B(lr) + B(T(2) * l2);
        const B pre_shrink = (vsign(linear, T()) * B(l1) - linear) / quadratic;
        var = vselect(vabs(linear) > B(l1), pre_shrink, B(T(0)));
        accum = new_accum;
    }
};

template <class T>
struct RmsProp {
    static constexpr std::size_t kSlots = 2;
    T lr, rho, momentum, epsilon;
    explicit RmsProp(const Attrs& a)
        : lr(attr<T>(a, "lr")), rho(attr<T>(a, "rho")), momentum(attr<T>(a, "momentum")),
          epsilon(attr<T>(a, "epsilon")) {}
    template <class B>
    void operator()(B& var, B& ms, B& mom, const B& g) const {
        ms += (g * g - ms) * B(T(1) - rho);
        mom = mom * B(momentum) + (g * B(lr)) / vsqrt(ms + B(epsilon));
        var -= mom;
    }
};

template <class T>
struct CenteredRmsProp {
    static constexpr std::size_t kSlots = 3;
    RmsProp<T> p;
    explicit CenteredRmsProp(const Attrs& a) : p(a) {}
    template <class B>
    void operator()(B& var, B& mg, B& ms, B& mom, const B& g) const {
        ms += (g * g - ms) * B(T(1) - p.rho);
        mg += (g - mg) * B(T(1) - p.rho);
        mom = mom * B(p.momentum) + (g * B(p.lr)) / vsqrt(ms - mg * mg + B(p.epsilon));
        var -= mom;
    }
};

// Keras 3 RMSprop without momentum (no momentum slot): var -= lr·g/sqrt(ms [− mg²] + eps).
template <class T>
struct KerasRmsProp {
    static constexpr std::size_t kSlots = 1;
    RmsProp<T> p;
    explicit KerasRmsProp(const Attrs& a) : p(a) {}
    template <class B>
    void operator()(B& var, B& ms, const B& g) const {
        ms += (g * g - ms) * B(T(1) - p.rho);
        var -= (g * B(p.lr)) / vsqrt(ms + B(p.epsilon));
    }
};

template <class T>
struct KerasCenteredRmsProp {
    static constexpr std::size_t kSlots = 2;
    RmsProp<T> p;
    explicit KerasCenteredRmsProp(const Attrs& a) : p(a) {}
    template <class B>
    void operator()(B& var, B& ms, B& mg, const B& g) const {
        ms += (g * g - ms) * B(T(1) - p.rho);
        mg += (g - mg) * B(T(1) - p.rho);
        var -= (g * B(p.lr)) / vsqrt(ms - mg * mg + B(p.epsilon));
    }
};

// ---- the loops ----

// Elements per thread chunk: an update moves 12-24 bytes per element and slot, so below ~64K
// elements threads cost more than they save.
constexpr int64_t kGrain = int64_t{1} << 16;

// Runs f over elements [begin, end) of the var, slots and grad pointers: xsimd batches, then a
// scalar tail. Everything is loaded, updated and stored in one pass.
template <class F, class T, std::size_t N>
void update_range(const F& f, T* var, const std::array<T*, N>& slots, const T* grad, int64_t begin, int64_t end) {
    using B = xsimd::batch<T>;
    constexpr int64_t kWidth = static_cast<int64_t>(B::size);
    auto step = [&]<class V>(int64_t i, auto load, auto store) {
        V v = load(var + i);
        std::array<V, N> s;
        for (std::size_t k = 0; k < N; ++k) s[k] = load(slots[k] + i);
        const V g = load(grad + i);
        [&]<std::size_t... K>(std::index_sequence<K...>) { f(v, s[K]..., g); }(std::make_index_sequence<N>{});
        store(var + i, v);
        for (std::size_t k = 0; k < N; ++k) store(slots[k] + i, s[k]);
    };
    int64_t i = begin;
    for (; i + kWidth <= end; i += kWidth) {
        step.template operator()<B>(
            i, [](const T* p) { return B::load_unaligned(p); }, [](T* p, const B& b) { b.store_unaligned(p); });
    }
    for (; i < end; ++i) {
        step.template operator()<T>(i, [](const T* p) { return *p; }, [](T* p, T x) { *p = x; });
    }
}

template <class T>
T* buffer(const Tensor& t) { return static_cast<T*>(t.mutable_raw_data()); }

template <template <class> class F, class T>
void dense_update(const KernelContext& ctx) {
    using Fn = F<T>;
    constexpr std::size_t N = Fn::kSlots;
    const Fn f(ctx.attrs);
    T* var = buffer<T>(ctx.inputs[0]);
    std::array<T*, N> slots{};
    for (std::size_t k = 0; k < N; ++k) slots[k] = buffer<T>(ctx.inputs[1 + k]);
    const T* grad = static_cast<const T*>(ctx.inputs[1 + N].raw_data());
    parallel_for(ctx.inputs[0].num_elements(), kGrain,
                 [&](int64_t begin, int64_t end) { update_range(f, var, slots, grad, begin, end); });
}

template <template <class> class F, class T>
void sparse_update(const KernelContext& ctx) {
    using Fn = F<T>;
    constexpr std::size_t N = Fn::kSlots;
    const Fn f(ctx.attrs);
    const Tensor& indices = ctx.inputs[2 + N];
    const int64_t rows = indices.num_elements();
    const int64_t var_rows = ctx.inputs[0].shape()[0];
    const int64_t row = var_rows == 0 ? 0 : ctx.inputs[0].num_elements() / var_rows;
    T* var = buffer<T>(ctx.inputs[0]);
    std::array<T*, N> slots{};
    for (std::size_t k = 0; k < N; ++k) slots[k] = buffer<T>(ctx.inputs[1 + k]);
    const T* values = static_cast<const T*>(ctx.inputs[1 + N].raw_data());
    auto run = [&]<class I>(const I* index) {
        // Indices are unique, so rows never overlap between threads.
        parallel_for(rows, std::max<int64_t>(1, kGrain / std::max<int64_t>(row, 1)), [&](int64_t begin, int64_t end) {
            for (int64_t r = begin; r < end; ++r) {
                const int64_t offset = static_cast<int64_t>(index[r]) * row;
                std::array<T*, N> s{};
                for (std::size_t k = 0; k < N; ++k) s[k] = slots[k] + offset;
                update_range(f, var + offset, s, values + r * row, 0, row);
            }
        });
    };
    if (indices.dtype() == DType::int32) {
        run(static_cast<const int32_t*>(indices.raw_data()));
    } else {
        run(static_cast<const int64_t*>(indices.raw_data()));
    }
}

template <template <class> class F>
void dense_kernel(const KernelContext& ctx) {
    if (ctx.inputs[0].dtype() == DType::float64) {
        dense_update<F, double>(ctx);
    } else {
        dense_update<F, float>(ctx);
    }
}

template <template <class> class F>
void sparse_kernel(const KernelContext& ctx) {
    if (ctx.inputs[0].dtype() == DType::float64) {
        sparse_update<F, double>(ctx);
    } else {
        sparse_update<F, float>(ctx);
    }
}

}  // namespace

void register_training_cpu(KernelRegistry& r) {
    constexpr auto kCpu = DeviceType::cpu;
    const DTypeSet kTypes{DType::float32, DType::float64};
    r.add(Op::apply_gradient_descent, kCpu, dense_kernel<GradientDescent>, kTypes);
    r.add(Op::apply_proximal_gradient_descent, kCpu, dense_kernel<ProximalGradientDescent>, kTypes);
    r.add(Op::apply_momentum, kCpu, dense_kernel<Momentum>, kTypes);
    r.add(Op::apply_keras_momentum, kCpu, dense_kernel<KerasMomentum>, kTypes);
    r.add(Op::apply_adagrad, kCpu, dense_kernel<Adagrad>, kTypes);
    r.add(Op::apply_proximal_adagrad, kCpu, dense_kernel<ProximalAdagrad>, kTypes);
    r.add(Op::apply_adadelta, kCpu, dense_kernel<Adadelta>, kTypes);
    r.add(Op::apply_adam, kCpu, dense_kernel<Adam>, kTypes);
    r.add(Op::apply_adam_with_amsgrad, kCpu, dense_kernel<AdamWithAmsgrad>, kTypes);
    r.add(Op::apply_ada_max, kCpu, dense_kernel<AdaMax>, kTypes);
    r.add(Op::apply_nadam, kCpu, dense_kernel<Nadam>, kTypes);
    r.add(Op::apply_ftrl, kCpu, dense_kernel<Ftrl>, kTypes);
    r.add(Op::apply_rms_prop, kCpu, dense_kernel<RmsProp>, kTypes);
    r.add(Op::apply_centered_rms_prop, kCpu, dense_kernel<CenteredRmsProp>, kTypes);
    r.add(Op::apply_keras_rms_prop, kCpu, dense_kernel<KerasRmsProp>, kTypes);
    r.add(Op::apply_keras_centered_rms_prop, kCpu, dense_kernel<KerasCenteredRmsProp>, kTypes);
    r.add(Op::sparse_apply_gradient_descent, kCpu, sparse_kernel<GradientDescent>, kTypes);
    r.add(Op::sparse_apply_proximal_gradient_descent, kCpu, sparse_kernel<ProximalGradientDescent>, kTypes);
    r.add(Op::sparse_apply_momentum, kCpu, sparse_kernel<Momentum>, kTypes);
    r.add(Op::sparse_apply_adagrad, kCpu, sparse_kernel<Adagrad>, kTypes);
    r.add(Op::sparse_apply_proximal_adagrad, kCpu, sparse_kernel<ProximalAdagrad>, kTypes);
    r.add(Op::sparse_apply_adadelta, kCpu, sparse_kernel<Adadelta>, kTypes);
    r.add(Op::sparse_apply_ftrl, kCpu, sparse_kernel<Ftrl>, kTypes);
    r.add(Op::sparse_apply_rms_prop, kCpu, sparse_kernel<RmsProp>, kTypes);
    r.add(Op::sparse_apply_centered_rms_prop, kCpu, sparse_kernel<CenteredRmsProp>, kTypes);
}

}  // namespace tapeflow
