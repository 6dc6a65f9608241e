// tf::distributions: probability distributions with TensorFlow Probability's semantics and names
// (tfp.distributions, formerly tf.contrib.distributions). Every method is written with tapeflow's
// ops, so gradients flow through log_prob, sample (where the distribution is reparameterized),
// entropy, the statistics and kl_divergence. docs/distributions.md has the details.
//
// Shapes as in TFP: a distribution holds a batch of independent distributions (batch_shape, the
// broadcast of its parameters' shapes), each over events of event_shape. sample(sample_shape) has
// shape sample_shape + batch_shape + event_shape; log_prob(x) broadcasts x against
// batch_shape + event_shape and returns one value per event.
#pragma once

#include <concepts>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <tapeflow/autograd/variable.hpp>
#include <tapeflow/core/dtype.hpp>
#include <tapeflow/core/export.hpp>
#include <tapeflow/core/shape.hpp>
#include <tapeflow/core/tensor.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow::distributions {

/// TFP's reparameterization_type: whether sample() is a differentiable function of the parameters.
enum class ReparameterizationType { fully_reparameterized, not_reparameterized };

/// A distribution parameter: a Tensor, a Variable (read when the distribution is built, so build
/// it inside the GradientTape that differentiates it) or a C++ number. Numbers take the dtype of
/// the distribution's tensor parameters (float32 when there are none), as TFP converts Python
/// floats; tensor parameters must share one floating-point dtype.
class Param {
public:
    Param(Tensor value) : tensor_(std::move(value)) {}        // NOLINT: implicit by design
    Param(const Variable& value) : tensor_(value.value()) {}  // NOLINT: implicit by design
    Param(double value) : number_(value) {}                   // NOLINT: implicit by design
    bool is_tensor() const { return tensor_.defined(); }
    const Tensor& tensor() const { return tensor_; }
    double number() const { return number_; }

private:
    Tensor tensor_;
    double number_ = 0;
};

/// The base class. Methods a distribution does not define raise UnimplementedError
/// ("cdf is not implemented: Dirichlet"), as TFP raises NotImplementedError.
class Distribution {
public:
    virtual ~Distribution() = default;
    /// What every distribution's constructor takes besides its parameters.
    struct Common {
        std::string name;
        bool validate_args;
        bool allow_nan_stats;
        ReparameterizationType reparameterization;
    };

    const std::string& name() const { return name_; }
    /// The dtype of samples (int32 for Bernoulli and Categorical by default).
    DType dtype() const { return dtype_; }
    bool validate_args() const { return validate_args_; }
    bool allow_nan_stats() const { return allow_nan_stats_; }
    ReparameterizationType reparameterization_type() const { return reparameterization_; }
    const Shape& batch_shape() const { return batch_shape_; }
    const Shape& event_shape() const { return event_shape_; }

    /// Samples of shape sample_shape + batch_shape + event_shape. `seed` is an op seed with
    /// TensorFlow's semantics (tf::random, <tapeflow/random.hpp>): it pairs with the global seed.
    Tensor sample(const Shape& sample_shape = {}, std::optional<uint64_t> seed = {}) const;
    /// n samples: shape [n] + batch_shape + event_shape. A template so that `sample({}, seed)`
    /// means sample_shape () (one sample per batch member), as in TFP, not n = 0.
    template <std::integral I>
    Tensor sample(I n, std::optional<uint64_t> seed = {}) const {
        return sample(Shape{static_cast<int64_t>(n)}, seed);
    }

    Tensor log_prob(const Tensor& value) const;
    Tensor prob(const Tensor& value) const;
    Tensor cdf(const Tensor& value) const;
    Tensor log_cdf(const Tensor& value) const;
    /// 1 - cdf(value).
    Tensor survival_function(const Tensor& value) const;
    Tensor entropy() const;
    Tensor mean() const;
    Tensor variance() const;
    Tensor stddev() const;
    Tensor mode() const;
    /// kl_divergence(*this, other).
    Tensor kl_divergence(const Distribution& other) const;

protected:
    explicit Distribution(Common common);

