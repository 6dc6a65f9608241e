// tf::distributions against closed forms. Expected numbers were computed with Debian's Python 3
// (math.lgamma, math.erf and the closed forms in the comments); gradients are checked against
// float64 central differences, samples by their moments within fixed-seed statistical bounds, KL
// divergences against Monte-Carlo estimates.
#include <cmath>
#include <functional>
#include <numbers>
#include <vector>

#include <catch2/catch.hpp>

#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;
namespace tfd = tapeflow::distributions;
using Catch::Matchers::Contains;

namespace {

constexpr double kEulerGamma = 0.5772156649015329;

tf::Tensor f64(std::vector<double> v) {
    const auto n = static_cast<int64_t>(v.size());
    return tf::constant(v, tf::Shape{n});
}
tf::Tensor f64(double v) {
    return tf::constant(v);
}
double item(const tf::Tensor& t) {
    return t.cast(tf::float64).item<double>();
}
std::vector<double> values(const tf::Tensor& t) {
    return t.to_vector<double>();
}

// d f / d p at p (scalar float64) by the tape and by central differences.
void check_gradient(const std::function<tf::Tensor(const tf::Tensor&)>& f,
                    double p,
                    double tol = 1e-6) {
    tf::Tensor x = f64(p);
    double analytic = 0;
    {
        tf::GradientTape tape;
        tape.watch(x);
        const tf::Tensor y = tf::reduce_sum(f(x));
        analytic = item(tape.gradient(y, x));
    }
    const double h = 1e-6 * std::max(1.0, std::abs(p));
    const double numeric =
        (item(tf::reduce_sum(f(f64(p + h)))) - item(tf::reduce_sum(f(f64(p - h))))) / (2 * h);
    INFO("p = " << p << ", analytic " << analytic << ", numeric " << numeric);
    CHECK(analytic == Approx(numeric).epsilon(tol).margin(tol));
}

double sample_mean(const std::vector<double>& v) {
    double s = 0;
    for (double x : v)
        s += x;
    return s / static_cast<double>(v.size());
}
double sample_variance(const std::vector<double>& v) {
    const double m = sample_mean(v);
    double s = 0;
    for (double x : v)
        s += (x - m) * (x - m);
    return s / static_cast<double>(v.size() - 1);
}

}  // namespace

TEST_CASE("Normal: values, shapes and broadcasting", "[distributions]") {
    const tfd::Normal n(0.5, 2.0);
    CHECK(n.dtype() == tf::float32);
    CHECK(n.batch_shape() == tf::Shape{});
    // z = 0.5: -z^2/2 - log 2 - log(2 pi)/2; 0.5 (1 + erf(z / sqrt 2)); log(2 pi e)/2 + log 2
    CHECK(item(n.log_prob(tf::constant(1.5f))) == Approx(-1.737085713764618).epsilon(1e-6));
    CHECK(item(n.cdf(tf::constant(1.5f))) == Approx(0.6914624612740131).epsilon(1e-6));
    CHECK(item(n.entropy()) == Approx(2.112085713764618).epsilon(1e-6));
    CHECK(item(n.prob(tf::constant(1.5f))) == Approx(std::exp(-1.737085713764618)).epsilon(1e-6));

    const tfd::Normal batch(f64({0, 1, 2}), f64(1.0));
    CHECK(batch.batch_shape() == tf::Shape{3});
    CHECK(batch.dtype() == tf::float64);
    CHECK(batch.sample(4, 1).shape() == tf::Shape{4, 3});
    CHECK(batch.sample(tf::Shape{2, 5}, 1).shape() == tf::Shape{2, 5, 3});
    CHECK(batch.sample({}, 1).shape() == tf::Shape{3});  // sample_shape (), not n = 0
    CHECK(batch.sample().shape() == tf::Shape{3});
    CHECK(batch.stddev().shape() == tf::Shape{3});
    CHECK(batch.log_prob(tf::zeros({7, 1}, tf::float64)).shape() == tf::Shape{7, 3});
    CHECK_THROWS_AS(tfd::Normal(f64({0, 1, 2}), f64({1, 2})), tf::errors::InvalidArgumentError);
}

