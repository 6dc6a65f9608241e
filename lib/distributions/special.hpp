// Differentiable special functions and samplers for tf::distributions, as tensor functions. They
// compute on the host (special_math.hpp; a tensor on another device is copied) and enter the tape
// through tf::custom_gradient, with TensorFlow's gradients written with ops: lgamma' = digamma,
// digamma' = polygamma(1), polygamma(n)' = polygamma(n + 1), igamma's by x in closed form, by a
// TF's IgammaGradA, betainc's by x in closed form (none by a and b, as TF). A gradient TensorFlow
// does not differentiate again (IgammaGradA, RandomGammaGrad) raises LookupError when asked.
#pragma once

#include <cstdint>
#include <optional>

#include <tapeflow/core/shape.hpp>
#include <tapeflow/core/tensor.hpp>

namespace tapeflow::distributions::special {

Tensor lgamma(const Tensor& x);
Tensor digamma(const Tensor& x);
Tensor polygamma(int n, const Tensor& x);
/// lgamma(a) + lgamma(b) - lgamma(a + b).
Tensor lbeta(const Tensor& a, const Tensor& b);
/// Regularized incomplete gamma P(a, x) and Q(a, x) = 1 - P(a, x); a and x broadcast.
Tensor igamma(const Tensor& a, const Tensor& x);
Tensor igammac(const Tensor& a, const Tensor& x);
/// Regularized incomplete beta I_x(a, b); a, b and x broadcast.
Tensor betainc(const Tensor& a, const Tensor& b, const Tensor& x);

/// Gamma(alpha, 1) samples of shape sample_shape + alpha.shape (tf.random.gamma), one uniform per
/// sample (a tf::random::uniform op with `seed`) through the gamma quantile; differentiable in
/// alpha by the implicit reparameterization gradient (TF's RandomGammaGrad).
Tensor random_gamma(const Shape& sample_shape, const Tensor& alpha, std::optional<uint64_t> seed);
/// Poisson(rate) counts of shape sample_shape + rate.shape, in rate's dtype, one uniform per
/// sample through the Poisson quantile. Not differentiable (TF's RandomPoisson has no gradient).
Tensor random_poisson(const Shape& sample_shape, const Tensor& rate, std::optional<uint64_t> seed);

}  // namespace tapeflow::distributions::special
