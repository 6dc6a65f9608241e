#include "distributions/special_math.hpp"

#include <cmath>
#include <limits>
#include <numbers>

namespace tapeflow::distributions::special_math {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kEps = std::numeric_limits<double>::epsilon();
constexpr int kMaxIterations = 100000;

// A forward-mode dual number v + d*eps: igamma's series and continued fraction run on it once,
// giving P(a, x) and dP/da together (the derivative of every step in `a`).
struct Dual {
    double v;
    double d;
};
Dual operator+(Dual a, Dual b) {
    return {a.v + b.v, a.d + b.d};
}
Dual operator+(Dual a, double b) {
    return {a.v + b, a.d};
}
Dual operator-(Dual a, Dual b) {
    return {a.v - b.v, a.d - b.d};
}
Dual operator-(Dual a, double b) {
    return {a.v - b, a.d};
}
Dual operator-(double a, Dual b) {
    return {a - b.v, -b.d};
}
Dual operator*(Dual a, Dual b) {
    return {a.v * b.v, a.d * b.v + a.v * b.d};
}
Dual operator*(Dual a, double b) {
    return {a.v * b, a.d * b};
}
Dual operator/(Dual a, Dual b) {
    return {a.v / b.v, (a.d * b.v - a.v * b.d) / (b.v * b.v)};
}
Dual operator/(double a, Dual b) {
    return {a / b.v, -a * b.d / (b.v * b.v)};
}
Dual exp(Dual a) {
    const double e = std::exp(a.v);
    return {e, e * a.d};
}
Dual lgamma_of(Dual a) {
    return {log_gamma(a.v), digamma(a.v) * a.d};
}
double lgamma_of(double a) {
    return log_gamma(a);
}
double value(double a) {
    return a;
}
double value(Dual a) {
    return a.v;
}
double derivative(double) {
    return 0;
}
double derivative(Dual a) {
    return a.d;
}
using std::exp;

// P(a, x) by its power series, for x < a + 1:
// P = x^a e^-x / Gamma(a + 1) * sum_n x^n / ((a + 1) ... (a + n)).
template <class T>
T igamma_series(T a, double x) {
    T term = a * 0.0 + 1.0;
    T sum = term;
    T ap = a;
    for (int n = 1; n < kMaxIterations; ++n) {
        ap = ap + 1.0;
        term = term * (x / ap);
        sum = sum + term;
        if (std::abs(value(term)) <= std::abs(value(sum)) * kEps &&
            std::abs(derivative(term)) <= std::abs(derivative(sum)) * kEps + 1e-300)
            break;
    }
    return exp(a * std::log(x) + (-x) - lgamma_of(a + 1.0)) * sum;
}

// Q(a, x) by Legendre's continued fraction (modified Lentz), for x >= a + 1.
template <class T>
T igammac_fraction(T a, double x) {
    constexpr double kTiny = 1e-300;
    T b = (x + 1.0) - a;
    T c = a * 0.0 + 1.0 / kTiny;
    T d = 1.0 / b;
    T h = d;
    for (int i = 1; i < kMaxIterations; ++i) {
        const T an = (a - static_cast<double>(i)) * static_cast<double>(i);  // -i (i - a)
        b = b + 2.0;
        d = an * d + b;
        if (std::abs(value(d)) < kTiny) d = T(d) * 0.0 + kTiny;
        c = b + an / c;
        if (std::abs(value(c)) < kTiny) c = T(c) * 0.0 + kTiny;
        d = 1.0 / d;
        const T delta = d * c;
        h = h * delta;
        if (std::abs(value(delta) - 1.0) <= kEps && std::abs(derivative(delta)) <= kEps) break;
    }
    return exp(a * std::log(x) + (-x) - lgamma_of(a)) * h;
}

// P (lower = true) or Q of (a, x), a and x already valid and x > 0 finite.
template <class T>
T incomplete_gamma(T a, double x, bool lower) {
    if (x < value(a) + 1.0) {
        const T p = igamma_series(a, x);
        return lower ? p : 1.0 - p;
    }
    const T q = igammac_fraction(a, x);
    return lower ? 1.0 - q : q;
}

bool gamma_domain_ok(double a, double x) {
    return !(std::isnan(a) || std::isnan(x) || a <= 0 || x < 0);
}

// The Bernoulli numbers B_2k, k = 1..12, for the Euler-Maclaurin tail of the Hurwitz zeta.
constexpr double kBernoulli2k[] = {1.0 / 6,
                                   -1.0 / 30,
                                   1.0 / 42,
                                   -1.0 / 30,
                                   5.0 / 66,
                                   -691.0 / 2730,
                                   7.0 / 6,
                                   -3617.0 / 510,
                                   43867.0 / 798,
                                   -174611.0 / 330,
                                   854513.0 / 138,
                                   -236364091.0 / 2730};

// Hurwitz zeta(s, q) = sum_k (q + k)^-s for an integer s >= 2: the first terms directly until
// q + k >= 10 + s, then the Euler-Maclaurin formula.
double hurwitz_zeta(int s, double q) {
    if (q <= 0 && q == std::floor(q)) return kInf;
    double sum = 0;
    double a = q;
    while (a < 10.0 + s) {
        sum += std::pow(a, -s);
        a += 1;
    }
    sum += std::pow(a, 1.0 - s) / (s - 1) + 0.5 * std::pow(a, -s);
    // sum_k B_2k / (2k)! * s (s + 1) ... (s + 2k - 2) * a^(-s - 2k + 1)
    double factor = s * std::pow(a, -s - 1.0);  // s (s+1)..(s+2k-2) a^(-s-2k+1) / (2k)!, k = 1 / 2!
    factor /= 2;
    for (int k = 1; k <= 12; ++k) {
        const double term = kBernoulli2k[k - 1] * factor;
        sum += term;
        if (std::abs(term) <= std::abs(sum) * kEps) break;
        // next k: times (s + 2k - 1)(s + 2k) / ((2k + 1)(2k + 2) a^2)
        factor *= (s + 2.0 * k - 1) * (s + 2.0 * k) / ((2.0 * k + 1) * (2.0 * k + 2) * a * a);
    }
    return sum;
}

}  // namespace

