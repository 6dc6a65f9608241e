// Normal, Laplace and MultivariateNormalDiag (tfp.distributions normal.py, laplace.py,
// mvn_diag.py): reparameterized samples loc + scale * noise.
#include <cmath>
#include <numbers>

#include <tapeflow/ops/array.hpp>
#include <tapeflow/ops/creation.hpp>
#include <tapeflow/ops/math.hpp>
#include <tapeflow/random.hpp>

#include "distributions/common.hpp"

namespace tapeflow::distributions {

using detail::scalar;

namespace {

constexpr double kHalfLog2Pi = 0.91893853320467274178;  // 0.5 * log(2 pi)

Distribution::Common reparameterized(std::string name, bool validate_args, bool allow_nan_stats) {
    return {std::move(name),
            validate_args,
            allow_nan_stats,
            ReparameterizationType::fully_reparameterized};
}

}  // namespace

// ---- Normal ----

Normal::Normal(Param loc, Param scale, bool validate_args, bool allow_nan_stats, std::string name)
    : Distribution(reparameterized(std::move(name), validate_args, allow_nan_stats)) {
    const auto p = detail::resolve_pair(name_, "loc", loc, "scale", scale);
    loc_ = p.first;
    scale_ = p.second;
    dtype_ = param_dtype_ = loc_.dtype();
    batch_shape_ = p.batch_shape;
    if (validate_args) detail::require_positive(name_, "scale", scale_);
}

Tensor Normal::sample_impl(const Shape& sample_shape, std::optional<uint64_t> seed) const {
    const Tensor eps =
        random::normal(detail::concat(sample_shape, batch_shape_), 0, 1, dtype_, seed);
    return loc_ + scale_ * eps;
}

Tensor Normal::log_prob_impl(const Tensor& x) const {
    const Tensor z = (x - loc_) / scale_;
    return -0.5 * square(z) - log(scale_) - kHalfLog2Pi;
}

Tensor Normal::cdf_impl(const Tensor& x) const {
    const Tensor z = (x - loc_) / scale_;
    return 0.5 * (1.0 + erf(z * (std::numbers::sqrt2 / 2)));
}

Tensor Normal::log_cdf_impl(const Tensor& x) const {
    return log(cdf_impl(x));
}

Tensor Normal::entropy_impl() const {
    return log(scale_) + (0.5 + kHalfLog2Pi) + zeros_like(loc_);
}

Tensor Normal::mean_impl() const {
    return loc_ + zeros_like(scale_);
}

Tensor Normal::variance_impl() const {
    return square(scale_) + zeros_like(loc_);
}

Tensor Normal::stddev_impl() const {
    return scale_ + zeros_like(loc_);
}

Tensor Normal::mode_impl() const {
    return mean_impl();
}

// ---- Laplace ----

Laplace::Laplace(Param loc, Param scale, bool validate_args, bool allow_nan_stats, std::string name)
    : Distribution(reparameterized(std::move(name), validate_args, allow_nan_stats)) {
    const auto p = detail::resolve_pair(name_, "loc", loc, "scale", scale);
    loc_ = p.first;
    scale_ = p.second;
    dtype_ = param_dtype_ = loc_.dtype();
    batch_shape_ = p.batch_shape;
    if (validate_args) detail::require_positive(name_, "scale", scale_);
}

Tensor Laplace::sample_impl(const Shape& sample_shape, std::optional<uint64_t> seed) const {
    // Uniform on the open interval (-1, 1) (TFP: the smallest value above -1), inverted.
    const double low = dtype_ == DType::float64 ? std::nextafter(-1.0, 1.0)
                                                : static_cast<double>(std::nextafter(-1.0F, 1.0F));
    const Tensor u =
        random::uniform(detail::concat(sample_shape, batch_shape_), low, 1, dtype_, seed);
    return loc_ - scale_ * sign(u) * log1p(-abs(u));
}

Tensor Laplace::log_prob_impl(const Tensor& x) const {
    const Tensor z = (x - loc_) / scale_;
    return -abs(z) - std::numbers::ln2 - log(scale_);
}

Tensor Laplace::cdf_impl(const Tensor& x) const {
    const Tensor z = (x - loc_) / scale_;
    return 0.5 - 0.5 * sign(z) * expm1(-abs(z));
}

Tensor Laplace::log_cdf_impl(const Tensor& x) const {
    // log(0.5 e^z) for z < 0, log1p(-0.5 e^-z) otherwise: both branches finite everywhere.
    const Tensor z = (x - loc_) / scale_;
    const Tensor below = z - std::numbers::ln2;
    const Tensor above = log1p(-0.5 * exp(-abs(z)));
    return where(less(z, scalar(z, 0)), below, above);
}

Tensor Laplace::entropy_impl() const {
    return log(scale_) + (std::numbers::ln2 + 1) + zeros_like(loc_);
}

Tensor Laplace::mean_impl() const {
    return loc_ + zeros_like(scale_);
}

Tensor Laplace::variance_impl() const {
    return 2.0 * square(scale_) + zeros_like(loc_);
}

Tensor Laplace::stddev_impl() const {
    return std::numbers::sqrt2 * scale_ + zeros_like(loc_);
}

Tensor Laplace::mode_impl() const {
    return mean_impl();
}

// ---- MultivariateNormalDiag ----

MultivariateNormalDiag::MultivariateNormalDiag(
    Param loc, Param scale_diag, bool validate_args, bool allow_nan_stats, std::string name)
    : Distribution(reparameterized(std::move(name), validate_args, allow_nan_stats)) {
    const auto t = detail::resolve(name_, {{"loc", &loc}, {"scale_diag", &scale_diag}});
    loc_ = t[0];
    scale_diag_ = t[1];
    dtype_ = param_dtype_ = loc_.dtype();
    const Shape loc_batch = detail::drop_last(name_, "loc", loc_.shape(), 1);
    const Shape scale_batch = detail::drop_last(name_, "scale_diag", scale_diag_.shape(), 1);
    batch_shape_ =
        detail::broadcast_params(name_, {{"loc", loc_batch}, {"scale_diag", scale_batch}});
    event_shape_ = detail::broadcast_params(
        name_, {{"loc", Shape{loc_.shape()[-1]}}, {"scale_diag", Shape{scale_diag_.shape()[-1]}}});
    if (validate_args)
        detail::require(name_,
                        "scale_diag",
                        not_equal(scale_diag_, scalar(scale_diag_, 0)),
                        scale_diag_,
                        "must be non-zero (a singular scale).");
}

Tensor MultivariateNormalDiag::sample_impl(const Shape& sample_shape,
                                           std::optional<uint64_t> seed) const {
    const Shape shape = detail::concat(detail::concat(sample_shape, batch_shape_), event_shape_);
    return loc_ + scale_diag_ * random::normal(shape, 0, 1, dtype_, seed);
}

Tensor MultivariateNormalDiag::log_prob_impl(const Tensor& x) const {
    const Tensor z = (x - loc_) / scale_diag_;
    return reduce_sum(-0.5 * square(z) - log(abs(scale_diag_)) - kHalfLog2Pi + zeros_like(loc_),
                      -1);
}

Tensor MultivariateNormalDiag::entropy_impl() const {
    const Tensor per_dim = log(abs(scale_diag_)) + (0.5 + kHalfLog2Pi) + zeros_like(loc_);
    return reduce_sum(per_dim, -1);
}

Tensor MultivariateNormalDiag::mean_impl() const {
    return loc_ + zeros_like(scale_diag_);
}

Tensor MultivariateNormalDiag::variance_impl() const {
    return square(scale_diag_) + zeros_like(loc_);
}

Tensor MultivariateNormalDiag::stddev_impl() const {
    return abs(scale_diag_) + zeros_like(loc_);
}

Tensor MultivariateNormalDiag::mode_impl() const {
    return mean_impl();
}

Tensor MultivariateNormalDiag::covariance() const {
    const int64_t k = event_shape_[0];
    const Tensor var = variance();  // batch + [k]
    return expand_dims(var, -1) * eye(k, dtype_);
}

}  // namespace tapeflow::distributions
