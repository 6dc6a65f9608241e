// The math of the nn activations (Relu, Relu6, Elu, Selu, LeakyRelu) and their *Grad ops, written
// once for the CPU loops (scalars and xsimd batches) and the CUDA kernels (TAPEFLOW_HD), with
// TensorFlow's kernel formulas (relu_op_functor.h): the masks test `x > 0` / `y < 0`, which fixes
// the values at the kinks (relu6 passes nothing at 0 and 6, selu's slope at 0 is scale).
#pragma once

#include <cmath>
#include <type_traits>

#include "core/hd.hpp"

namespace tapeflow::act {

inline constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
inline constexpr double kSeluScale = 1.0507009873554804934193349852946;

// The element type of a scalar or of a SIMD batch (any Batch<T, Arch> template, e.g. xsimd's).
template <class V>
struct Elem {
    using type = V;
};
template <template <class, class> class B, class T, class A>
struct Elem<B<T, A>> {
    using type = T;
};

// c ? a : b for scalars; `select` (found by argument-dependent lookup: xsimd::select) for batches.
template <class V, class C>
TAPEFLOW_HD V pick(const C& c, const V& a, const V& b) {
    if constexpr (std::is_arithmetic_v<V>) {
        return c ? a : b;
    } else {
        return select(c, a, b);
    }
}

struct Relu {
    static constexpr bool kSimd = false;  // the plain CPU loop vectorizes
    template <class V>
    TAPEFLOW_HD V operator()(V x) const {
        return x > V(0) ? x : V(0);
    }
};
struct Relu6 {
    static constexpr bool kSimd = false;
    template <class V>
    TAPEFLOW_HD V operator()(V x) const {
        return x > V(0) ? (x < V(6) ? x : V(6)) : V(0);
    }
};
struct Elu {
    static constexpr bool kSimd = true;
    template <class V>
    TAPEFLOW_HD V operator()(V x) const {
        using std::expm1;
        return pick(x < V(0), V(expm1(x)), x);
    }
};
struct Selu {
    static constexpr bool kSimd = true;
    template <class V>
    TAPEFLOW_HD V operator()(V x) const {
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
    TAPEFLOW_HD V operator()(V x) const {
        return x > V(0) ? x : static_cast<V>(x * static_cast<V>(alpha));
    }
};

// The *Grad ops: f(g, x) with x the features (relu, relu6, leaky) or the outputs (elu, selu).
struct ReluGrad {
    template <class T>
    TAPEFLOW_HD T operator()(T g, T x) const {
        return x > T(0) ? g : T(0);
    }
};
struct Relu6Grad {
    template <class T>
    TAPEFLOW_HD T operator()(T g, T x) const {
        return (x > T(0) && x < T(6)) ? g : T(0);
    }
};
struct EluGrad {
    template <class T>
    TAPEFLOW_HD T operator()(T g, T y) const {
        return y < T(0) ? static_cast<T>(g * (y + T(1))) : g;
    }
};
struct SeluGrad {
    template <class T>
    TAPEFLOW_HD T operator()(T g, T y) const {
        return y < T(0) ? static_cast<T>(g * (y + static_cast<T>(kSeluScale * kSeluAlpha)))
                        : static_cast<T>(g * static_cast<T>(kSeluScale));
    }
};
struct LeakyReluGrad {
    double alpha;
    template <class T>
    TAPEFLOW_HD T operator()(T g, T x) const {
        return x > T(0) ? g : static_cast<T>(g * static_cast<T>(alpha));
    }
};

}  // namespace tapeflow::act