    // Implementations: value is already converted to the distribution's parameter dtype
    // (Bernoulli and Categorical: float too). The defaults raise UnimplementedError.
    virtual Tensor sample_impl(const Shape& sample_shape, std::optional<uint64_t> seed) const = 0;
    virtual Tensor log_prob_impl(const Tensor& value) const = 0;
    virtual Tensor prob_impl(const Tensor& value) const;
    virtual Tensor cdf_impl(const Tensor& value) const;
    virtual Tensor log_cdf_impl(const Tensor& value) const;
    virtual Tensor entropy_impl() const;
    virtual Tensor mean_impl() const;
    virtual Tensor variance_impl() const;
    virtual Tensor stddev_impl() const;
    virtual Tensor mode_impl() const;
    /// Raises InvalidArgumentError when validate_args is set and a value lies outside the support.
    virtual void check_support(const Tensor& value) const;

    [[noreturn]] void unimplemented(const char* method) const;
    /// The parameter dtype (the dtype log_prob and the statistics return).
    DType param_dtype() const { return param_dtype_; }
    Tensor to_param_dtype(const Tensor& value, const char* method) const;

    std::string name_;
    DType dtype_ = DType::float32;
    DType param_dtype_ = DType::float32;
    bool validate_args_;
    bool allow_nan_stats_;
    ReparameterizationType reparameterization_;
    Shape batch_shape_;
    Shape event_shape_;
};

/// Normal(loc, scale). Reparameterized.
class Normal : public Distribution {
public:
    Normal(Param loc,
           Param scale,
           bool validate_args = false,
           bool allow_nan_stats = true,
           std::string name = "Normal");
    const Tensor& loc() const { return loc_; }
    const Tensor& scale() const { return scale_; }

protected:
    Tensor sample_impl(const Shape& sample_shape, std::optional<uint64_t> seed) const override;
    Tensor log_prob_impl(const Tensor& x) const override;
    Tensor cdf_impl(const Tensor& x) const override;
    Tensor log_cdf_impl(const Tensor& x) const override;
    Tensor entropy_impl() const override;
    Tensor mean_impl() const override;
    Tensor variance_impl() const override;
    Tensor stddev_impl() const override;
    Tensor mode_impl() const override;

private:
    Tensor loc_, scale_;
};

/// Bernoulli(logits or probs: exactly one), samples of `dtype` (0 or 1). Not reparameterized.
class Bernoulli : public Distribution {
public:
    Bernoulli(std::optional<Param> logits,
              std::optional<Param> probs = {},
              DType dtype = DType::int32,
              bool validate_args = false,
              bool allow_nan_stats = true,
              std::string name = "Bernoulli");
    /// The logits (log(p) - log(1 - p) when built from probs).
    Tensor logits() const;
    /// The probabilities (sigmoid(logits) when built from logits).
    Tensor probs() const;

protected:
    Tensor sample_impl(const Shape& sample_shape, std::optional<uint64_t> seed) const override;
    Tensor log_prob_impl(const Tensor& x) const override;
    Tensor cdf_impl(const Tensor& x) const override;
    Tensor entropy_impl() const override;
    Tensor mean_impl() const override;
    Tensor variance_impl() const override;
    Tensor mode_impl() const override;
    void check_support(const Tensor& x) const override;

private:
    Tensor logits_, probs_;  // the one given
};

/// Categorical over {0, ..., K-1}: logits or probs [..., K] (exactly one). Not reparameterized.
class Categorical : public Distribution {
public:
    Categorical(std::optional<Param> logits,
                std::optional<Param> probs = {},
                DType dtype = DType::int32,
                bool validate_args = false,
                bool allow_nan_stats = true,
                std::string name = "Categorical");
    Tensor logits() const;
    Tensor probs() const;
    int64_t num_categories() const { return num_categories_; }

protected:
    Tensor sample_impl(const Shape& sample_shape, std::optional<uint64_t> seed) const override;
    Tensor log_prob_impl(const Tensor& k) const override;
    Tensor cdf_impl(const Tensor& k) const override;
    Tensor entropy_impl() const override;
    Tensor mean_impl() const override;
    Tensor variance_impl() const override;
    Tensor mode_impl() const override;
    void check_support(const Tensor& k) const override;

private:
    Tensor log_probs() const;
    Tensor logits_, probs_;
    int64_t num_categories_ = 0;
};

