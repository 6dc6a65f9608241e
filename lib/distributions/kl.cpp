// kl_divergence for the pairs TFP registers (each family's _kl_<a>_<b>), in closed form.
#include <limits>
#include <typeinfo>

#include <fmt/format.h>

#include <tapeflow/core/error.hpp>
#include <tapeflow/ops/array.hpp>
#include <tapeflow/ops/creation.hpp>
#include <tapeflow/ops/math.hpp>
#include <tapeflow/ops/nn.hpp>

#include "distributions/common.hpp"
#include "distributions/special.hpp"

namespace tapeflow::distributions {

using detail::scalar;

namespace {

Tensor kl_normal(const Normal& a, const Normal& b) {
    // log(sb / sa) + (sa^2 + (ma - mb)^2) / (2 sb^2) - 1/2
    const Tensor ratio = a.scale() / b.scale();
    const Tensor diff = (a.loc() - b.loc()) / b.scale();
    return 0.5 * square(ratio) + 0.5 * square(diff) - 0.5 - log(ratio);
}

Tensor kl_mvn_diag(const MultivariateNormalDiag& a, const MultivariateNormalDiag& b) {
    const Tensor ratio = abs(a.scale_diag() / b.scale_diag());
    const Tensor diff = (a.loc() - b.loc()) / b.scale_diag();
    return reduce_sum(0.5 * square(ratio) + 0.5 * square(diff) - 0.5 - log(ratio), -1);
}

Tensor kl_laplace(const Laplace& a, const Laplace& b) {
    const Tensor distance = abs(a.loc() - b.loc());
    const Tensor delta_log_scale = log(a.scale()) - log(b.scale());
    return -delta_log_scale + distance / b.scale() - 1.0 +
           exp(-distance / a.scale() + delta_log_scale);
}

Tensor kl_uniform(const Uniform& a, const Uniform& b) {
    // Infinite unless a's support lies inside b's.
    const Tensor inside = logical_and(less_equal(b.low(), a.low()), less_equal(a.high(), b.high()));
    const Tensor kl = log(b.high() - b.low()) - log(a.high() - a.low());
    return where(inside, kl, scalar(kl, std::numeric_limits<double>::infinity()) + zeros_like(kl));
}

Tensor kl_bernoulli(const Bernoulli& a, const Bernoulli& b) {
    const Tensor al = a.logits();
    const Tensor bl = b.logits();
    const Tensor delta_probs0 = softplus(-bl) - softplus(-al);
    const Tensor delta_probs1 = softplus(bl) - softplus(al);
    return sigmoid(al) * delta_probs0 + sigmoid(-al) * delta_probs1;
}

Tensor kl_categorical(const Categorical& a, const Categorical& b) {
    if (a.num_categories() != b.num_categories())
        throw errors::InvalidArgumentError(
            fmt::format("kl_divergence: Categorical distributions over {} and {} categories",
                        a.num_categories(),
                        b.num_categories()));
    const Tensor a_lp = nn::log_softmax(a.logits());
    const Tensor b_lp = nn::log_softmax(b.logits());
    return reduce_sum(detail::mul_no_nan(exp(a_lp), a_lp - b_lp), -1);
}

Tensor kl_gamma(const Gamma& a, const Gamma& b) {
    const Tensor& ca = a.concentration();
    const Tensor& cb = b.concentration();
    const Tensor& ra = a.rate();
    const Tensor& rb = b.rate();
    return (ca - cb) * special::digamma(ca) + special::lgamma(cb) - special::lgamma(ca) +
           cb * (log(ra) - log(rb)) + ca * (rb / ra - 1.0);
}

Tensor kl_beta(const Beta& a, const Beta& b) {
    const Tensor& a1 = a.concentration1();
    const Tensor& a0 = a.concentration0();
    const Tensor& b1 = b.concentration1();
    const Tensor& b0 = b.concentration0();
    return special::lbeta(b1, b0) - special::lbeta(a1, a0) + (a1 - b1) * special::digamma(a1) +
           (a0 - b0) * special::digamma(a0) + (b1 - a1 + b0 - a0) * special::digamma(a1 + a0);
}

Tensor kl_dirichlet(const Dirichlet& a, const Dirichlet& b) {
    const Tensor& ca = a.concentration();
    const Tensor& cb = b.concentration();
    const Tensor a0 = reduce_sum(ca, -1, true);
    const Tensor b0 = reduce_sum(cb, -1);
    const Tensor digamma_diff = special::digamma(ca) - special::digamma(a0);
    return special::lgamma(squeeze(a0, -1)) - reduce_sum(special::lgamma(ca), -1) -
           special::lgamma(b0) + reduce_sum(special::lgamma(cb), -1) +
           reduce_sum((ca - cb) * digamma_diff, -1);
}

template <class D>
const D* as(const Distribution& d) {
    return dynamic_cast<const D*>(&d);
}

}  // namespace

Tensor kl_divergence(const Distribution& a, const Distribution& b, bool allow_nan_stats) {
    Tensor kl;
    if (as<Normal>(a) && as<Normal>(b)) {
        kl = kl_normal(*as<Normal>(a), *as<Normal>(b));
    } else if (as<MultivariateNormalDiag>(a) && as<MultivariateNormalDiag>(b)) {
        kl = kl_mvn_diag(*as<MultivariateNormalDiag>(a), *as<MultivariateNormalDiag>(b));
    } else if (as<Laplace>(a) && as<Laplace>(b)) {
        kl = kl_laplace(*as<Laplace>(a), *as<Laplace>(b));
    } else if (as<Uniform>(a) && as<Uniform>(b)) {
        kl = kl_uniform(*as<Uniform>(a), *as<Uniform>(b));
    } else if (as<Bernoulli>(a) && as<Bernoulli>(b)) {
        kl = kl_bernoulli(*as<Bernoulli>(a), *as<Bernoulli>(b));
    } else if (as<Categorical>(a) && as<Categorical>(b)) {
        kl = kl_categorical(*as<Categorical>(a), *as<Categorical>(b));
    } else if (as<Gamma>(a) && as<Gamma>(b)) {  // Exponential is a Gamma, as in TFP
        kl = kl_gamma(*as<Gamma>(a), *as<Gamma>(b));
    } else if (as<Beta>(a) && as<Beta>(b)) {
        kl = kl_beta(*as<Beta>(a), *as<Beta>(b));
    } else if (as<Dirichlet>(a) && as<Dirichlet>(b)) {
        kl = kl_dirichlet(*as<Dirichlet>(a), *as<Dirichlet>(b));
    } else {
        throw errors::UnimplementedError(fmt::format(
            "No KL(distribution_a || distribution_b) registered for distribution_a type {} and "
            "distribution_b type {}",
            a.name(),
            b.name()));
    }
    if (!allow_nan_stats && reduce_any(not_equal(kl, kl)).item<bool>())
        throw errors::InvalidArgumentError(
            fmt::format("KL calculation between {} and {} returned NaN values (and was called with "
                        "allow_nan_stats=False)",
                        a.name(),
                        b.name()));
    return kl;
}

}  // namespace tapeflow::distributions