TEST_CASE("Gamma family: log_prob, cdf, entropy and statistics", "[distributions]") {
    const tfd::Gamma g(f64(2.5), f64(1.5));
    // (a-1) log x - r x - lgamma(a) + a log r
    CHECK(item(g.log_prob(f64(0.8))) == Approx(-0.8057354271738233).epsilon(1e-12));
    // psi(2.5) = -gamma - 2 log 2 + 2 + 2/3; a - log r + lgamma(a) + (1 - a) psi(a)
    CHECK(item(g.entropy()) == Approx(1.3244828013968903).epsilon(1e-12));
    CHECK(item(g.mean()) == Approx(2.5 / 1.5));
    CHECK(item(g.variance()) == Approx(2.5 / 2.25));
    CHECK(item(g.mode()) == Approx(1.5 / 1.5));
    // P(0.5, x) = erf(sqrt x); P(2, x) = 1 - e^-x (1 + x)
    CHECK(item(tfd::Gamma(0.5, 1.0).cdf(tf::constant(2.0f))) ==
          Approx(0.9544997361036416).epsilon(1e-6));
    CHECK(item(tfd::Gamma(f64(2.0), f64(3.0)).cdf(f64(0.5))) ==
          Approx(0.44217459962892547).epsilon(1e-12));
    CHECK(item(tfd::Gamma(f64(2.0), f64(3.0)).cdf(f64(-1.0))) == 0);
    // Mode undefined below concentration 1: NaN, or an error without allow_nan_stats.
    CHECK(std::isnan(item(tfd::Gamma(f64(0.5), f64(1.0)).mode())));
    CHECK_THROWS_AS(tfd::Gamma(f64(0.5), f64(1.0), false, false).mode(),
                    tf::errors::InvalidArgumentError);

    const tfd::Exponential e(f64(2.0));
    CHECK(item(e.log_prob(f64(0.3))) == Approx(std::log(2.0) - 0.6).epsilon(1e-12));
    CHECK(item(e.cdf(f64(0.3))) == Approx(1 - std::exp(-0.6)).epsilon(1e-12));
    CHECK(item(e.entropy()) == Approx(1 - std::log(2.0)).epsilon(1e-12));
    CHECK(item(e.mode()) == 0);

    const tfd::Beta b(f64(2.0), f64(3.0));
    CHECK(item(b.log_prob(f64(0.3))) == Approx(0.5675839575845989).epsilon(1e-12));
    CHECK(item(b.entropy()) == Approx(-0.2349066497880008).epsilon(1e-12));
    CHECK(item(b.mean()) == Approx(0.4));
    CHECK(item(b.variance()) == Approx(6.0 / (25 * 6)));
    CHECK(item(b.mode()) == Approx(1.0 / 3));
    // I_x(2, 2) = 3x^2 - 2x^3; I_x(1/2, 1/2) = 2/pi asin(sqrt x)
    CHECK(item(tfd::Beta(f64(2.0), f64(2.0)).cdf(f64(0.3))) == Approx(0.216).epsilon(1e-12));
    CHECK(item(tfd::Beta(f64(0.5), f64(0.5)).cdf(f64(0.3))) ==
          Approx(0.36901011956554536).epsilon(1e-10));

    const tfd::Dirichlet d(f64({1.5, 2, 3}));
    CHECK(d.event_shape() == tf::Shape{3});
    CHECK(d.batch_shape() == tf::Shape{});
    CHECK(item(d.log_prob(f64({0.2, 0.3, 0.5}))) == Approx(1.695210995269563).epsilon(1e-12));
    CHECK(values(d.mean()) == std::vector<double>{1.5 / 6.5, 2 / 6.5, 3 / 6.5});
    // Dirichlet(1, 1) is Uniform(0, 1) on its first coordinate: entropy 0.
    CHECK(item(tfd::Dirichlet(f64({1.0, 1.0})).entropy()) == Approx(0).margin(1e-12));
}

