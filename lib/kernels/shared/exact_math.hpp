// log, sin and cos in double that give the same bits on the host and on a CUDA device, for the
// random generators (seeded numbers must not depend on the device). fdlibm's algorithms (< 1 ulp)
// written with IEEE basic operations only, each product rounded on its own: g++ contracts a * b + c
// into an fma even with -std=c++20 (C++ has no ISO fp-contract mode in GCC) and nvcc does by
// default, so every product goes through exact::mul (device: __dmul_rn, never fused; host: a
// register barrier).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "core/hd.hpp"

namespace tapeflow::exact {

/// a * b rounded once, never fused with a neighbouring addition.
TAPEFLOW_HD inline double mul(double a, double b) {
#if defined(__CUDA_ARCH__)
    return __dmul_rn(a, b);
#else
    double p = a * b;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    __asm__("" : "+x"(p));  // p must exist as a rounded double: no fma can absorb the product
#else
    volatile double keep = p;
    p = keep;
#endif
    return p;
#endif
}

/// float version of mul (the float32 uniform draws compute in float).
TAPEFLOW_HD inline float mul(float a, float b) {
#if defined(__CUDA_ARCH__)
    return __fmul_rn(a, b);
#else
    float p = a * b;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    __asm__("" : "+x"(p));
#else
    volatile float keep = p;
    p = keep;
#endif
    return p;
#endif
}

/// Correctly rounded square root (IEEE on both sides).
TAPEFLOW_HD inline double sqrt(double x) {
#if defined(__CUDA_ARCH__)
    return __dsqrt_rn(x);
#else
    return std::sqrt(x);
#endif
}

TAPEFLOW_HD inline uint64_t to_bits(double x) {
#if defined(__CUDA_ARCH__)
    return static_cast<uint64_t>(__double_as_longlong(x));
#else
    uint64_t bits = 0;
    std::memcpy(&bits, &x, sizeof bits);
    return bits;
#endif
}

TAPEFLOW_HD inline double from_bits(uint64_t bits) {
#if defined(__CUDA_ARCH__)
    return __longlong_as_double(static_cast<long long>(bits));
#else
    double x = 0;
    std::memcpy(&x, &bits, sizeof x);
    return x;
#endif
}

/// Natural logarithm (fdlibm e_log.c: log(1 + f) = f - f^2/2 + s * R(s^2), s = f / (2 + f),
/// error < 1 ulp). Handles 0 (-inf), negatives (NaN), subnormals, inf and NaN.
TAPEFLOW_HD inline double log(double x) {
    constexpr double kLn2Hi = 6.93147180369123816490e-01, kLn2Lo = 1.90821492927058770002e-10;
    constexpr double kTwo54 = 1.80143985094819840000e+16;
    constexpr double kLg1 = 6.666666666666735130e-01, kLg2 = 3.999999999940941908e-01;
    constexpr double kLg3 = 2.857142874366239149e-01, kLg4 = 2.222219843214978396e-01;
    constexpr double kLg5 = 1.818357216161805012e-01, kLg6 = 1.531383769920937332e-01;
    constexpr double kLg7 = 1.479819860511658591e-01;
    uint64_t bits = to_bits(x);
    auto hx = static_cast<int32_t>(bits >> 32);
    int k = 0;
    if (hx < 0x00100000) {  // x < 2^-1022: zero, negative or subnormal
        if ((bits & 0x7fffffffffffffffULL) == 0) return -HUGE_VAL;
        if (hx < 0) return NAN;
        k -= 54;
        x = mul(x, kTwo54);  // exact: scale the subnormal up
        bits = to_bits(x);
        hx = static_cast<int32_t>(bits >> 32);
    }
    if (hx >= 0x7ff00000) return x + x;
    k += (hx >> 20) - 1023;
    hx &= 0x000fffff;
    const int32_t i = (hx + 0x95f64) & 0x100000;
    // x's mantissa with exponent 0 or -1, so that it lies in [sqrt(2)/2, sqrt(2))
    x = from_bits((static_cast<uint64_t>(static_cast<uint32_t>(hx | (i ^ 0x3ff00000))) << 32) |
                  (bits & 0xffffffffULL));
    k += i >> 20;
    const double f = x - 1.0;
    const double dk = k;
    if ((0x000fffff & (2 + hx)) < 3) {  // |f| < 2^-20
        if (f == 0.0) return k == 0 ? 0.0 : mul(dk, kLn2Hi) + mul(dk, kLn2Lo);
        const double r = mul(mul(f, f), 0.5 - mul(0.33333333333333333, f));
        return k == 0 ? f - r : mul(dk, kLn2Hi) - ((r - mul(dk, kLn2Lo)) - f);
    }
    const double s = f / (2.0 + f);
    const double z = mul(s, s);
    const double w = mul(z, z);
    const double t1 = mul(w, kLg2 + mul(w, kLg4 + mul(w, kLg6)));
    const double t2 = mul(z, kLg1 + mul(w, kLg3 + mul(w, kLg5 + mul(w, kLg7))));
    const double r = t2 + t1;
    if (((hx - 0x6147a) | (0x6b851 - hx)) > 0) {
        const double hfsq = mul(mul(0.5, f), f);
        if (k == 0) return f - (hfsq - mul(s, hfsq + r));
        return mul(dk, kLn2Hi) - ((hfsq - (mul(s, hfsq + r) + mul(dk, kLn2Lo))) - f);
    }
    if (k == 0) return f - mul(s, f - r);
    return mul(dk, kLn2Hi) - ((mul(s, f - r) - mul(dk, kLn2Lo)) - f);
}

/// sin(x + y) for |x| <= pi/4, y a tail below x's ulp (fdlibm k_sin.c).
TAPEFLOW_HD inline double sin_kernel(double x, double y) {
    constexpr double kS1 = -1.66666666666666324348e-01, kS2 = 8.33333333332248946124e-03;
    constexpr double kS3 = -1.98412698298579493134e-04, kS4 = 2.75573137070700676789e-06;
    constexpr double kS5 = -2.50507602534068634195e-08, kS6 = 1.58969099521155010221e-10;
    const double z = mul(x, x);
    const double v = mul(z, x);
    const double r = kS2 + mul(z, kS3 + mul(z, kS4 + mul(z, kS5 + mul(z, kS6))));
    return x - ((mul(z, mul(0.5, y) - mul(v, r)) - y) - mul(v, kS1));
}

/// cos(x + y) for |x| <= pi/4 (FreeBSD k_cos.c).
TAPEFLOW_HD inline double cos_kernel(double x, double y) {
    constexpr double kC1 = 4.16666666666666019037e-02, kC2 = -1.38888888888741095749e-03;
    constexpr double kC3 = 2.48015872894767294178e-05, kC4 = -2.75573143513906633035e-07;
    constexpr double kC5 = 2.08757232129817482790e-09, kC6 = -1.13596475577881948265e-11;
    const double z = mul(x, x);
    const double w = mul(z, z);
    const double r =
        mul(z, kC1 + mul(z, kC2 + mul(z, kC3))) + mul(mul(w, w), kC4 + mul(z, kC5 + mul(z, kC6)));
    const double hz = mul(0.5, z);
    const double one_minus_hz = 1.0 - hz;
    return one_minus_hz + (((1.0 - one_minus_hz) - hz) + (mul(z, r) - mul(x, y)));
}

/// The rounding error of a * b (Dekker's product with Veltkamp's split; exact without fma).
TAPEFLOW_HD inline double product_error(double a, double b, double product) {
    constexpr double kSplit = 134217729.0;  // 2^27 + 1
    const double ca = mul(kSplit, a), cb = mul(kSplit, b);
    const double a_hi = ca - (ca - a), b_hi = cb - (cb - b);
    const double a_lo = a - a_hi, b_lo = b - b_hi;
    return ((mul(a_hi, b_hi) - product) + mul(a_hi, b_lo) + mul(a_lo, b_hi)) + mul(a_lo, b_lo);
}

/// sin(x) and cos(x) for x in [0, 8] (Box-Muller passes 2 pi u, u in [0, 1)): x - n pi/2 as a
/// double plus tail (n pi/2 split exactly with product_error), then the fdlibm kernels.
TAPEFLOW_HD inline void sincos_radians(double x, double& sin_out, double& cos_out) {
    constexpr double kPiOver2 = 1.57079632679489655800e+00;  // 0x3FF921FB54442D18
    constexpr double kPiOver2Lo = 6.123233995736766e-17;     // pi/2 - kPiOver2
    const double n = ::floor(mul(x, 0.63661977236758138243) + 0.5);
    const double p = mul(n, kPiOver2);
    const double d = x - p;  // exact: x lies within pi/4 of p (Sterbenz), or n = 0
    const double tail = product_error(n, kPiOver2, p) + mul(n, kPiOver2Lo);
    const double hi = d - tail;
    const double lo = (d - hi) - tail;
    const double s = sin_kernel(hi, lo), c = cos_kernel(hi, lo);
    switch (static_cast<int64_t>(n) & 3) {
        case 0:
            sin_out = s;
            cos_out = c;
            break;
        case 1:
            sin_out = c;
            cos_out = -s;
            break;
        case 2:
            sin_out = -s;
            cos_out = -c;
            break;
        default:
            sin_out = -c;
            cos_out = s;
            break;
    }
}

}  // namespace tapeflow::exact