/// Uniform on [low, high]. Reparameterized.
class Uniform : public Distribution {
public:
    Uniform(Param low = 0.0,
            Param high = 1.0,
            bool validate_args = false,
            bool allow_nan_stats = true,
            std::string name = "Uniform");
    const Tensor& low() const { return low_; }
    const Tensor& high() const { return high_; }

protected:
    Tensor sample_impl(const Shape& sample_shape, std::optional<uint64_t> seed) const override;
    Tensor log_prob_impl(const Tensor& x) const override;
    Tensor prob_impl(const Tensor& x) const override;
    Tensor cdf_impl(const Tensor& x) const override;
    Tensor entropy_impl() const override;
    Tensor mean_impl() const override;
    Tensor variance_impl() const override;
    Tensor stddev_impl() const override;

private:
    Tensor low_, high_;
};

/// Multivariate normal with a diagonal scale: loc [..., k], scale_diag [..., k]; event_shape [k].
/// Reparameterized.
class MultivariateNormalDiag : public Distribution {
public:
    MultivariateNormalDiag(Param loc,
                           Param scale_diag,
                           bool validate_args = false,
                           bool allow_nan_stats = true,
                           std::string name = "MultivariateNormalDiag");
    const Tensor& loc() const { return loc_; }
    const Tensor& scale_diag() const { return scale_diag_; }
    /// The covariance matrices [..., k, k] (diag(scale_diag^2)).
    Tensor covariance() const;

protected:
    Tensor sample_impl(const Shape& sample_shape, std::optional<uint64_t> seed) const override;
    Tensor log_prob_impl(const Tensor& x) const override;
    Tensor entropy_impl() const override;
    Tensor mean_impl() const override;
    Tensor variance_impl() const override;
    Tensor stddev_impl() const override;
    Tensor mode_impl() const override;

private:
    Tensor loc_, scale_diag_;
};

/// Gamma(concentration, rate). Reparameterized by implicit gradients (TF's RandomGammaGrad).
class Gamma : public Distribution {
public:
    Gamma(Param concentration,
          Param rate,
          bool validate_args = false,
          bool allow_nan_stats = true,
          std::string name = "Gamma");
    const Tensor& concentration() const { return concentration_; }
    const Tensor& rate() const { return rate_; }

protected:
    Tensor sample_impl(const Shape& sample_shape, std::optional<uint64_t> seed) const override;
    Tensor log_prob_impl(const Tensor& x) const override;
    Tensor cdf_impl(const Tensor& x) const override;
    Tensor entropy_impl() const override;
    Tensor mean_impl() const override;
    Tensor variance_impl() const override;
    Tensor stddev_impl() const override;
    Tensor mode_impl() const override;
    void check_support(const Tensor& x) const override;

    Tensor concentration_, rate_;
};

/// Exponential(rate): Gamma(1, rate), with TFP's sampler (-log(u) / rate) and cdf. Reparameterized.
/// mode() is 0 (TFP inherits Gamma's rule, NaN unless concentration > 1).
class Exponential : public Gamma {
public:
    Exponential(Param rate,
                bool validate_args = false,
                bool allow_nan_stats = true,
                std::string name = "Exponential");

protected:
    Tensor sample_impl(const Shape& sample_shape, std::optional<uint64_t> seed) const override;
    Tensor cdf_impl(const Tensor& x) const override;
    Tensor mode_impl() const override;
};