TEST_CASE("Discrete distributions: Bernoulli, Categorical, Poisson", "[distributions]") {
    const tfd::Bernoulli from_probs(std::nullopt, f64({0.2, 0.7}));
    const tfd::Bernoulli from_logits(f64({std::log(0.25), std::log(7.0 / 3)}));
    for (const tfd::Bernoulli* b : {&from_probs, &from_logits}) {
        const auto lp = values(b->log_prob(tf::constant(std::vector<int32_t>{1, 0}, tf::Shape{2})));
        CHECK(lp[0] == Approx(std::log(0.2)));
        CHECK(lp[1] == Approx(std::log(0.3)));
        const auto h = values(b->entropy());
        CHECK(h[0] == Approx(-(0.2 * std::log(0.2) + 0.8 * std::log(0.8))));
        const auto cdf = values(b->cdf(f64({0.5, 1.0})));
        CHECK(cdf[0] == Approx(0.8));
        CHECK(cdf[1] == 1.0);
        CHECK(b->mode().to_vector<int32_t>() == std::vector<int32_t>{0, 1});
        CHECK(b->sample(3, 5).dtype() == tf::int32);
    }

    const tfd::Categorical c(std::nullopt, f64({0.1, 0.2, 0.7}));
    CHECK(c.batch_shape() == tf::Shape{});
    CHECK(c.num_categories() == 3);
    CHECK(item(c.log_prob(tf::constant(2))) == Approx(std::log(0.7)));
    CHECK(std::isinf(item(c.log_prob(tf::constant(3)))));
    CHECK(item(c.cdf(tf::constant(1))) == Approx(0.3));
    CHECK(item(c.mean()) == Approx(0.2 + 1.4));
    CHECK(item(c.entropy()) ==
          Approx(-(0.1 * std::log(0.1) + 0.2 * std::log(0.2) + 0.7 * std::log(0.7))));
    CHECK(c.mode().item<int32_t>() == 2);
    const auto draws =
        tfd::Categorical(f64({0.0, std::log(3.0)})).sample(20000, 3).to_vector<int32_t>();
    double ones = 0;
    for (int32_t k : draws)
        ones += k;
    // p = 0.75; 5 standard errors of a 20000-draw mean: 5 * sqrt(0.1875 / 20000) = 0.0153
    CHECK(std::abs(ones / 20000 - 0.75) < 0.0153);

    const tfd::Poisson p(f64(3.5));
    CHECK(item(p.log_prob(f64(2.0))) == Approx(-1.6876212435692088).epsilon(1e-12));
    CHECK(std::isinf(item(p.log_prob(f64(-1.0)))));
    // sum_{k <= 2} e^-3.5 3.5^k / k!; sum_{k <= 45} for rate 40
    CHECK(item(p.cdf(f64(2.0))) == Approx(0.3208471988621342).epsilon(1e-12));
    CHECK(item(tfd::Poisson(f64(40.0)).cdf(f64(45.5))) ==
          Approx(0.8096500884346292).epsilon(1e-10));
    CHECK(item(p.mode()) == 3);
    CHECK_THROWS_WITH(p.entropy(), Contains("entropy is not implemented: Poisson"));
    const tfd::Poisson from_log(std::nullopt, f64(std::log(3.5)));
    CHECK(item(from_log.log_prob(f64(2.0))) == Approx(-1.6876212435692088).epsilon(1e-12));
}

