// Gamma, Exponential, Beta and Dirichlet (tfp.distributions gamma.py, exponential.py, beta.py,
// dirichlet.py). Gamma-based samples carry implicit reparameterization gradients
// (special::random_gamma); Beta and Dirichlet normalize gamma samples, as TFP does.
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include <tapeflow/core/error.hpp>
#include <tapeflow/ops/array.hpp>
#include <tapeflow/ops/creation.hpp>
#include <tapeflow/ops/math.hpp>
#include <tapeflow/random.hpp>

#include "distributions/common.hpp"
#include "distributions/special.hpp"

namespace tapeflow::distributions {

using detail::scalar;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

Distribution::Common reparameterized(std::string name, bool validate_args, bool allow_nan_stats) {
    return {std::move(name),
            validate_args,
            allow_nan_stats,
            ReparameterizationType::fully_reparameterized};
}

// TFP's undefined modes: NaN with allow_nan_stats, else InvalidArgumentError.
Tensor defined_mode(const std::string& dist,
                    bool allow_nan_stats,
                    const Tensor& defined,
                    const Tensor& mode,
                    const char* message) {
    if (!allow_nan_stats && !reduce_all(defined).item<bool>())
        throw errors::InvalidArgumentError(fmt::format("{}: {}", dist, message));
    return where(defined, mode, scalar(mode, kNaN) + zeros_like(mode));
}

}  // namespace

// ---- Gamma ----

Gamma::Gamma(
    Param concentration, Param rate, bool validate_args, bool allow_nan_stats, std::string name)
    : Distribution(reparameterized(std::move(name), validate_args, allow_nan_stats)) {
    const auto p = detail::resolve_pair(name_, "concentration", concentration, "rate", rate);
    concentration_ = p.first;
    rate_ = p.second;
    dtype_ = param_dtype_ = concentration_.dtype();
    batch_shape_ = p.batch_shape;
    if (validate_args) {
        detail::require_positive(name_, "concentration", concentration_);
        detail::require_positive(name_, "rate", rate_);
    }
}

Tensor Gamma::sample_impl(const Shape& sample_shape, std::optional<uint64_t> seed) const {
    const Tensor alpha = concentration_ + zeros_like(rate_);
    return special::random_gamma(sample_shape, alpha, seed) / rate_;
}

Tensor Gamma::log_prob_impl(const Tensor& x) const {
    const Tensor& a = concentration_;
    return detail::mul_no_nan(a - 1.0, log(x)) - rate_ * x - special::lgamma(a) + a * log(rate_);
}

Tensor Gamma::cdf_impl(const Tensor& x) const {
    // igamma(a, rate * x), 0 below the support.
    const Tensor rx = rate_ * x + zeros_like(concentration_);
    const Tensor below = less(rx, scalar(rx, 0));
    const Tensor cdf = special::igamma(concentration_, where(below, zeros_like(rx), rx));
    return where(below, zeros_like(cdf), cdf);
}

Tensor Gamma::entropy_impl() const {
    const Tensor& a = concentration_;
    return a - log(rate_) + special::lgamma(a) + (1.0 - a) * special::digamma(a);
}

Tensor Gamma::mean_impl() const {
    return concentration_ / rate_;
}

Tensor Gamma::variance_impl() const {
    return concentration_ / square(rate_);
}

Tensor Gamma::stddev_impl() const {
    return sqrt(concentration_) / rate_;
}

Tensor Gamma::mode_impl() const {
    const Tensor a = concentration_ + zeros_like(rate_);
    return defined_mode(name_,
                        allow_nan_stats_,
                        greater(a, scalar(a, 1)),
                        (a - 1.0) / rate_,
                        "Mode not defined when any concentration <= 1.");
}

void Gamma::check_support(const Tensor& x) const {
    detail::require(name_,
                    "value",
                    greater_equal(x, scalar(x, 0)),
                    x,
                    "must be non-negative (the support of the distribution).");
}

// ---- Exponential ----

Exponential::Exponential(Param rate, bool validate_args, bool allow_nan_stats, std::string name)
    : Gamma(1.0, std::move(rate), validate_args, allow_nan_stats, std::move(name)) {}

Tensor Exponential::sample_impl(const Shape& sample_shape, std::optional<uint64_t> seed) const {
    const double tiny = dtype_ == DType::float64 ? std::numeric_limits<double>::min()
                                                 : std::numeric_limits<float>::min();
    const Tensor u =
        random::uniform(detail::concat(sample_shape, batch_shape_), tiny, 1, dtype_, seed);
    return -log(u) / rate_;
}

Tensor Exponential::cdf_impl(const Tensor& x) const {
    const Tensor cdf = -expm1(-rate_ * x);
    return where(less(x, scalar(x, 0)), zeros_like(cdf), cdf);
}

Tensor Exponential::mode_impl() const {
    return zeros_like(rate_);
}

// ---- Beta ----

Beta::Beta(Param concentration1,
           Param concentration0,
           bool validate_args,
           bool allow_nan_stats,
           std::string name)
    : Distribution(reparameterized(std::move(name), validate_args, allow_nan_stats)) {
    const auto p = detail::resolve_pair(
        name_, "concentration1", concentration1, "concentration0", concentration0);
    concentration1_ = p.first;
    concentration0_ = p.second;
    dtype_ = param_dtype_ = concentration1_.dtype();
    batch_shape_ = p.batch_shape;
    if (validate_args) {
        detail::require_positive(name_, "concentration1", concentration1_);
        detail::require_positive(name_, "concentration0", concentration0_);
    }
}