double log_gamma(double x) {
    // lgamma_r: std::lgamma also writes the global signgam, a data race between threads.
    int sign = 0;
    return ::lgamma_r(x, &sign);
}

double digamma(double x) {
    if (std::isnan(x) || x == -kInf) return kNaN;
    if (x == kInf) return kInf;
    if (x <= 0) {
        if (x == std::floor(x)) return kNaN;
        // Reflection: psi(1 - x) - psi(x) = pi cot(pi x).
        return digamma(1 - x) - std::numbers::pi / std::tan(std::numbers::pi * x);
    }
    double result = 0;
    while (x < 10) {
        result -= 1 / x;
        x += 1;
    }
    // Asymptotic series: ln x - 1/(2x) - sum B_2k / (2k x^2k).
    const double f = 1 / (x * x);
    const double tail =
        f * (1.0 / 12 - f * (1.0 / 120 - f * (1.0 / 252 - f * (1.0 / 240 - f * (1.0 / 132)))));
    return result + std::log(x) - 0.5 / x - tail;
}

double polygamma(int n, double x) {
    if (n < 0) return kNaN;
    if (n == 0) return digamma(x);
    if (std::isnan(x)) return kNaN;
    // psi^(n)(x) = (-1)^(n+1) n! zeta(n + 1, x)
    const double sign = (n % 2 == 1) ? 1.0 : -1.0;
    const double zeta = hurwitz_zeta(n + 1, x);
    if (std::isinf(zeta)) return n % 2 == 1 ? kInf : kNaN;
    return sign * std::exp(log_gamma(n + 1.0)) * zeta;
}

double igamma(double a, double x) {
    if (!gamma_domain_ok(a, x)) return kNaN;
    if (x == 0) return 0;
    if (std::isinf(x)) return 1;
    return incomplete_gamma(a, x, true);
}

double igammac(double a, double x) {
    if (!gamma_domain_ok(a, x)) return kNaN;
    if (x == 0) return 1;
    if (std::isinf(x)) return 0;
    return incomplete_gamma(a, x, false);
}

double igamma_grad_a(double a, double x) {
    if (!gamma_domain_ok(a, x)) return kNaN;
    if (x == 0 || std::isinf(x)) return 0;
    return incomplete_gamma(Dual{a, 1}, x, true).d;
}

double random_gamma_grad(double a, double x) {
    if (!gamma_domain_ok(a, x)) return kNaN;
    if (x == 0 || std::isinf(x)) return 0;
    const double log_pdf = (a - 1) * std::log(x) - x - log_gamma(a);
    return -igamma_grad_a(a, x) / std::exp(log_pdf);
}