TEST_CASE("Uniform and Laplace: values", "[distributions]") {
    const tfd::Uniform u(f64(1.0), f64(3.0));
    CHECK(item(u.log_prob(f64(2.0))) == Approx(-std::log(2.0)));
    CHECK(std::isinf(item(u.log_prob(f64(3.5)))));
    CHECK(item(u.prob(f64(3.0))) == Approx(0.5));
    CHECK(values(u.cdf(f64({0.0, 1.5, 4.0}))) == std::vector<double>{0, 0.25, 1});
    CHECK(item(u.entropy()) == Approx(std::log(2.0)));
    CHECK(item(u.variance()) == Approx(4.0 / 12));
    CHECK_THROWS_AS(u.mode(), tf::errors::UnimplementedError);

    const tfd::Laplace l(f64(0.5), f64(2.0));
    CHECK(item(l.log_prob(f64(1.0))) == Approx(-1.6362943611198906));
    CHECK(item(l.cdf(f64(1.0))) == Approx(0.6105996084642975));
    CHECK(item(l.log_cdf(f64(-30.0))) == Approx(std::log(0.5) - 15.25));
    CHECK(item(l.entropy()) == Approx(2.386294361119891));
    CHECK(item(l.stddev()) == Approx(std::sqrt(2.0) * 2));

    const tfd::MultivariateNormalDiag m(f64({0.0, 1.0}), f64({1.0, 2.0}));
    CHECK(m.event_shape() == tf::Shape{2});
    const double expected = tfd::Normal(f64(0.0), f64(1.0)).log_prob(f64(0.5)).item<double>() +
                            tfd::Normal(f64(1.0), f64(2.0)).log_prob(f64(0.0)).item<double>();
    CHECK(item(m.log_prob(f64({0.5, 0.0}))) == Approx(expected));
    CHECK(m.sample(6, 2).shape() == tf::Shape{6, 2});
    CHECK(values(m.covariance()) == std::vector<double>{1, 0, 0, 4});
}

TEST_CASE("log_prob gradients match float64 finite differences", "[distributions][gradients]") {
    const tf::Tensor x = f64({0.3, 0.8, 2.5});
    check_gradient([&](const tf::Tensor& a) { return tfd::Gamma(a, f64(1.5)).log_prob(x); }, 2.5);
    check_gradient([&](const tf::Tensor& a) { return tfd::Gamma(a, f64(1.5)).log_prob(x); }, 0.4);
    check_gradient([&](const tf::Tensor& r) { return tfd::Gamma(f64(2.5), r).log_prob(x); }, 1.5);
    check_gradient([&](const tf::Tensor& a) { return tfd::Gamma(a, f64(1.5)).entropy(); }, 1.7);
    check_gradient([&](const tf::Tensor& a) { return tfd::Gamma(a, f64(1.5)).cdf(x); }, 1.7);
    check_gradient([&](const tf::Tensor& v) { return tfd::Gamma(f64(1.7), f64(1.5)).cdf(v); }, 0.9);
    const tf::Tensor p = f64({0.1, 0.5, 0.95});
    check_gradient([&](const tf::Tensor& a) { return tfd::Beta(a, f64(3.0)).log_prob(p); }, 2.0);
    check_gradient([&](const tf::Tensor& b) { return tfd::Beta(f64(0.7), b).log_prob(p); }, 3.0);
    check_gradient([&](const tf::Tensor& v) { return tfd::Beta(f64(0.7), f64(2.0)).cdf(v); }, 0.4);
    check_gradient(
        [&](const tf::Tensor& a) {
            return tfd::Dirichlet(tf::stack({a, f64(2.0), f64(3.0)}))
                .log_prob(f64({0.2, 0.3, 0.5}));
        },
        1.5);
    const tf::Tensor k = f64({0.0, 2.0, 7.0});
    check_gradient([&](const tf::Tensor& r) { return tfd::Poisson(r).log_prob(k); }, 3.5);
    check_gradient([&](const tf::Tensor& r) { return tfd::Poisson(r).cdf(k); }, 3.5);
    check_gradient([&](const tf::Tensor& s) { return tfd::Normal(f64(0.5), s).log_prob(x); }, 2.0);
    check_gradient([&](const tf::Tensor& s) { return tfd::Laplace(f64(0.5), s).log_prob(x); }, 2.0);
    check_gradient(
        [&](const tf::Tensor& l) {
            return tfd::Bernoulli(l).log_prob(f64({0.0, 1.0}));
        },
        0.3);
    check_gradient(
        [&](const tf::Tensor& l) {
            return tfd::Categorical(tf::stack({l, f64(0.0), f64(1.0)})).log_prob(tf::constant(0));
        },
        0.3);
    check_gradient(
        [&](const tf::Tensor& a) {
            return tfd::kl_divergence(tfd::Beta(a, f64(2.0)), tfd::Beta(f64(1.0), f64(1.5)));
        },
        1.3);
}