/// Beta(concentration1, concentration0) on [0, 1]. Reparameterized by implicit gradients.
class Beta : public Distribution {
public:
    Beta(Param concentration1,
         Param concentration0,
         bool validate_args = false,
         bool allow_nan_stats = true,
         std::string name = "Beta");
    const Tensor& concentration1() const { return concentration1_; }
    const Tensor& concentration0() const { return concentration0_; }

protected:
    Tensor sample_impl(const Shape& sample_shape, std::optional<uint64_t> seed) const override;
    Tensor log_prob_impl(const Tensor& x) const override;
    Tensor cdf_impl(const Tensor& x) const override;
    Tensor entropy_impl() const override;
    Tensor mean_impl() const override;
    Tensor variance_impl() const override;
    Tensor mode_impl() const override;
    void check_support(const Tensor& x) const override;

private:
    Tensor concentration1_, concentration0_;
};

/// Dirichlet(concentration [..., K]) on the simplex; event_shape [K]. Reparameterized by implicit
/// gradients.
class Dirichlet : public Distribution {
public:
    Dirichlet(Param concentration,
              bool validate_args = false,
              bool allow_nan_stats = true,
              std::string name = "Dirichlet");
    const Tensor& concentration() const { return concentration_; }

protected:
    Tensor sample_impl(const Shape& sample_shape, std::optional<uint64_t> seed) const override;
    Tensor log_prob_impl(const Tensor& x) const override;
    Tensor entropy_impl() const override;
    Tensor mean_impl() const override;
    Tensor variance_impl() const override;
    Tensor mode_impl() const override;
    void check_support(const Tensor& x) const override;

private:
    Tensor concentration_;
};

/// Laplace(loc, scale). Reparameterized.
class Laplace : public Distribution {
public:
    Laplace(Param loc,
            Param scale,
            bool validate_args = false,
            bool allow_nan_stats = true,
            std::string name = "Laplace");
    const Tensor& loc() const { return loc_; }
    const Tensor& scale() const { return scale_; }

protected:
    Tensor sample_impl(const Shape& sample_shape, std::optional<uint64_t> seed) const override;
    Tensor log_prob_impl(const Tensor& x) const override;
    Tensor cdf_impl(const Tensor& x) const override;
    Tensor log_cdf_impl(const Tensor& x) const override;
    Tensor entropy_impl() const override;
    Tensor mean_impl() const override;
    Tensor variance_impl() const override;
    Tensor stddev_impl() const override;
    Tensor mode_impl() const override;

private:
    Tensor loc_, scale_;
};

/// Poisson(rate or log_rate: exactly one); samples are float counts of the parameter dtype.
/// Not reparameterized.
class Poisson : public Distribution {
public:
    Poisson(std::optional<Param> rate,
            std::optional<Param> log_rate = {},
            bool validate_args = false,
            bool allow_nan_stats = true,
            std::string name = "Poisson");
    Tensor rate() const;
    Tensor log_rate() const;

protected:
    Tensor sample_impl(const Shape& sample_shape, std::optional<uint64_t> seed) const override;
    Tensor log_prob_impl(const Tensor& x) const override;
    Tensor cdf_impl(const Tensor& x) const override;
    Tensor mean_impl() const override;
    Tensor variance_impl() const override;
    Tensor mode_impl() const override;
    void check_support(const Tensor& x) const override;

private:
    Tensor rate_, log_rate_;  // the one given
};

/// KL(a || b) for the pairs TFP registers: Normal, Bernoulli, Categorical, Uniform,
/// MultivariateNormalDiag, Beta, Gamma (and Exponential, a Gamma), Dirichlet and Laplace, each with
/// its own kind. One value per batch member. Other pairs raise UnimplementedError ("No
/// KL(distribution_a || distribution_b) registered for distribution_a type Normal and
/// distribution_b type Gamma"). With allow_nan_stats = false a NaN in the result raises
/// InvalidArgumentError.
Tensor kl_divergence(const Distribution& a, const Distribution& b, bool allow_nan_stats = true);

}  // namespace tapeflow::distributions

TAPEFLOW_API_END
