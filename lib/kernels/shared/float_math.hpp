// logf and sincosf for TensorFlow's float Box-Muller transform, giving the bits that glibc's logf
// and sincosf give (TensorFlow's CPU kernel calls those), on the host and on a CUDA device alike.
//
// glibc (2.28 and later; the algorithms come from Arm's optimized-routines, MIT licensed) computes
// both in double from small tables and short polynomials, then rounds once to float. Its results
// are not correctly rounded (about 0.7% of logf and 1.3% of sinf/cosf arguments of Box-Muller round
// the other way), so a correctly rounded function would not reproduce TensorFlow. The tables and
// coefficients below are glibc's; the evaluation order is the same, each product rounded on its
// own. tests/core/test_float_math.cpp checks every argument Box-Muller can produce (2^23 of each)
// against the C library, and glibc's fused (FMA) and unfused builds give the same floats on all of
// them.
//
// Domains: logf_tf takes normal positive floats (Box-Muller passes [1e-7, 1)); sincosf_tf takes
// |x| < 120 (Box-Muller passes [0, 2 pi)).
#pragma once

#include <cstdint>
#include <cstring>

#include "core/hd.hpp"
#include "kernels/shared/exact_math.hpp"

namespace tapeflow::exact {

TAPEFLOW_HD inline uint32_t float_bits(float x) {
#if defined(__CUDA_ARCH__)
    return static_cast<uint32_t>(__float_as_uint(x));
#else
    uint32_t bits = 0;
    std::memcpy(&bits, &x, sizeof bits);
    return bits;
#endif
}

TAPEFLOW_HD inline float float_from_bits(uint32_t bits) {
#if defined(__CUDA_ARCH__)
    return __uint_as_float(bits);
#else
    float x = 0;
    std::memcpy(&x, &bits, sizeof x);
    return x;
#endif
}

/// Natural logarithm of a normal positive float: log(x) = k ln2 + log(c) + log1p(z / c - 1), with
/// x = 2^k z, c the center of z's sixteenth of [0.7, 1.4) (glibc's logf).
TAPEFLOW_HD inline float logf_tf(float x) {
    // 1/c and log(c) per subinterval, then the log1p polynomial and ln 2 (glibc's __logf_data)
    constexpr double kInvC[16] = {0x1.661ec79f8f3bep+0,
                                  0x1.571ed4aaf883dp+0,
                                  0x1.49539f0f010bp+0,
                                  0x1.3c995b0b80385p+0,
                                  0x1.30d190c8864a5p+0,
                                  0x1.25e227b0b8eap+0,
                                  0x1.1bb4a4a1a343fp+0,
                                  0x1.12358f08ae5bap+0,
                                  0x1.0953f419900a7p+0,
                                  0x1p+0,
                                  0x1.e608cfd9a47acp-1,
                                  0x1.ca4b31f026aap-1,
                                  0x1.b2036576afce6p-1,
                                  0x1.9c2d163a1aa2dp-1,
                                  0x1.886e6037841edp-1,
                                  0x1.767dcf5534862p-1};
    constexpr double kLogC[16] = {-0x1.57bf7808caadep-2,
                                  -0x1.2bef0a7c06ddbp-2,
                                  -0x1.01eae7f513a67p-2,
                                  -0x1.b31d8a68224e9p-3,
                                  -0x1.6574f0ac07758p-3,
                                  -0x1.1aa2bc79c81p-3,
                                  -0x1.a4e76ce8c0e5ep-4,
                                  -0x1.1973c5a611cccp-4,
                                  -0x1.252f438e10c1ep-5,
                                  0x0p+0,
                                  0x1.aa5aa5df25984p-5,
                                  0x1.c5e53aa362eb4p-4,
                                  0x1.526e57720db08p-3,
                                  0x1.bc2860d22477p-3,
                                  0x1.1058bc8a07ee1p-2,
                                  0x1.4043057b6ee09p-2};
    constexpr double kA0 = -0x1.00ea348b88334p-2, kA1 = 0x1.5575b0be00b6ap-2;
    constexpr double kA2 = -0x1.ffffef20a4123p-2, kLn2 = 0x1.62e42fefa39efp-1;
    const uint32_t ix = float_bits(x);
    if (ix == 0x3f800000U) return 0.0f;
    const uint32_t tmp = ix - 0x3f330000U;  // subinterval index and exponent relative to 0.7
    const int i = static_cast<int>((tmp >> 19) % 16);
    const int k = static_cast<int32_t>(tmp) >> 23;
    const double z = float_from_bits(ix - (tmp & 0xff800000U));
    const double r = mul(z, kInvC[i]) - 1.0;
    const double y0 = kLogC[i] + mul(static_cast<double>(k), kLn2);
    const double r2 = mul(r, r);
    double y = mul(kA1, r) + kA2;
    y = mul(kA0, r2) + y;
    y = mul(y, r2) + (y0 + r);
    return static_cast<float>(y);
}

namespace detail {

// glibc's sine and cosine polynomials on [-pi/4, pi/4]; `negate_cos` is its second table, which
// computes -cos for the quadrants where cosine is negative.
TAPEFLOW_HD inline void sincosf_poly(
    double x, double x2, bool negate_cos, int n, float& sin_out, float& cos_out) {
    constexpr double kC1 = -0x1.ffffffd0c621cp-2, kC2 = 0x1.55553e1068f19p-5;
    constexpr double kC3 = -0x1.6c087e89a359dp-10, kC4 = 0x1.99343027bf8c3p-16;
    constexpr double kS1 = -0x1.555545995a603p-3, kS2 = 0x1.1107605230bc4p-7;
    constexpr double kS3 = -0x1.994eb3774cf24p-13;
    const double sign = negate_cos ? -1.0 : 1.0;  // flips c0..c4
    const double x4 = mul(x2, x2);
    const double x3 = mul(x2, x);
    const double c2 = sign * kC3 + mul(x2, sign * kC4);
    const double s1 = kS2 + mul(x2, kS3);
    const double c1 = sign + mul(x2, sign * kC1);
    const double x5 = mul(x3, x2);
    const double x6 = mul(x4, x2);
    const double s = x + mul(x3, kS1);
    const double c = c1 + mul(x4, sign * kC2);
    const auto sin_part = static_cast<float>(s + mul(x5, s1));
    const auto cos_part = static_cast<float>(c + mul(x6, c2));
    // odd quadrants swap the two polynomials
    sin_out = (n & 1) != 0 ? cos_part : sin_part;
    cos_out = (n & 1) != 0 ? sin_part : cos_part;
}

}  // namespace detail

/// sin(y) and cos(y) for |y| < 120 (glibc's sincosf: one multiply-subtract range reduction by
/// pi/2, the quadrant taken from the top bits of y * 2/pi * 2^24).
TAPEFLOW_HD inline void sincosf_tf(float y, float& sin_out, float& cos_out) {
    const uint32_t top = (float_bits(y) >> 20) & 0x7ff;        // exponent and 3 bits, sign dropped
    constexpr uint32_t kTopPiOver4 = 0x3f4, kTopTiny = 0x398;  // of pi/4 and 2^-12
    double x = y;
    if (top < kTopPiOver4) {
        if (top < kTopTiny) {
            sin_out = y;
            cos_out = 1.0f;
            return;
        }
        detail::sincosf_poly(x, mul(x, x), false, 0, sin_out, cos_out);
        return;
    }
    const double r = mul(x, 0x1.45F306DC9C883p+23);  // 2/pi scaled so the quadrant is in bit 24
    const int n = (static_cast<int32_t>(r) + 0x800000) >> 24;
    x = x - mul(static_cast<double>(n), 0x1.921FB54442D18p0);
    const double s = (n & 3) == 1 || (n & 3) == 2 ? -1.0 : 1.0;
    detail::sincosf_poly(mul(x, s), mul(x, x), (n & 2) != 0, n, sin_out, cos_out);
}

}  // namespace tapeflow::exact