Tensor Beta::sample_impl(const Shape& sample_shape, std::optional<uint64_t> seed) const {
    // One gamma draw for both concentrations: X / (X + Y), X ~ Gamma(c1), Y ~ Gamma(c0).
    const Tensor zeros = zeros_like(concentration1_ + concentration0_);
    const Tensor both = stack({concentration1_ + zeros, concentration0_ + zeros}, -1);
    const Tensor g = special::random_gamma(sample_shape, both, seed);
    const auto parts = unstack(g, -1);
    return parts[0] / (parts[0] + parts[1]);
}

Tensor Beta::log_prob_impl(const Tensor& x) const {
    const Tensor& a = concentration1_;
    const Tensor& b = concentration0_;
    return detail::mul_no_nan(a - 1.0, log(x)) + detail::mul_no_nan(b - 1.0, log1p(-x)) -
           special::lbeta(a, b);
}

Tensor Beta::cdf_impl(const Tensor& x) const {
    const Tensor zeros = zeros_like(concentration1_ + concentration0_ + x);
    const Tensor clipped = minimum(maximum(x + zeros, zeros), zeros + 1.0);
    return special::betainc(concentration1_ + zeros, concentration0_ + zeros, clipped);
}

Tensor Beta::entropy_impl() const {
    const Tensor& a = concentration1_;
    const Tensor& b = concentration0_;
    return special::lbeta(a, b) - (a - 1.0) * special::digamma(a) -
           (b - 1.0) * special::digamma(b) + (a + b - 2.0) * special::digamma(a + b);
}

Tensor Beta::mean_impl() const {
    return concentration1_ / (concentration1_ + concentration0_);
}

Tensor Beta::variance_impl() const {
    const Tensor total = concentration1_ + concentration0_;
    return concentration1_ * concentration0_ / (square(total) * (total + 1.0));
}

Tensor Beta::mode_impl() const {
    const Tensor& a = concentration1_;
    const Tensor& b = concentration0_;
    const Tensor defined = logical_and(greater(a, scalar(a, 1)), greater(b, scalar(b, 1)));
    return defined_mode(name_,
                        allow_nan_stats_,
                        defined,
                        (a - 1.0) / (a + b - 2.0),
                        "Mode undefined for concentration1 <= 1 or concentration0 <= 1.");
}

void Beta::check_support(const Tensor& x) const {
    detail::require(name_,
                    "value",
                    logical_and(greater_equal(x, scalar(x, 0)), less_equal(x, scalar(x, 1))),
                    x,
                    "must be in [0, 1] (the support of the distribution).");
}

// ---- Dirichlet ----

Dirichlet::Dirichlet(Param concentration,
                     bool validate_args,
                     bool allow_nan_stats,
                     std::string name)
    : Distribution(reparameterized(std::move(name), validate_args, allow_nan_stats)) {
    const auto t = detail::resolve(name_, {{"concentration", &concentration}});
    concentration_ = t[0];
    dtype_ = param_dtype_ = concentration_.dtype();
    batch_shape_ = detail::drop_last(name_, "concentration", concentration_.shape(), 1);
    event_shape_ = Shape{concentration_.shape()[-1]};
    if (validate_args) detail::require_positive(name_, "concentration", concentration_);
}

Tensor Dirichlet::sample_impl(const Shape& sample_shape, std::optional<uint64_t> seed) const {
    const Tensor g = special::random_gamma(sample_shape, concentration_, seed);
    return g / reduce_sum(g, -1, true);
}

Tensor Dirichlet::log_prob_impl(const Tensor& x) const {
    const Tensor& a = concentration_;
    const Tensor log_norm = reduce_sum(special::lgamma(a), -1) - special::lgamma(reduce_sum(a, -1));
    return reduce_sum(detail::mul_no_nan(a - 1.0 + zeros_like(x), log(x) + zeros_like(a)), -1) -
           log_norm;
}

Tensor Dirichlet::entropy_impl() const {
    const Tensor& a = concentration_;
    const Tensor total = reduce_sum(a, -1);
    const double k = static_cast<double>(event_shape_[0]);
    const Tensor log_norm = reduce_sum(special::lgamma(a), -1) - special::lgamma(total);
    return log_norm + (total - k) * special::digamma(total) -
           reduce_sum((a - 1.0) * special::digamma(a), -1);
}

Tensor Dirichlet::mean_impl() const {
    return concentration_ / reduce_sum(concentration_, -1, true);
}

Tensor Dirichlet::variance_impl() const {
    const Tensor total = reduce_sum(concentration_, -1, true);
    const Tensor p = concentration_ / total;
    return p * (1.0 - p) / (total + 1.0);
}

Tensor Dirichlet::mode_impl() const {
    const Tensor& a = concentration_;
    const double k = static_cast<double>(event_shape_[0]);
    const Tensor mode = (a - 1.0) / (reduce_sum(a, -1, true) - k);
    const Tensor defined = reduce_all(greater(a, scalar(a, 1)), -1, true);
    return defined_mode(
        name_, allow_nan_stats_, defined, mode, "Mode undefined when any concentration <= 1.");
}

void Dirichlet::check_support(const Tensor& x) const {
    detail::require(name_,
                    "value",
                    greater_equal(x, scalar(x, 0)),
                    x,
                    "must be non-negative (samples lie on the simplex).");
    const Tensor total = reduce_sum(x, -1);
    const double tol = (x.dtype() == DType::float64 ? 1e-12 : 1e-5) * event_shape_[0];
    detail::require(name_,
                    "value",
                    less_equal(abs(total - 1.0), scalar(total, tol)),
                    total,
                    "must sum to 1 over the last axis (samples lie on the simplex).");
}

}  // namespace tapeflow::distributions
