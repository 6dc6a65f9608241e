// The math of the element-wise ops, written once: one functor per op, called by every CPU loop
// (linear, scalar, row/column and general broadcasting, SIMD) and by the CUDA kernels, hence
// TAPEFLOW_HD and no xsimd here. Not the loops: those are in kernels/cpu/elementwise_loops.hpp
// and cuda/*_kernels.cu. The unary functors are listed, with their dtypes, in unary_ops.def.
//
// Functors take and return the *compute* type (float for the 16-bit floats). Functors marked
// kSimd are generic over V so that the CPU can call them on xsimd batches as well as scalars:
// unqualified calls after `using std::exp` find xsimd::exp by argument-dependent lookup.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "core/hd.hpp"

namespace tapeflow::ew {

// ---- integer helpers: TensorFlow's integer kernels wrap around (two's complement); C++ signed
// overflow is undefined, so signed arithmetic goes through the unsigned type ----

template <class T>
inline constexpr bool kSignedInt = std::conjunction_v<std::is_integral<T>, std::is_signed<T>>;

template <class T>
TAPEFLOW_HD inline T wrap_add(T a, T b) {
    if constexpr (kSignedInt<T>) {
        using U = std::make_unsigned_t<T>;
        return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
    } else {
        return static_cast<T>(a + b);
    }
}
template <class T>
TAPEFLOW_HD inline T wrap_sub(T a, T b) {
    if constexpr (kSignedInt<T>) {
        using U = std::make_unsigned_t<T>;
        return static_cast<T>(static_cast<U>(static_cast<U>(a) - static_cast<U>(b)));
    } else {
        return static_cast<T>(a - b);
    }
}
template <class T>
TAPEFLOW_HD inline T wrap_mul(T a, T b) {
    if constexpr (kSignedInt<T>) {
        using U = std::make_unsigned_t<T>;
        return static_cast<T>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
    } else if constexpr (std::is_integral_v<T>) {
        return static_cast<T>(static_cast<unsigned>(a) * static_cast<unsigned>(b));  // uint8
    } else {
        return a * b;
    }
}

// ---- arithmetic (binary) ----

struct Add {
    template <class T>
    TAPEFLOW_HD T operator()(T a, T b) const {
        return wrap_add(a, b);
    }
};
struct Sub {
    template <class T>
    TAPEFLOW_HD T operator()(T a, T b) const {
        return wrap_sub(a, b);
    }
};
struct Mul {
    template <class T>
    TAPEFLOW_HD T operator()(T a, T b) const {
        return wrap_mul(a, b);
    }
};

/// IEEE division (TF's RealDiv; floats only: tf::divide casts integers to a float first).
struct Div {
    template <class T>
    TAPEFLOW_HD T operator()(T a, T b) const {
        return static_cast<T>(a / b);
    }
};

/// floor(a / b). Floats as TF's google_floor_div_real; integers round toward -inf.
struct FloorDiv {
    template <class T>
    TAPEFLOW_HD T operator()(T a, T b) const {
        if constexpr (std::is_floating_point_v<T>) {
            return std::floor(a / b);
        } else if constexpr (kSignedInt<T>) {
            if (b == T(-1)) return wrap_sub(T(0), a);
            const T q = static_cast<T>(a / b);
            const T r = static_cast<T>(a % b);
            return (r != 0 && ((r < 0) != (b < 0))) ? static_cast<T>(q - 1) : q;
        } else {
            return static_cast<T>(a / b);
        }
    }
};

/// a - floor(a / b) * b: the result has the sign of b (TF's FloorMod, Python's %).
struct FloorMod {
    template <class T>
    TAPEFLOW_HD T operator()(T a, T b) const {
        if constexpr (std::is_floating_point_v<T>) {
            const T m = std::fmod(a, b);  // TF's google_floor_fmod
            return (m != T(0) && ((b < T(0)) != (m < T(0)))) ? m + b : m;
        } else if constexpr (kSignedInt<T>) {
            if (b == T(-1)) return T(0);
            const T r = static_cast<T>(a % b);
            return (r != 0 && ((r < 0) != (b < 0))) ? static_cast<T>(r + b) : r;
        } else {
            return static_cast<T>(a % b);
        }
    }
};

/// Floats: std::pow (pow(x, 0) = 1, a negative base with a non-integer exponent is NaN).
/// Integers: exponentiation by squaring, wrapping; the caller has rejected negative exponents.
struct Pow {
    template <class T>
    TAPEFLOW_HD T operator()(T a, T b) const {
        if constexpr (std::is_floating_point_v<T>) {
            return std::pow(a, b);
        } else {
            T result = 1;
            T base = a;
            for (T e = b; e > 0; e = static_cast<T>(e / 2)) {
                if ((e & 1) != 0) result = wrap_mul(result, base);
                base = wrap_mul(base, base);
            }
            return result;
        }
    }
};

// Maximum and Minimum propagate NaN from either side (TF uses Eigen's PropagateNaN) and return
// the first argument on ties.
struct Maximum {
    template <class T>
    TAPEFLOW_HD T operator()(T a, T b) const {
        if constexpr (std::is_floating_point_v<T>) {
            if (a != a) return a;
            return (a < b || b != b) ? b : a;
        } else {
            return a < b ? b : a;
        }
    }
};
struct Minimum {
    template <class T>
    TAPEFLOW_HD T operator()(T a, T b) const {
        if constexpr (std::is_floating_point_v<T>) {
            if (a != a) return a;
            return (b < a || b != b) ? b : a;
        } else {
            return b < a ? b : a;
        }
    }
};

struct SquaredDifference {
    template <class T>
    TAPEFLOW_HD T operator()(T a, T b) const {
        const T d = wrap_sub(a, b);
        return wrap_mul(d, d);
    }
};

/// a / b, and 0 where b == 0 (also for a = inf or NaN), as TF's DivNoNan.
struct DivNoNan {
    template <class T>
    TAPEFLOW_HD T operator()(T a, T b) const {
        return b == T(0) ? T(0) : a / b;
    }
};

// ---- comparisons and logic: bool results ----

struct Equal {
    template <class T>
    TAPEFLOW_HD bool operator()(T a, T b) const {
        return a == b;
    }
};
struct NotEqual {
    template <class T>
    TAPEFLOW_HD bool operator()(T a, T b) const {
        return a != b;
    }
};
struct Less {
    template <class T>
    TAPEFLOW_HD bool operator()(T a, T b) const {
        return a < b;
    }
};
struct LessEqual {
    template <class T>
    TAPEFLOW_HD bool operator()(T a, T b) const {
        return a <= b;
    }
};
struct Greater {
    template <class T>
    TAPEFLOW_HD bool operator()(T a, T b) const {
        return a > b;
    }
};
struct GreaterEqual {
    template <class T>
    TAPEFLOW_HD bool operator()(T a, T b) const {
        return a >= b;
    }
};
// Bitwise on the 0/1 bytes of bool tensors: same result, and it vectorizes.
struct LogicalAnd {
    TAPEFLOW_HD bool operator()(bool a, bool b) const { return a & b; }
};
struct LogicalOr {
    TAPEFLOW_HD bool operator()(bool a, bool b) const { return a | b; }
};
/// Flips the low bit: on the CPU it runs on the bytes of the bool tensor, where `!` on bool does
/// not vectorize.
struct LogicalNot {
    static constexpr bool kSimd = false;
    template <class T>
    TAPEFLOW_HD T operator()(T a) const {
        return static_cast<T>(a ^ T(1));
    }
};

// ---- unary ----

struct Negative {
    static constexpr bool kSimd = false;  // the plain loop vectorizes by itself
    template <class V>
    TAPEFLOW_HD V operator()(V x) const {
        if constexpr (std::is_integral_v<V>)
            return wrap_sub(V(0), x);
        else
            return -x;
    }
};
struct Abs {
    static constexpr bool kSimd = false;
    template <class V>
    TAPEFLOW_HD V operator()(V x) const {
        if constexpr (std::is_integral_v<V>)
            return x < 0 ? wrap_sub(V(0), x) : x;
        else
            return std::fabs(x);
    }
};
/// -1, 0 or 1; NaN stays NaN.
struct Sign {
    static constexpr bool kSimd = false;
    template <class V>
    TAPEFLOW_HD V operator()(V x) const {
        if constexpr (std::is_integral_v<V>)
            return static_cast<V>((x > 0) - (x < 0));
        else
            return x > V(0) ? V(1) : (x < V(0) ? V(-1) : x);
    }
};
struct Square {
    static constexpr bool kSimd = false;
    template <class V>
    TAPEFLOW_HD V operator()(V x) const {
        return wrap_mul(x, x);
    }
};
struct Reciprocal {
    static constexpr bool kSimd = false;
    template <class V>
    TAPEFLOW_HD V operator()(V x) const {
        return V(1) / x;
    }
};
struct Exp {
    static constexpr bool kSimd = true;
    template <class V>
    TAPEFLOW_HD V operator()(V x) const {
        using std::exp;
        return exp(x);
    }
};
struct Expm1 {
    static constexpr bool kSimd = true;
    template <class V>
    TAPEFLOW_HD V operator()(V x) const {
        using std::expm1;
        return expm1(x);
    }
};
struct Log {
    static constexpr bool kSimd = true;
    template <class V>
    TAPEFLOW_HD V operator()(V x) const {
        using std::log;
        return log(x);
    }
};
struct Log1p {
    static constexpr bool kSimd = true;
    template <class V>
    TAPEFLOW_HD V operator()(V x) const {
        using std::log1p;
        return log1p(x);
    }
};
// sqrt sets errno on negative inputs, so the compiler keeps the scalar loop scalar: go through
// SIMD.
struct Sqrt {
    static constexpr bool kSimd = true;
    template <class V>
    TAPEFLOW_HD V operator()(V x) const {
        using std::sqrt;
        return sqrt(x);
    }
};
/// A correctly rounded 1 / sqrt(x), not the hardware's approximate rsqrt.
struct Rsqrt {
    static constexpr bool kSimd = true;
    template <class V>
    TAPEFLOW_HD V operator()(V x) const {
        using std::sqrt;
        return V(1) / sqrt(x);
    }
};
struct Sin {
    static constexpr bool kSimd = true;
    template <class V>
    TAPEFLOW_HD V operator()(V x) const {
        using std::sin;
        return sin(x);
    }
};
struct Cos {
    static constexpr bool kSimd = true;
    template <class V>
    TAPEFLOW_HD V operator()(V x) const {
        using std::cos;
        return cos(x);
    }
};
struct Tanh {
    static constexpr bool kSimd = true;
    template <class V>
    TAPEFLOW_HD V operator()(V x) const {
        using std::tanh;
        return tanh(x);
    }
};
/// 1 / (1 + e^-x): saturates to exactly 0 and 1, never NaN.
struct Sigmoid {
    static constexpr bool kSimd = true;
    template <class V>
    TAPEFLOW_HD V operator()(V x) const {
        using std::exp;
        return V(1) / (V(1) + exp(-x));
    }
};
struct Erf {
    static constexpr bool kSimd = true;
    template <class V>
    TAPEFLOW_HD V operator()(V x) const {
        using std::erf;
        return erf(x);
    }
};
struct Floor {
    static constexpr bool kSimd = true;
    template <class V>
    TAPEFLOW_HD V operator()(V x) const {
        using std::floor;
        return floor(x);
    }
};
struct Ceil {
    static constexpr bool kSimd = true;
    template <class V>
    TAPEFLOW_HD V operator()(V x) const {
        using std::ceil;
        return ceil(x);
    }
};
/// Half to even (banker's rounding), as tf.round: nearbyint in the default rounding mode.
/// Integers are returned unchanged.
struct Round {
    static constexpr bool kSimd = true;
    template <class V>
    TAPEFLOW_HD V operator()(V x) const {
        if constexpr (std::is_integral_v<V>) {
            return x;
        } else {
            using std::nearbyint;
            return nearbyint(x);
        }
    }
};
/// log(1 + e^x) = max(x, 0) + log1p(e^-|x|): no overflow for large x, no loss for very negative x.
struct Softplus {
    static constexpr bool kSimd = true;
    template <class V>
    TAPEFLOW_HD V operator()(V x) const {
        using std::abs;
        using std::exp;
        using std::log1p;
        using std::max;
        return max(x, V(0)) + log1p(exp(-abs(x)));
    }
};

// ---- smooth activations (tf::nn): element-wise primitives, fused like the ops above ----

/// x Phi(x) = x (1 + erf(x / sqrt 2)) / 2: TensorFlow's gelu(approximate=False).
struct Gelu {
    static constexpr bool kSimd = true;
    template <class V>
    TAPEFLOW_HD V operator()(V x) const {
        using std::erf;
        return V(0.5) * x * (V(1) + erf(x * V(0.7071067811865475244)));
    }
};
/// x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))) / 2: TensorFlow's gelu(approximate=True).
struct GeluApproximate {
    static constexpr bool kSimd = true;
    template <class V>
    TAPEFLOW_HD V operator()(V x) const {
        using std::tanh;
        const V inner = V(0.7978845608028654) * (x + V(0.044715) * x * x * x);
        return V(0.5) * x * (V(1) + tanh(inner));
    }
};
/// x sigmoid(x) = x / (1 + e^-x) (silu, swish); -0 for very negative x, never NaN.
struct Silu {
    static constexpr bool kSimd = true;
    template <class V>
    TAPEFLOW_HD V operator()(V x) const {
        using std::exp;
        return x / (V(1) + exp(-x));
    }
};
/// x / (1 + |x|).
struct Softsign {
    static constexpr bool kSimd = true;
    template <class V>
    TAPEFLOW_HD V operator()(V x) const {
        using std::abs;
        return x / (V(1) + abs(x));
    }
};
/// log(sigmoid(x)) = -softplus(-x): finite for every finite x (-x for very negative x).
struct LogSigmoid {
    static constexpr bool kSimd = true;
    template <class V>
    TAPEFLOW_HD V operator()(V x) const {
        return -Softplus{}(-x);
    }
};

}  // namespace tapeflow::ew
