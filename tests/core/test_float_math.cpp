// exact::logf_tf and exact::sincosf_tf (lib/kernels/shared/float_math.hpp) against the C library on
// every argument TensorFlow's float Box-Muller can pass them: u1 = max(m * 2^-23, 1e-7) and v1 =
// float(2 pi m * 2^-23) for all 2^23 mantissas m. TensorFlow's CPU kernel calls glibc's logf and
// sincosf, so on glibc the two must agree on every one of them.
#include <cmath>
#include <cstdint>

#include <catch2/catch.hpp>
#include <math.h>

#include "kernels/shared/distributions.hpp"

namespace exact = tapeflow::exact;
namespace philox = tapeflow::philox;

TEST_CASE("logf_tf and sincosf_tf give the C library's floats on Box-Muller's arguments",
          "[random][exact_math]") {
#if !defined(__GLIBC__)
    SKIP("the reference is glibc's logf and sincosf");
#endif
    int64_t log_mismatches = 0, sin_mismatches = 0, cos_mismatches = 0;
    for (uint32_t m = 0; m < (1U << 23); ++m) {
        float u1 = philox::uint32_to_float(m);
        if (u1 < 1.0e-7f) u1 = 1.0e-7f;
        if (exact::logf_tf(u1) != std::log(u1)) ++log_mismatches;
        const auto v1 =
            static_cast<float>(2 * M_PI * static_cast<double>(philox::uint32_to_float(m)));
        float s = 0, c = 0;
        exact::sincosf_tf(v1, s, c);
        float libc_s = 0, libc_c = 0;
        ::sincosf(v1, &libc_s, &libc_c);  // what TensorFlow calls on Linux
        if (s != libc_s) ++sin_mismatches;
        if (c != libc_c) ++cos_mismatches;
    }
    CHECK(log_mismatches == 0);
    CHECK(sin_mismatches == 0);
    CHECK(cos_mismatches == 0);
}

TEST_CASE("logf_tf and sincosf_tf at exact points", "[random][exact_math]") {
    CHECK(exact::logf_tf(1.0f) == 0.0f);
    CHECK(exact::logf_tf(0.5f) == -0.6931472f);
    float s = 1, c = 0;
    exact::sincosf_tf(0.0f, s, c);
    CHECK((s == 0.0f && c == 1.0f));
    exact::sincosf_tf(0x1p-13f, s, c);  // tiny: sin x = x, cos x = 1
    CHECK((s == 0x1p-13f && c == 1.0f));
    exact::sincosf_tf(3.14159274f, s, c);  // float(pi): sin is pi's rounding error
    CHECK(s == Approx(-8.742278e-8f).epsilon(1e-6));
    CHECK(c == -1.0f);
}