TEST_CASE("Second derivatives: trigamma through lgamma and digamma", "[distributions][gradients]") {
    // d^2/da^2 of Gamma(a, 1).log_prob(x) = -psi'(a); psi'(1) = pi^2 / 6.
    tf::Tensor a = f64(1.0);
    tf::GradientTape outer;
    outer.watch(a);
    tf::Tensor first;
    {
        tf::GradientTape inner;
        inner.watch(a);
        const tf::Tensor lp = tfd::Gamma(a, f64(1.0)).log_prob(f64(2.0));
        first = inner.gradient(lp, a);
    }
    // d/da: log x - psi(a) (rate 1) = log 2 + gamma
    CHECK(item(first) == Approx(std::log(2.0) + kEulerGamma).epsilon(1e-12));
    const double second = item(outer.gradient(first, a));
    CHECK(second == Approx(-std::numbers::pi * std::numbers::pi / 6).epsilon(1e-10));
}

TEST_CASE("Variables as parameters; gradients TensorFlow does not define",
          "[distributions][gradients]") {
    // A Variable is read when the distribution is built inside the tape: d/dloc log N(x) =
    // (x-loc)/s^2.
    tf::Variable loc(f64(0.5));
    tf::GradientTape tape;
    const tf::Tensor lp = tfd::Normal(loc, 2.0).log_prob(f64(1.5));
    CHECK(item(tape.gradient(lp, loc)) == Approx(0.25));

    // d^2/da^2 of igamma(a, x) reaches IgammaGradA, which has no gradient (TF's LookupError); the
    // second derivative in x is defined: d/dx (x^(a-1) e^-x / Gamma(a)) at a = 2: (1 - x) e^-x.
    tf::Tensor a = f64(2.0);
    tf::Tensor x = f64(0.7);
    tf::GradientTape outer(true);
    outer.watch(a);
    outer.watch(x);
    tf::Tensor da, dx;
    {
        tf::GradientTape inner(true);
        inner.watch(a);
        inner.watch(x);
        const tf::Tensor cdf = tfd::Gamma(a, f64(1.0)).cdf(x);
        da = inner.gradient(cdf, a);
        dx = inner.gradient(cdf, x);
    }
    CHECK(item(dx) == Approx(0.7 * std::exp(-0.7)).epsilon(1e-12));
    CHECK(item(outer.gradient(dx, x)) == Approx(0.3 * std::exp(-0.7)).epsilon(1e-10));
    CHECK_THROWS_WITH(outer.gradient(da, a),
                      Contains("No gradient defined for operation 'IgammaGradA'"));
}

