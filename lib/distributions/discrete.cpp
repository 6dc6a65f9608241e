// Bernoulli, Categorical and Poisson (tfp.distributions bernoulli.py, categorical.py,
// poisson.py): not reparameterized; parameters given as logits or probabilities (rate or
// log_rate), exactly one of them, as TFP requires.
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include <tapeflow/core/error.hpp>
#include <tapeflow/ops/array.hpp>
#include <tapeflow/ops/creation.hpp>
#include <tapeflow/ops/math.hpp>
#include <tapeflow/ops/nn.hpp>
#include <tapeflow/random.hpp>

#include "distributions/common.hpp"
#include "distributions/special.hpp"

namespace tapeflow::distributions {

using detail::scalar;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

Distribution::Common not_reparameterized(std::string name,
                                         bool validate_args,
                                         bool allow_nan_stats) {
    return {std::move(name),
            validate_args,
            allow_nan_stats,
            ReparameterizationType::not_reparameterized};
}

// The one parameter of a pair given (TFP: "Must pass probs or logits, but not both.").
Tensor one_of(const std::string& dist,
              const char* first_name,
              const std::optional<Param>& first,
              const char* second_name,
              const std::optional<Param>& second,
              bool& first_given) {
    if (first.has_value() == second.has_value())
        throw errors::InvalidArgumentError(fmt::format(
            "{}: Must pass `{}` or `{}`, but not both.", dist, first_name, second_name));
    first_given = first.has_value();
    const Param& p = first_given ? *first : *second;
    return detail::resolve(dist, {{first_given ? first_name : second_name, &p}})[0];
}

void check_probs(const std::string& dist, const Tensor& p) {
    detail::require(dist,
                    "probs",
                    logical_and(greater_equal(p, scalar(p, 0)), less_equal(p, scalar(p, 1))),
                    p,
                    "must be in [0, 1].");
}

void check_integer(const std::string& dist, const Tensor& x) {
    detail::require(dist, "value", equal(x, floor(x)), x, "must be an integer.");
}

}  // namespace

// ---- Bernoulli ----

Bernoulli::Bernoulli(std::optional<Param> logits,
                     std::optional<Param> probs,
                     DType dtype,
                     bool validate_args,
                     bool allow_nan_stats,
                     std::string name)
    : Distribution(not_reparameterized(std::move(name), validate_args, allow_nan_stats)) {
    bool from_logits = false;
    const Tensor t = one_of(name_, "logits", logits, "probs", probs, from_logits);
    (from_logits ? logits_ : probs_) = t;
    dtype_ = dtype;
    param_dtype_ = t.dtype();
    batch_shape_ = t.shape();
    if (validate_args && !from_logits) check_probs(name_, probs_);
}

Tensor Bernoulli::logits() const {
    return logits_.defined() ? logits_ : log(probs_) - log1p(-probs_);
}

Tensor Bernoulli::probs() const {
    return probs_.defined() ? probs_ : sigmoid(logits_);
}

Tensor Bernoulli::sample_impl(const Shape& sample_shape, std::optional<uint64_t> seed) const {
    const Tensor u =
        random::uniform(detail::concat(sample_shape, batch_shape_), 0, 1, param_dtype_, seed);
    return cast(less(u, probs()), dtype_);
}

Tensor Bernoulli::log_prob_impl(const Tensor& x) const {
    // x log p + (1 - x) log(1 - p), from logits: log p = -softplus(-l), log(1 - p) = -softplus(l).
    if (logits_.defined()) return -(x * softplus(-logits_) + (1.0 - x) * softplus(logits_));
    return detail::mul_no_nan(x, log(probs_)) + detail::mul_no_nan(1.0 - x, log1p(-probs_));
}

Tensor Bernoulli::cdf_impl(const Tensor& x) const {
    const Tensor p = probs() + zeros_like(x);
    const Tensor below = less(x + zeros_like(p), scalar(p, 0));
    const Tensor above = greater_equal(x + zeros_like(p), scalar(p, 1));
    return where(below, zeros_like(p), where(above, ones_like(p), 1.0 - p));
}

