// exact::log and exact::sincos_radians (lib/kernels/shared/exact_math.hpp), the double-precision
// math of the random generators that must give the same bits on CPU and GPU: error against long
// double references and against std:: over random and edge arguments, and the special values of
// log.
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include <catch2/catch.hpp>

#include "kernels/shared/distributions.hpp"
#include "kernels/shared/exact_math.hpp"

namespace exact = tapeflow::exact;
namespace philox = tapeflow::philox;

namespace {

// |value - reference| in units of the last place of the double nearest the reference.
double ulp_error(double value, long double reference) {
    const auto nearest = static_cast<double>(reference);
    if (nearest == 0.0) return value == 0.0 ? 0.0 : std::numeric_limits<double>::infinity();
    const double ulp = std::nextafter(std::fabs(nearest), INFINITY) - std::fabs(nearest);
    return static_cast<double>(std::fabs(static_cast<long double>(value) - reference) / ulp);
}

double ulps_between(double a, double b) {
    return std::fabs(a - b) / (std::nextafter(std::fabs(b), INFINITY) - std::fabs(b));
}

// Uniform doubles of the generators (multiples of 2^-53 in [0, 1)) plus edge values.
std::vector<double> unit_samples() {
    std::mt19937_64 bits(42);
    std::vector<double> u;
    for (int i = 0; i < 200000; ++i) {
        u.push_back(static_cast<double>(bits() >> 11) * 0x1p-53);
    }
    for (double edge :
         {0.0, 0x1p-53, 0x1p-40, 1e-10, 0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 1.0 / 3}) {
        for (int k = -3; k <= 3; ++k) {
            const double v = edge + k * 0x1p-53;
            if (v >= 0 && v < 1) u.push_back(v);
        }
    }
    for (int k = 1; k <= 8; ++k)
        u.push_back(1.0 - k * 0x1p-53);  // 2 pi u just below 2 pi
    return u;
}

}  // namespace

TEST_CASE("exact::log is within 1 ulp of the true logarithm and of std::log",
          "[random][exact_math]") {
    std::vector<double> xs;
    for (double u : unit_samples())
        xs.push_back(1.0 - u);  // what Box-Muller takes the log of
    std::mt19937_64 bits(7);
    for (int i = 0; i < 100000; ++i) {  // positive finite doubles of every exponent
        const double x = std::ldexp(1.0 + static_cast<double>(bits() >> 12) * 0x1p-52,
                                    static_cast<int>(bits() % 2098) - 1074);
        if (x > 0 && std::isfinite(x)) xs.push_back(x);
    }
    for (double x : {1.0,
                     2.0,
                     0.5,
                     4.0,
                     M_E,
                     M_SQRT2,
                     M_SQRT1_2,
                     1 + 0x1p-52,
                     1 + 0x1p-21,
                     1 - 0x1p-21,
                     1 + 0x1p-19,
                     0x1p-1074,
                     0x1p-1022,
                     3e-310,
                     1e300,
                     std::numeric_limits<double>::max()}) {
        xs.push_back(x);
    }
    double worst = 0, worst_vs_std = 0;
    for (double x : xs) {
        const double y = exact::log(x);
        worst = std::max(worst, ulp_error(y, std::log(static_cast<long double>(x))));
        if (std::log(x) != 0)
            worst_vs_std = std::max(worst_vs_std, ulps_between(y, std::log(x)));
        else
            CHECK(y == 0.0);
    }
    INFO("max error " << worst << " ulp, max distance to std::log " << worst_vs_std << " ulp");
    CHECK(worst < 1.0);
    CHECK(worst_vs_std <= 1.0);
    CHECK(exact::log(1.0) == 0.0);
    CHECK(exact::log(0.0) == -INFINITY);
    CHECK(std::isnan(exact::log(-1.0)));
    CHECK(std::isnan(exact::log(NAN)));
    CHECK(exact::log(INFINITY) == INFINITY);
}

TEST_CASE("exact::sincos_radians is within 1 ulp of sin and cos", "[random][exact_math]") {
    double worst = 0, worst_vs_std = 0;
    for (double u : unit_samples()) {
        const double x = 2 * M_PI * u;  // the angles of Box-Muller
        double s = 0, c = 0;
        exact::sincos_radians(x, s, c);
        const long double xl = x;
        if (x != 0)
            worst = std::max({worst, ulp_error(s, std::sin(xl)), ulp_error(c, std::cos(xl))});
        worst_vs_std =
            std::max({worst_vs_std, ulps_between(s, std::sin(x)), ulps_between(c, std::cos(x))});
    }
    INFO("max error " << worst << " ulp, max difference to std::sin/cos " << worst_vs_std
                      << " ulp");
    CHECK(worst < 1.0);
    CHECK(worst_vs_std <= 1.0);
    double s = 1, c = 0;
    exact::sincos_radians(0.0, s, c);
    CHECK((s == 0.0 && c == 1.0));
}

TEST_CASE("the affine step rounds the product on its own (no fma)", "[random][exact_math]") {
    // 0.1 * 3 rounds up by 2^-56; an fma would keep that and make 1 + 0.1 * 3 - 1.3 differ
    volatile double b = 0.1, x = 3.0, a = 1.0;
    const double product = b * x;  // stored: rounded
    volatile double rounded = product;
    CHECK(philox::affine(philox::Format::f64, x, b, a) == a + rounded);
    volatile float bf = 0.1f, xf = 3.0f, af = 1.0f;
    volatile float rounded_f = bf * xf;
    CHECK(philox::affine(philox::Format::f32, xf, bf, af) == af + rounded_f);
}