TEST_CASE("Reparameterized samples carry gradients", "[distributions][sample]") {
    {
        tf::Tensor loc = f64(0.5);
        tf::Tensor scale = f64(2.0);
        tf::GradientTape tape(true);
        tape.watch(loc);
        tape.watch(scale);
        const tf::Tensor s = tfd::Normal(loc, scale).sample(1000, 11);
        const tf::Tensor m = tf::reduce_mean(s);
        CHECK(item(tape.gradient(m, loc)) == Approx(1.0));
        // d mean / d scale = mean of the standard normal draws.
        CHECK(item(tape.gradient(m, scale)) == Approx((item(m) - 0.5) / 2.0));
    }
    CHECK(tfd::Poisson(f64(1.0)).reparameterization_type() ==
          tfd::ReparameterizationType::not_reparameterized);
    CHECK(tfd::Gamma(1.0, 1.0).reparameterization_type() ==
          tfd::ReparameterizationType::fully_reparameterized);

    // Gamma's implicit gradient: the same uniforms (set_seed restarts the stream) at a +- h give
    // the samples' derivative by central differences.
    const double alpha = 1.7;
    const double h = 1e-5;
    auto draw = [](double a) {
        tf::random::set_seed(42);
        return tf::reduce_sum(tfd::Gamma(f64(a), f64(2.0)).sample(50, 9));
    };
    tf::Tensor a = f64(alpha);
    double analytic = 0;
    {
        tf::random::set_seed(42);
        tf::GradientTape tape;
        tape.watch(a);
        const tf::Tensor total = tf::reduce_sum(tfd::Gamma(a, f64(2.0)).sample(50, 9));
        analytic = item(tape.gradient(total, a));
    }
    const double numeric = (item(draw(alpha + h)) - item(draw(alpha - h))) / (2 * h);
    CHECK(analytic == Approx(numeric).epsilon(1e-5));

    // E[d x / d a] = d E[x] / d a = 1 / rate, for Beta through its two gammas too.
    tf::Tensor c = f64(0.6);
    tf::GradientTape tape;
    tape.watch(c);
    const tf::Tensor mean_sample = tf::reduce_mean(tfd::Gamma(c, f64(2.0)).sample(20000, 4));
    // Gamma(0.6, 2): d E/d a = 0.5; the per-sample derivative has sd below 1.1 here, so 5 sigma of
    // a 20000 mean is 0.04.
    CHECK(std::abs(item(tape.gradient(mean_sample, c)) - 0.5) < 0.04);
}

TEST_CASE("Sample moments within statistical bounds", "[distributions][sample]") {
    struct Case {
        std::string name;
        std::function<tf::Tensor()> draw;
        double mean, variance;
    };
    const int n = 20000;
    const std::vector<Case> cases = {
        {"Normal", [&] { return tfd::Normal(f64(0.5), f64(2.0)).sample(n, 1); }, 0.5, 4.0},
        {"Gamma", [&] { return tfd::Gamma(f64(0.3), f64(2.0)).sample(n, 2); }, 0.15, 0.075},
        {"Gamma large", [&] { return tfd::Gamma(f64(40.0), f64(1.0)).sample(n, 3); }, 40, 40},
        {"Exponential", [&] { return tfd::Exponential(f64(2.0)).sample(n, 4); }, 0.5, 0.25},
        {"Beta", [&] { return tfd::Beta(f64(2.0), f64(3.0)).sample(n, 5); }, 0.4, 0.04},
        {"Laplace", [&] { return tfd::Laplace(f64(1.0), f64(0.5)).sample(n, 6); }, 1.0, 0.5},
        {"Uniform", [&] { return tfd::Uniform(f64(-1.0), f64(3.0)).sample(n, 7); }, 1.0, 16.0 / 12},
        {"Poisson", [&] { return tfd::Poisson(f64(3.5)).sample(n, 8); }, 3.5, 3.5},
        {"Poisson large", [&] { return tfd::Poisson(f64(250.0)).sample(n, 9); }, 250, 250},
        {"Bernoulli",
         [&] {
             return tf::cast(tfd::Bernoulli(std::nullopt, f64(0.3)).sample(n, 10), tf::float64);
         },
         0.3,
         0.21},
        {"Dirichlet[0]",
         [&] {
             return tf::unstack(tfd::Dirichlet(f64({2.0, 3.0})).sample(n, 11), -1)[0];
         },
         0.4,
         0.04},
    };
    for (const Case& c : cases) {
        INFO(c.name);
        const std::vector<double> v = values(c.draw());
        REQUIRE(v.size() == static_cast<std::size_t>(n));
        // 5 standard errors of the mean; the variance within 10 % (n = 20000 gives about 1-3 %).
        CHECK(std::abs(sample_mean(v) - c.mean) < 5 * std::sqrt(c.variance / n));
        CHECK(sample_variance(v) == Approx(c.variance).epsilon(0.1));
    }
}