Tensor Bernoulli::entropy_impl() const {
    if (logits_.defined()) {
        const Tensor& l = logits_;
        return sigmoid(l) * softplus(-l) + sigmoid(-l) * softplus(l);
    }
    const Tensor& p = probs_;
    return -(detail::mul_no_nan(p, log(p)) + detail::mul_no_nan(1.0 - p, log1p(-p)));
}

Tensor Bernoulli::mean_impl() const {
    return probs();
}

Tensor Bernoulli::variance_impl() const {
    const Tensor p = probs();
    return p * (1.0 - p);
}

Tensor Bernoulli::mode_impl() const {
    return cast(greater(probs(), scalar(probs(), 0.5)), dtype_);
}

void Bernoulli::check_support(const Tensor& x) const {
    detail::require(name_,
                    "value",
                    logical_or(equal(x, scalar(x, 0)), equal(x, scalar(x, 1))),
                    x,
                    "must be 0 or 1.");
}

// ---- Categorical ----

Categorical::Categorical(std::optional<Param> logits,
                         std::optional<Param> probs,
                         DType dtype,
                         bool validate_args,
                         bool allow_nan_stats,
                         std::string name)
    : Distribution(not_reparameterized(std::move(name), validate_args, allow_nan_stats)) {
    bool from_logits = false;
    const Tensor t = one_of(name_, "logits", logits, "probs", probs, from_logits);
    (from_logits ? logits_ : probs_) = t;
    dtype_ = dtype;
    param_dtype_ = t.dtype();
    batch_shape_ = detail::drop_last(name_, from_logits ? "logits" : "probs", t.shape(), 1);
    num_categories_ = t.shape()[-1];
    if (validate_args && !from_logits) {
        check_probs(name_, probs_);
        const Tensor total = reduce_sum(probs_, -1);
        const double tol = (param_dtype_ == DType::float64 ? 1e-12 : 1e-5) * num_categories_;
        detail::require(name_,
                        "probs",
                        less_equal(abs(total - 1.0), scalar(total, tol)),
                        total,
                        "must sum to 1 over the last axis.");
    }
}

Tensor Categorical::logits() const {
    return logits_.defined() ? logits_ : log(probs_);
}

Tensor Categorical::probs() const {
    return probs_.defined() ? probs_ : nn::softmax(logits_);
}

Tensor Categorical::log_probs() const {
    return logits_.defined() ? nn::log_softmax(logits_) : log(probs_);
}

Tensor Categorical::sample_impl(const Shape& sample_shape, std::optional<uint64_t> seed) const {
    // Gumbel-max: argmax(log p + Gumbel noise) is a draw of the category.
    const double tiny = param_dtype_ == DType::float64 ? std::numeric_limits<double>::min()
                                                       : std::numeric_limits<float>::min();
    const Shape shape =
        detail::concat(detail::concat(sample_shape, batch_shape_), Shape{num_categories_});
    const Tensor u = random::uniform(shape, tiny, 1, param_dtype_, seed);
    const Tensor gumbel = -log(-log(u));
    return argmax(stop_gradient(log_probs()) + gumbel, -1, dtype_);
}

namespace {

// [..., K] floats: 1 where the category index equals (or is <=) k.
Tensor category_mask(const Tensor& k, int64_t num_categories, bool at_most) {
    const Tensor labels = range(0.0, static_cast<double>(num_categories), 1.0, k.dtype());
    const Tensor kk = expand_dims(k, -1);
    return cast(at_most ? less_equal(labels, kk) : equal(labels, kk), k.dtype());
}

}  // namespace

Tensor Categorical::log_prob_impl(const Tensor& k) const {
    // The log-probability of k, -inf outside {0, ..., K-1} (TFP's
    // force_probs_to_zero_outside_support).
    const Tensor lp = log_probs();
    const Tensor mask = category_mask(k, num_categories_, false);
    const Tensor picked = reduce_sum(detail::mul_no_nan(mask, lp), -1);
    const Tensor inside = greater(reduce_sum(mask + zeros_like(lp), -1), scalar(picked, 0));
    return where(inside, picked, scalar(picked, -kInf) + zeros_like(picked));
}

