// Uniform on [low, high] (tfp.distributions uniform.py): samples low + (high - low) * u.
#include <cmath>
#include <limits>

#include <tapeflow/ops/array.hpp>
#include <tapeflow/ops/creation.hpp>
#include <tapeflow/ops/math.hpp>
#include <tapeflow/random.hpp>

#include "distributions/common.hpp"

namespace tapeflow::distributions {

using detail::scalar;

Uniform::Uniform(Param low, Param high, bool validate_args, bool allow_nan_stats, std::string name)
    : Distribution({std::move(name),
                    validate_args,
                    allow_nan_stats,
                    ReparameterizationType::fully_reparameterized}) {
    const auto p = detail::resolve_pair(name_, "low", low, "high", high);
    low_ = p.first;
    high_ = p.second;
    dtype_ = param_dtype_ = low_.dtype();
    batch_shape_ = p.batch_shape;
    if (validate_args)
        detail::require(name_, "low", less(low_, high_), low_, "must be less than `high`.");
}

Tensor Uniform::sample_impl(const Shape& sample_shape, std::optional<uint64_t> seed) const {
    const Tensor u =
        random::uniform(detail::concat(sample_shape, batch_shape_), 0, 1, dtype_, seed);
    return low_ + (high_ - low_) * u;
}

Tensor Uniform::prob_impl(const Tensor& x) const {
    const Tensor density = 1.0 / (high_ - low_) + zeros_like(x);
    const Tensor outside = logical_or(less(x, low_), greater(x, high_));
    return where(outside, zeros_like(density), density);
}

Tensor Uniform::log_prob_impl(const Tensor& x) const {
    const Tensor lp = -log(high_ - low_) + zeros_like(x);
    const Tensor outside = logical_or(less(x, low_), greater(x, high_));
    return where(
        outside, scalar(lp, -std::numeric_limits<double>::infinity()) + zeros_like(lp), lp);
}

Tensor Uniform::cdf_impl(const Tensor& x) const {
    const Tensor c = (x - low_) / (high_ - low_);
    return where(less(x, low_), zeros_like(c), where(greater_equal(x, high_), ones_like(c), c));
}

Tensor Uniform::entropy_impl() const {
    return log(high_ - low_);
}

Tensor Uniform::mean_impl() const {
    return (low_ + high_) / 2.0;
}

Tensor Uniform::variance_impl() const {
    return square(high_ - low_) / 12.0;
}

Tensor Uniform::stddev_impl() const {
    return (high_ - low_) / std::sqrt(12.0);
}

}  // namespace tapeflow::distributions
