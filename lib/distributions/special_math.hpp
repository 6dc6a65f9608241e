// Host (double) special functions for tf::distributions: digamma, polygamma, the regularized
// incomplete gamma and beta functions and the gamma quantile, with the derivatives of igamma in its
// first argument that TensorFlow's IgammaGradA and RandomGammaGrad compute. special.cpp wraps them
// as differentiable tensor functions.
#pragma once

namespace tapeflow::distributions::special_math {

/// log |Gamma(x)| (std::lgamma without its write to the global signgam: thread-safe).
double log_gamma(double x);
/// psi(x) = d/dx lgamma(x); NaN at the poles (x = 0, -1, -2, ...).
double digamma(double x);
/// psi^(n)(x) for n >= 0 (n = 0: digamma); +inf at the poles for odd n, NaN for even.
double polygamma(int n, double x);
/// Regularized lower incomplete gamma P(a, x) (tf.math.igamma); NaN for a <= 0 or x < 0.
double igamma(double a, double x);
/// Regularized upper incomplete gamma Q(a, x) = 1 - P(a, x) (tf.math.igammac), accurate where
/// P is close to 1.
double igammac(double a, double x);
/// dP(a, x) / da (TensorFlow's IgammaGradA).
double igamma_grad_a(double a, double x);
/// d x / d a for a sample x of Gamma(a, 1) held at a fixed quantile: -(dP/da) / (dP/dx)
/// (TensorFlow's RandomGammaGrad, the implicit reparameterization gradient). 0 where x == 0.
double random_gamma_grad(double a, double x);
/// The x with P(a, x) = u, 0 < u < 1 (solved in log x by safeguarded Newton steps).
double gamma_quantile(double a, double u);
/// Regularized incomplete beta I_x(a, b) (tf.math.betainc); NaN outside a, b > 0, 0 <= x <= 1.
double betainc(double a, double b, double x);
/// The smallest k >= 0 with Poisson(rate) CDF(k) >= u (inverse-CDF sampling).
double poisson_quantile(double rate, double u);

}  // namespace tapeflow::distributions::special_math