Tensor Categorical::cdf_impl(const Tensor& k) const {
    const Tensor mask = category_mask(floor(k), num_categories_, true);
    return reduce_sum(mask * probs(), -1);
}

Tensor Categorical::entropy_impl() const {
    const Tensor lp = log_probs();
    return -reduce_sum(detail::mul_no_nan(exp(lp), lp), -1);
}

Tensor Categorical::mean_impl() const {
    const Tensor labels = range(0.0, static_cast<double>(num_categories_), 1.0, param_dtype_);
    return reduce_sum(probs() * labels, -1);
}

Tensor Categorical::variance_impl() const {
    const Tensor labels = range(0.0, static_cast<double>(num_categories_), 1.0, param_dtype_);
    const Tensor p = probs();
    const Tensor m = reduce_sum(p * labels, -1, true);
    return reduce_sum(p * square(labels - m), -1);
}

Tensor Categorical::mode_impl() const {
    return argmax(logits_.defined() ? logits_ : probs_, -1, dtype_);
}

void Categorical::check_support(const Tensor& k) const {
    check_integer(name_, k);
    detail::require(name_,
                    "value",
                    logical_and(greater_equal(k, scalar(k, 0)),
                                less(k, scalar(k, static_cast<double>(num_categories_)))),
                    k,
                    fmt::format("must be in [0, {})", num_categories_).c_str());
}

// ---- Poisson ----

Poisson::Poisson(std::optional<Param> rate,
                 std::optional<Param> log_rate,
                 bool validate_args,
                 bool allow_nan_stats,
                 std::string name)
    : Distribution(not_reparameterized(std::move(name), validate_args, allow_nan_stats)) {
    bool from_rate = false;
    const Tensor t = one_of(name_, "rate", rate, "log_rate", log_rate, from_rate);
    (from_rate ? rate_ : log_rate_) = t;
    dtype_ = param_dtype_ = t.dtype();
    batch_shape_ = t.shape();
    if (validate_args && from_rate)
        detail::require(
            name_, "rate", greater_equal(rate_, scalar(rate_, 0)), rate_, "must be non-negative.");
}

Tensor Poisson::rate() const {
    return rate_.defined() ? rate_ : exp(log_rate_);
}

Tensor Poisson::log_rate() const {
    return log_rate_.defined() ? log_rate_ : log(rate_);
}

Tensor Poisson::sample_impl(const Shape& sample_shape, std::optional<uint64_t> seed) const {
    return special::random_poisson(sample_shape, stop_gradient(rate()), seed);
}

Tensor Poisson::log_prob_impl(const Tensor& x) const {
    // x log(rate) - lgamma(x + 1) - rate, -inf below 0 (TFP's default continuous relaxation).
    const Tensor safe = maximum(x, scalar(x, 0));
    const Tensor y = detail::mul_no_nan(safe, log_rate()) - special::lgamma(safe + 1.0) - rate();
    return where(
        equal(x + zeros_like(y), safe + zeros_like(y)), y, scalar(y, -kInf) + zeros_like(y));
}

Tensor Poisson::cdf_impl(const Tensor& x) const {
    // P(X <= x) = Q(floor(x) + 1, rate), 0 below 0.
    const Tensor safe = maximum(floor(x), scalar(x, 0));
    const Tensor r = rate();
    const Tensor cdf = special::igammac(safe + 1.0 + zeros_like(r), r + zeros_like(safe));
    return where(less(x + zeros_like(cdf), scalar(cdf, 0)), zeros_like(cdf), cdf);
}

Tensor Poisson::mean_impl() const {
    return rate();
}

Tensor Poisson::variance_impl() const {
    return rate();
}

Tensor Poisson::mode_impl() const {
    return floor(rate());
}

void Poisson::check_support(const Tensor& x) const {
    detail::require(name_, "value", greater_equal(x, scalar(x, 0)), x, "must be non-negative.");
}

}  // namespace tapeflow::distributions
