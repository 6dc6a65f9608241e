// The per-element math of the fused optimizer updates (op_list.def "Training ops"), written once
// for the CPU loops (scalars and xsimd batches: unqualified sqrt/abs/pow/select find xsimd's by
// argument-dependent lookup) and the CUDA kernels (TAPEFLOW_HD, scalars). Formulas follow
// TensorFlow's CPU kernels (training_ops.cc) in their order of operations.
// Each functor's operator()(var, slots..., grad) updates its arguments in place.
#pragma once

#include <cmath>
#include <cstddef>

#include "core/hd.hpp"
#include "kernels/shared/activation_functors.hpp"

namespace tapeflow::opt {

/// The attrs of a training op as plain values (kernels/shared/optimizer_attrs.hpp reads them); each
/// functor takes the ones its op sets. Built on the host, passed by value to the CUDA launchers.
struct Hyper {
    double alpha = 0, lr = 0, l1 = 0, l2 = 0, momentum = 0, rho = 0, epsilon = 0;
    double beta1 = 0, beta2 = 0, beta1_power = 0, beta2_power = 0;
    double u_t = 0, u_t1 = 0, u_product = 0, l2_shrinkage = 0, lr_power = 0;
    bool use_nesterov = false, epsilon_inside_sqrt = false;
};

// Element-wise helpers for a scalar and a SIMD batch alike.
template <class V>
TAPEFLOW_HD V vsqrt(const V& x) {
    using std::sqrt;
    return sqrt(x);
}
template <class V>
TAPEFLOW_HD V vabs(const V& x) {
    using std::abs;
    return abs(x);
}
template <class V>
TAPEFLOW_HD V vmax(const V& a, const V& b) {  // NaN in a propagates, as Eigen's max
    return act::pick(a > b, a, b);
}
template <class V, class T>
TAPEFLOW_HD V vpow(const V& x, T p) {
    using std::pow;
    return pow(x, V(p));
}
// sign(x) in {-1, 0, 1}.
template <class V, class T>
TAPEFLOW_HD V vsign(const V& x, T) {
    return act::pick(x > V(T(0)), V(T(1)), act::pick(x < V(T(0)), V(T(-1)), V(T(0))));
}
// Proximal step: sign(u)·max(|u| − shrink, 0) / scale (l1 > 0), else u / scale.
template <class V, class T>
TAPEFLOW_HD V proximal(const V& u, T shrink, T scale, bool l1) {
    if (!l1) return u / V(scale);
    return vsign(u, T()) * vmax(vabs(u) - V(shrink), V(T(0))) / V(scale);
}

template <class T>
struct GradientDescent {
    static constexpr std::size_t kSlots = 0;
    T alpha;
    explicit GradientDescent(const Hyper& h) : alpha(static_cast<T>(h.alpha)) {}
    template <class B>
    TAPEFLOW_HD void operator()(B& var, const B& g) const {
        var -= g * B(alpha);
    }
};

template <class T>
struct ProximalGradientDescent {
    static constexpr std::size_t kSlots = 0;
    T alpha, l1, l2;
    explicit ProximalGradientDescent(const Hyper& h)
        : alpha(static_cast<T>(h.alpha)), l1(static_cast<T>(h.l1)), l2(static_cast<T>(h.l2)) {}
    template <class B>
    TAPEFLOW_HD void operator()(B& var, const B& g) const {
        const B u = var - B(alpha) * g;
        var = proximal(u, alpha * l1, T(1) + alpha * l2, l1 > T(0));
    }
};

template <class T>
struct Momentum {
    static constexpr std::size_t kSlots = 1;
    T lr, momentum;
    bool nesterov;
    explicit Momentum(const Hyper& h)
        : lr(static_cast<T>(h.lr)),
          momentum(static_cast<T>(h.momentum)),
          nesterov(h.use_nesterov) {}
    template <class B>
    TAPEFLOW_HD void operator()(B& var, B& accum, const B& g) const {
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
    Momentum<T> p;
    explicit KerasMomentum(const Hyper& h) : p(h) {}
    template <class B>
    TAPEFLOW_HD void operator()(B& var, B& accum, const B& g) const {
        accum = accum * B(p.momentum) - g * B(p.lr);
        if (p.nesterov) {
            var += accum * B(p.momentum) - g * B(p.lr);
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
    explicit Adagrad(const Hyper& h)
        : lr(static_cast<T>(h.lr)),
          epsilon(static_cast<T>(h.epsilon)),
          inside(h.epsilon_inside_sqrt) {}
    template <class B>
    TAPEFLOW_HD void operator()(B& var, B& accum, const B& g) const {
        accum += g * g;
        const B denom = inside ? vsqrt(accum + B(epsilon)) : vsqrt(accum) + B(epsilon);
        var -= g * B(lr) / denom;
    }
};

template <class T>
struct ProximalAdagrad {
    static constexpr std::size_t kSlots = 1;
    T lr, l1, l2;
    explicit ProximalAdagrad(const Hyper& h)
        : lr(static_cast<T>(h.lr)), l1(static_cast<T>(h.l1)), l2(static_cast<T>(h.l2)) {}
    template <class B>
    TAPEFLOW_HD void operator()(B& var, B& accum, const B& g) const {
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
    explicit Adadelta(const Hyper& h)
        : lr(static_cast<T>(h.lr)),
          rho(static_cast<T>(h.rho)),
          epsilon(static_cast<T>(h.epsilon)) {}
    template <class B>
    TAPEFLOW_HD void operator()(B& var, B& accum, B& accum_update, const B& g) const {
        accum = accum * B(rho) + g * g * B(T(1) - rho);
        const B update = vsqrt(accum_update + B(epsilon)) / vsqrt(accum + B(epsilon)) * g;
        accum_update = accum_update * B(rho) + update * update * B(T(1) - rho);
        var -= update * B(lr);
    }
};

template <class T>
struct Adam {
    static constexpr std::size_t kSlots = 2;
    T alpha, beta1, beta2, epsilon;
    // The step size lr·sqrt(1 − beta2^t)/(1 − beta1^t), computed in T as TensorFlow does.
    explicit Adam(const Hyper& h)
        : alpha(static_cast<T>(h.lr) * std::sqrt(T(1) - static_cast<T>(h.beta2_power)) /
                (T(1) - static_cast<T>(h.beta1_power))),
          beta1(static_cast<T>(h.beta1)),
          beta2(static_cast<T>(h.beta2)),
          epsilon(static_cast<T>(h.epsilon)) {}
    template <class B>
    TAPEFLOW_HD void operator()(B& var, B& m, B& v, const B& g) const {
        m += (g - m) * B(T(1) - beta1);
        v += (g * g - v) * B(T(1) - beta2);
        var -= (m * B(alpha)) / (vsqrt(v) + B(epsilon));
    }
};

template <class T>
struct AdamWithAmsgrad {
    static constexpr std::size_t kSlots = 3;
    Adam<T> adam;
    explicit AdamWithAmsgrad(const Hyper& h) : adam(h) {}
    template <class B>
    TAPEFLOW_HD void operator()(B& var, B& m, B& v, B& vhat, const B& g) const {
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
    explicit AdaMax(const Hyper& h)
        : step(static_cast<T>(h.lr) / (T(1) - static_cast<T>(h.beta1_power))),
          beta1(static_cast<T>(h.beta1)),
          beta2(static_cast<T>(h.beta2)),
          epsilon(static_cast<T>(h.epsilon)) {}
    template <class B>
    TAPEFLOW_HD void operator()(B& var, B& m, B& u, const B& g) const {
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
    explicit Nadam(const Hyper& h)
        : lr(static_cast<T>(h.lr)),
          beta1(static_cast<T>(h.beta1)),
          beta2(static_cast<T>(h.beta2)),
          epsilon(static_cast<T>(h.epsilon)),
          c_m(static_cast<T>(h.u_t1) /
              (T(1) - static_cast<T>(h.u_product) * static_cast<T>(h.u_t1))),
          c_g((T(1) - static_cast<T>(h.u_t)) / (T(1) - static_cast<T>(h.u_product))),
          c_v(T(1) / (T(1) - static_cast<T>(h.beta2_power))) {}
    template <class B>
    TAPEFLOW_HD void operator()(B& var, B& m, B& v, const B& g) const {
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
    explicit Ftrl(const Hyper& h)
        : lr(static_cast<T>(h.lr)),
          l1(static_cast<T>(h.l1)),
          l2(static_cast<T>(h.l2)),
          shrinkage(static_cast<T>(h.l2_shrinkage)),
          power(-static_cast<T>(h.lr_power)),
          sqrt_power(static_cast<T>(h.lr_power) == T(-0.5)) {}
    template <class B>
    TAPEFLOW_HD B accum_pow(const B& x) const {
        return sqrt_power ? vsqrt(x) : vpow(x, power);
    }
    template <class B>
    TAPEFLOW_HD void operator()(B& var, B& accum, B& linear, const B& g) const {
        const B g_s = shrinkage > T(0) ? g + B(T(2) * shrinkage) * var : g;
        const B new_accum = accum + g * g;
        const B new_pow = accum_pow(new_accum);
        linear += g_s - (new_pow - accum_pow(accum)) / B(lr) * var;
        const B quadratic = new_pow / B(lr) + B(T(2) * l2);
        const B pre_shrink = (vsign(linear, T()) * B(l1) - linear) / quadratic;
        var = act::pick(vabs(linear) > B(l1), pre_shrink, B(T(0)));
        accum = new_accum;
    }
};

template <class T>
struct RmsProp {
    static constexpr std::size_t kSlots = 2;
    T lr, rho, momentum, epsilon;
    explicit RmsProp(const Hyper& h)
        : lr(static_cast<T>(h.lr)),
          rho(static_cast<T>(h.rho)),
          momentum(static_cast<T>(h.momentum)),
          epsilon(static_cast<T>(h.epsilon)) {}
    template <class B>
    TAPEFLOW_HD void operator()(B& var, B& ms, B& mom, const B& g) const {
        ms += (g * g - ms) * B(T(1) - rho);
        mom = mom * B(momentum) + (g * B(lr)) / vsqrt(ms + B(epsilon));
        var -= mom;
    }
};

template <class T>
struct CenteredRmsProp {
    static constexpr std::size_t kSlots = 3;
    RmsProp<T> p;
    explicit CenteredRmsProp(const Hyper& h) : p(h) {}
    template <class B>
    TAPEFLOW_HD void operator()(B& var, B& mg, B& ms, B& mom, const B& g) const {
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
    explicit KerasRmsProp(const Hyper& h) : p(h) {}
    template <class B>
    TAPEFLOW_HD void operator()(B& var, B& ms, const B& g) const {
        ms += (g * g - ms) * B(T(1) - p.rho);
        var -= (g * B(p.lr)) / vsqrt(ms + B(p.epsilon));
    }
};

template <class T>
struct KerasCenteredRmsProp {
    static constexpr std::size_t kSlots = 2;
    RmsProp<T> p;
    explicit KerasCenteredRmsProp(const Hyper& h) : p(h) {}
    template <class B>
    TAPEFLOW_HD void operator()(B& var, B& ms, B& mg, const B& g) const {
        ms += (g * g - ms) * B(T(1) - p.rho);
        mg += (g - mg) * B(T(1) - p.rho);
        var -= (g * B(p.lr)) / vsqrt(ms - mg * mg + B(p.epsilon));
    }
};

}  // namespace tapeflow::opt