TEST_CASE("kl_divergence: closed forms and Monte-Carlo estimates", "[distributions][kl]") {
    // log(sb/sa) + (sa^2 + (ma - mb)^2) / (2 sb^2) - 1/2
    CHECK(item(tfd::kl_divergence(tfd::Normal(0.5, 2.0), tfd::Normal(-1.0, 1.5))) ==
          Approx(0.601206816437108).epsilon(1e-6));
    // (ca - cb) psi(ca) + lgamma(cb) - lgamma(ca) + cb log(ra / rb) + ca (rb / ra - 1)
    CHECK(
        item(tfd::kl_divergence(tfd::Gamma(f64(2.5), f64(1.5)), tfd::Gamma(f64(1.5), f64(0.5)))) ==
        Approx(0.2789432988725755).epsilon(1e-12));
    CHECK(item(tfd::kl_divergence(tfd::Exponential(f64(2.0)), tfd::Exponential(f64(0.5)))) ==
          Approx(std::log(4.0) + 0.25 - 1).epsilon(1e-12));
    CHECK(std::isinf(item(tfd::kl_divergence(tfd::Uniform(0.0, 2.0), tfd::Uniform(1.0, 3.0)))));
    CHECK(item(tfd::kl_divergence(tfd::Uniform(1.0, 2.0), tfd::Uniform(0.0, 4.0))) ==
          Approx(std::log(4.0)));

    // Monte Carlo: mean of log p_a(x) - log p_b(x) over samples of a.
    auto monte_carlo = [](const tfd::Distribution& a, const tfd::Distribution& b, int n) {
        const tf::Tensor x = a.sample(n, 21);
        return item(tf::reduce_mean(a.log_prob(x) - b.log_prob(x)));
    };
    const tfd::Beta ba(f64(2.0), f64(3.0)), bb(f64(1.2), f64(1.5));
    CHECK(item(ba.kl_divergence(bb)) == Approx(monte_carlo(ba, bb, 40000)).epsilon(0.03));
    const tfd::Dirichlet da(f64({2.0, 3.0, 1.5})), db(f64({1.0, 1.0, 1.0}));
    CHECK(item(da.kl_divergence(db)) == Approx(monte_carlo(da, db, 40000)).epsilon(0.03));
    const tfd::Laplace la(f64(0.0), f64(1.0)), lb(f64(0.5), f64(2.0));
    CHECK(item(la.kl_divergence(lb)) == Approx(monte_carlo(la, lb, 40000)).epsilon(0.03));
    const tfd::Gamma ga(f64(2.5), f64(1.5)), gb(f64(1.5), f64(0.5));
    CHECK(item(ga.kl_divergence(gb)) == Approx(monte_carlo(ga, gb, 40000)).epsilon(0.03));
    const tfd::Categorical ca(f64({0.0, 1.0, 2.0})), cb(f64({1.0, 1.0, 0.0}));
    const std::vector<double> pa{std::exp(0.0), std::exp(1.0), std::exp(2.0)};
    const double za = pa[0] + pa[1] + pa[2];
    const double zb = 2 * std::exp(1.0) + 1;
    const std::vector<double> pb{std::exp(1.0) / zb, std::exp(1.0) / zb, 1 / zb};
    double expected = 0;
    for (int i = 0; i < 3; ++i)
        expected += pa[i] / za * std::log(pa[i] / za / pb[i]);
    CHECK(item(ca.kl_divergence(cb)) == Approx(expected));
    const tfd::Bernoulli bea(std::nullopt, f64(0.3)), beb(std::nullopt, f64(0.6));
    CHECK(item(bea.kl_divergence(beb)) == Approx(0.3 * std::log(0.5) + 0.7 * std::log(0.7 / 0.4)));
    const tfd::MultivariateNormalDiag ma(f64({0.0, 1.0}), f64({1.0, 2.0}));
    const tfd::MultivariateNormalDiag mb(f64({1.0, 1.0}), f64({2.0, 2.0}));
    CHECK(item(ma.kl_divergence(mb)) ==
          Approx(item(tfd::kl_divergence(tfd::Normal(f64(0.0), f64(1.0)),
                                         tfd::Normal(f64(1.0), f64(2.0))))));

    CHECK_THROWS_WITH(
        tfd::kl_divergence(tfd::Normal(0.0, 1.0), tfd::Gamma(1.0, 1.0)),
        Contains("No KL(distribution_a || distribution_b) registered for distribution_a "
                 "type Normal and distribution_b type Gamma"));
}