double gamma_quantile(double a, double u) {
    if (std::isnan(a) || std::isnan(u) || a <= 0 || u < 0 || u > 1) return kNaN;
    if (u == 0) return 0;
    if (u == 1) return kInf;
    // Solve f(t) = 0 in t = log x, f increasing: P(a, e^t) - u, or (1 - u) - Q(a, e^t) in the
    // upper half where Q keeps the digits. f'(t) = x^a e^-x / Gamma(a).
    const bool upper = u > 0.5;
    const double target = upper ? 1 - u : u;
    const double lgamma_a = log_gamma(a);
    auto f = [&](double t) {
        const double x = std::exp(t);
        return upper ? target - igammac(a, x) : igamma(a, x) - target;
    };
    double lo = std::log(std::numeric_limits<double>::denorm_min());
    if (f(lo) >= 0) return std::exp(lo);
    double hi = std::max(1.0, std::log(a) + 1);
    while (f(hi) < 0) {
        lo = hi;
        hi += 1;
        if (hi > 709) return kInf;
    }
    // Start: the small-x form P ~ x^a / Gamma(a + 1) for a < 1, the mean otherwise.
    double t = a < 1 ? (std::log(u) + log_gamma(a + 1)) / a : std::log(a);
    if (!(t > lo && t < hi)) t = 0.5 * (lo + hi);
    for (int i = 0; i < 400; ++i) {
        const double ft = f(t);
        if (ft == 0) return std::exp(t);
        if (ft < 0)
            lo = t;
        else
            hi = t;
        const double slope = std::exp(a * t - std::exp(t) - lgamma_a);
        double next = t - ft / slope;
        if (!(next > lo && next < hi) || !std::isfinite(next)) next = 0.5 * (lo + hi);
        if (std::abs(next - t) <= 1e-14 * (1 + std::abs(t)) || hi - lo <= 1e-14 * (1 + std::abs(t)))
            return std::exp(next);
        t = next;
    }
    return std::exp(t);
}

namespace {

// The continued fraction of I_x(a, b) (modified Lentz), for x < (a + 1) / (a + b + 2).
double betainc_fraction(double a, double b, double x) {
    constexpr double kTiny = 1e-300;
    const double qab = a + b;
    const double qap = a + 1;
    const double qam = a - 1;
    double c = 1;
    double d = 1 - qab * x / qap;
    if (std::abs(d) < kTiny) d = kTiny;
    d = 1 / d;
    double h = d;
    for (int m = 1; m < kMaxIterations; ++m) {
        const double m2 = 2.0 * m;
        double aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1 + aa * d;
        if (std::abs(d) < kTiny) d = kTiny;
        c = 1 + aa / c;
        if (std::abs(c) < kTiny) c = kTiny;
        d = 1 / d;
        h *= d * c;
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1 + aa * d;
        if (std::abs(d) < kTiny) d = kTiny;
        c = 1 + aa / c;
        if (std::abs(c) < kTiny) c = kTiny;
        d = 1 / d;
        const double delta = d * c;
        h *= delta;
        if (std::abs(delta - 1) <= kEps) break;
    }
    const double log_front =
        a * std::log(x) + b * std::log1p(-x) - (log_gamma(a) + log_gamma(b) - log_gamma(a + b));
    return std::exp(log_front) * h / a;
}

}  // namespace

double betainc(double a, double b, double x) {
    if (std::isnan(a) || std::isnan(b) || std::isnan(x) || a <= 0 || b <= 0 || x < 0 || x > 1)
        return kNaN;
    if (x == 0) return 0;
    if (x == 1) return 1;
    if (x < (a + 1) / (a + b + 2)) return betainc_fraction(a, b, x);
    return 1 - betainc_fraction(b, a, 1 - x);
}

double poisson_quantile(double rate, double u) {
    if (std::isnan(rate) || std::isnan(u) || rate < 0) return kNaN;
    if (rate == 0) return 0;
    if (std::isinf(rate)) return kInf;
    // Walk from k0 (0 for small rates, floor(rate) otherwise) with the pmf recurrence
    // p(k) = p(k - 1) rate / k; CDF(k0) = Q(k0 + 1, rate).
    double k = rate < 30 ? 0 : std::floor(rate);
    double pmf = std::exp(k * std::log(rate) - rate - log_gamma(k + 1));
    double cdf = k == 0 ? pmf : igammac(k + 1, rate);
    if (u <= cdf) {
        // Down while CDF(k - 1) = cdf - pmf still reaches u.
        while (k > 0 && u <= cdf - pmf) {
            cdf -= pmf;
            pmf *= k / rate;
            k -= 1;
        }
        return k;
    }
    for (int i = 0; i < 100 * kMaxIterations && u > cdf; ++i) {
        k += 1;
        pmf *= rate / k;
        cdf += pmf;
        if (pmf == 0 && cdf < u) break;  // the remaining mass is below double's resolution
    }
    return k;
}

}  // namespace tapeflow::distributions::special_math
