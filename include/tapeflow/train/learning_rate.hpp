// Learning rates: tf::train::LearningRate (a constant, a schedule or any callable of the step), the
// TF1 decay functions evaluated at a step, and the schedule objects (Keras' LearningRateSchedule
// classes as aggregates).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <type_traits>
#include <vector>

#include <tapeflow/autograd/variable.hpp>
#include <tapeflow/core/export.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow::train {

/// What an optimizer's learning rate is: a double, or a callable double(int64_t step) (a schedule
/// below, or a lambda). Optimizers evaluate it at every apply_gradients (at the global step when
/// one is given, else at iterations()).
class LearningRate {
public:
    LearningRate(double value) : value_(value) {}  // NOLINT(google-explicit-constructor)
    template <class F>
    requires(!std::is_arithmetic_v<F> && std::is_invocable_r_v<double, const F&, int64_t>)
        LearningRate(F schedule)  // NOLINT(google-explicit-constructor)
        : schedule_(
              [f = std::move(schedule)](int64_t step) { return static_cast<double>(f(step)); }) {}

    /// The learning rate at `step`.
    double operator()(int64_t step) const { return schedule_ ? schedule_(step) : value_; }
    /// True for a plain number (validated by the optimizers' constructors).
    bool is_constant() const { return !schedule_; }

private:
    double value_ = 0;
    std::function<double(int64_t)> schedule_;
};

// ---- TF1 decay functions: the value at `global_step` ----

double exponential_decay(double learning_rate,
                         int64_t global_step,
                         int64_t decay_steps,
                         double decay_rate,
                         bool staircase = false);
/// values[0] for x <= boundaries[0], values[i] for boundaries[i-1] < x <= boundaries[i], the last
/// value beyond. InvalidArgumentError unless values.size() == boundaries.size() + 1.
double piecewise_constant(int64_t x, std::vector<int64_t> boundaries, std::vector<double> values);
double polynomial_decay(double learning_rate,
                        int64_t global_step,
                        int64_t decay_steps,
                        double end_learning_rate = 0.0001,
                        double power = 1.0,
                        bool cycle = false);
double natural_exp_decay(double learning_rate,
                         int64_t global_step,
                         int64_t decay_steps,
                         double decay_rate,
                         bool staircase = false);
double inverse_time_decay(double learning_rate,
                          int64_t global_step,
                          int64_t decay_steps,
                          double decay_rate,
                          bool staircase = false);
double cosine_decay(double learning_rate,
                    int64_t global_step,
                    int64_t decay_steps,
                    double alpha = 0.0);
double cosine_decay_restarts(double learning_rate,
                             int64_t global_step,
                             int64_t first_decay_steps,
                             double t_mul = 2.0,
                             double m_mul = 1.0,
                             double alpha = 0.0);
double linear_cosine_decay(double learning_rate,
                           int64_t global_step,
                           int64_t decay_steps,
                           double num_periods = 0.5,
                           double alpha = 0.0,
                           double beta = 0.001);
/// linear_cosine_decay with Gaussian noise of variance initial_variance / (1 + step)^variance_decay
/// added to the linear part (random; `seed` makes it reproducible).
double noisy_linear_cosine_decay(double learning_rate,
                                 int64_t global_step,
                                 int64_t decay_steps,
                                 double initial_variance = 1.0,
                                 double variance_decay = 0.55,
                                 double num_periods = 0.5,
                                 double alpha = 0.0,
                                 double beta = 0.001);

// ---- TF1 decay functions of the global-step Variable ----
// As tf.compat.v1.train.*_decay in TensorFlow 2 eager, which return a callable: the LearningRate
// reads `global_step` (an int32 or int64 scalar Variable) at every evaluation, so an optimizer
// given it decays as the step grows. InvalidArgumentError for another dtype or shape.

LearningRate exponential_decay(double learning_rate,
                               const Variable& global_step,
                               int64_t decay_steps,
                               double decay_rate,
                               bool staircase = false);
LearningRate piecewise_constant(const Variable& x,
                                std::vector<int64_t> boundaries,
                                std::vector<double> values);
LearningRate polynomial_decay(double learning_rate,
                              const Variable& global_step,
                              int64_t decay_steps,
                              double end_learning_rate = 0.0001,
                              double power = 1.0,
                              bool cycle = false);
LearningRate natural_exp_decay(double learning_rate,
                               const Variable& global_step,
                               int64_t decay_steps,
                               double decay_rate,
                               bool staircase = false);
LearningRate inverse_time_decay(double learning_rate,
                                const Variable& global_step,
                                int64_t decay_steps,
                                double decay_rate,
                                bool staircase = false);
LearningRate cosine_decay(double learning_rate,
                          const Variable& global_step,
                          int64_t decay_steps,
                          double alpha = 0.0);
LearningRate cosine_decay_restarts(double learning_rate,
                                   const Variable& global_step,
                                   int64_t first_decay_steps,
                                   double t_mul = 2.0,
                                   double m_mul = 1.0,
                                   double alpha = 0.0);
LearningRate linear_cosine_decay(double learning_rate,
                                 const Variable& global_step,
                                 int64_t decay_steps,
                                 double num_periods = 0.5,
                                 double alpha = 0.0,
                                 double beta = 0.001);

// ---- schedule objects (Keras' parameters in Keras' order), each usable as a LearningRate ----

struct ExponentialDecay {
    double initial_learning_rate;
    int64_t decay_steps;
    double decay_rate;
    bool staircase = false;
    double operator()(int64_t step) const;
};

struct PiecewiseConstantDecay {
    std::vector<int64_t> boundaries;
    std::vector<double> values;
    double operator()(int64_t step) const;
};

struct PolynomialDecay {
    double initial_learning_rate;
    int64_t decay_steps;
    double end_learning_rate = 0.0001;
    double power = 1.0;
    bool cycle = false;
    double operator()(int64_t step) const;
};

struct InverseTimeDecay {
    double initial_learning_rate;
    int64_t decay_steps;
    double decay_rate;
    bool staircase = false;
    double operator()(int64_t step) const;
};

/// The TF1 natural_exp_decay's parameters.
struct NaturalExpDecay {
    double learning_rate;
    int64_t decay_steps;
    double decay_rate;
    bool staircase = false;
    double operator()(int64_t step) const;
};

/// Keras CosineDecay: with warmup_steps > 0 and a warmup_target, the rate first rises linearly
/// from initial_learning_rate to warmup_target, then decays from warmup_target.
struct CosineDecay {
    double initial_learning_rate;
    int64_t decay_steps;
    double alpha = 0.0;
    std::optional<double> warmup_target = {};
    int64_t warmup_steps = 0;
    double operator()(int64_t step) const;
};

struct CosineDecayRestarts {
    double initial_learning_rate;
    int64_t first_decay_steps;
    double t_mul = 2.0;
    double m_mul = 1.0;
    double alpha = 0.0;
    double operator()(int64_t step) const;
};

}  // namespace tapeflow::train

TAPEFLOW_API_END