TEST_CASE("validate_args and parameter errors", "[distributions][errors]") {
    CHECK_THROWS_WITH(
        tfd::Normal(0.0, f64({1.0, -2.0}), true),
        Contains("Normal: Argument `scale` must be positive. (got -2 at flat index 1)"));
    CHECK_NOTHROW(tfd::Normal(0.0, f64({1.0, -2.0})));
    CHECK_THROWS_WITH(tfd::Gamma(f64(-1.0), 1.0, true),
                      Contains("Gamma: Argument `concentration` must be positive."));
    CHECK_THROWS_WITH(tfd::Beta(1.0, f64(0.0), true),
                      Contains("Beta: Argument `concentration0` must be positive."));
    CHECK_THROWS_WITH(tfd::Uniform(2.0, 1.0, true),
                      Contains("Uniform: Argument `low` must be less"));
    CHECK_THROWS_WITH(tfd::Bernoulli(std::nullopt, f64(1.5), tf::int32, true),
                      Contains("Bernoulli: Argument `probs` must be in [0, 1]."));
    CHECK_THROWS_WITH(tfd::Bernoulli(f64(0.0), f64(0.5)),
                      Contains("Bernoulli: Must pass `logits` or `probs`, but not both."));
    CHECK_THROWS_WITH(tfd::Categorical(std::nullopt, f64({0.5, 0.6}), tf::int32, true),
                      Contains("Categorical: Argument `probs` must sum to 1"));
    CHECK_THROWS_WITH(tfd::Poisson(f64(-1.0), std::nullopt, true),
                      Contains("Poisson: Argument `rate` must be non-negative."));
    CHECK_THROWS_WITH(tfd::Dirichlet(f64(1.0)),
                      Contains("Dirichlet: Argument `concentration` must have rank at least 1"));
    CHECK_THROWS_WITH(
        tfd::Normal(tf::constant(1), 1.0),
        Contains("Normal: Argument `loc` must be a floating-point tensor, got int32"));
    CHECK_THROWS_WITH(tfd::Normal(tf::constant(1.0f), f64(1.0)), Contains("must have one dtype"));
    // Support checks of values with validate_args.
    CHECK_THROWS_WITH(tfd::Gamma(f64(2.0), f64(1.0), true).log_prob(f64(-0.5)),
                      Contains("Gamma: Argument `value` must be non-negative"));
    CHECK_THROWS_WITH(tfd::Beta(f64(2.0), f64(1.0), true).log_prob(f64(1.5)),
                      Contains("Beta: Argument `value` must be in [0, 1]"));
    CHECK_THROWS_WITH(
        tfd::Categorical(f64({0.0, 0.0}), std::nullopt, tf::int32, true).log_prob(tf::constant(2)),
        Contains("Categorical: Argument `value` must be in [0, 2)"));
    CHECK_THROWS_WITH(tfd::Normal(0.0, 1.0).log_prob(f64(1.0)),
                      Contains("Normal.log_prob: the value has dtype float64"));
    CHECK_THROWS_AS(tfd::Normal(0.0, 1.0).sample(-1), tf::errors::InvalidArgumentError);
    CHECK_THROWS_WITH(tfd::Dirichlet(f64({1.0, 2.0})).cdf(f64({0.5, 0.5})),
                      Contains("cdf is not implemented: Dirichlet"));
    CHECK_THROWS_AS(
        tfd::kl_divergence(tfd::Beta(f64(-1.0), f64(1.0)), tfd::Beta(f64(1.0), f64(1.0)), false),
        tf::errors::InvalidArgumentError);
}
