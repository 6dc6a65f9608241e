// Learning-rate decay: the TF1 functions (value at a step) and the schedule objects, which call the
// same formulas. Computed in double.
#include <cmath>
#include <numbers>
#include <random>

#include <fmt/format.h>

#include <tapeflow/core/error.hpp>
#include <tapeflow/train/learning_rate.hpp>
#include <tapeflow/train/training_util.hpp>

namespace tapeflow::train {
namespace {

double progress(int64_t step, int64_t decay_steps, bool staircase) {
    if (decay_steps == 0) throw errors::InvalidArgumentError("decay_steps must not be 0");
    const double p = static_cast<double>(step) / static_cast<double>(decay_steps);
    return staircase ? std::floor(p) : p;
}

double cosine_part(int64_t step, int64_t decay_steps, double alpha) {
    const double s = static_cast<double>(std::min(step, decay_steps));
    const double cosine =
        0.5 * (1.0 + std::cos(std::numbers::pi * s / static_cast<double>(decay_steps)));
    return (1.0 - alpha) * cosine + alpha;
}

double linear_cosine(double learning_rate,
                     int64_t global_step,
                     int64_t decay_steps,
                     double num_periods,
                     double alpha,
                     double beta,
                     double noise) {
    const double s = static_cast<double>(std::min(global_step, decay_steps));
    const double d = static_cast<double>(decay_steps);
    const double linear = (d - s) / d + noise;
    const double cosine = 0.5 * (1.0 + std::cos(std::numbers::pi * 2.0 * num_periods * s / d));
    return learning_rate * ((alpha + linear) * cosine + beta);
}

// A LearningRate that evaluates `decay` at the variable's value each time it is asked.
template <class F>
LearningRate reading(const char* function, const Variable& step, F decay) {
    if (!step.defined() || (step.dtype() != DType::int32 && step.dtype() != DType::int64) ||
        step.shape().rank() != 0) {
        throw errors::InvalidArgumentError(
            fmt::format("{}: global_step must be an int32 or int64 scalar variable, got {}",
                        function,
                        step.defined() ? fmt::format("'{}' of dtype {} and shape {}",
                                                     step.name(),
                                                     dtype_name(step.dtype()),
                                                     step.shape().str())
                                       : std::string("an empty handle")));
    }
    return LearningRate([step, decay](int64_t) { return decay(global_step(step)); });
}

}  // namespace

double exponential_decay(double learning_rate,
                         int64_t global_step,
                         int64_t decay_steps,
                         double decay_rate,
                         bool staircase) {
    return learning_rate * std::pow(decay_rate, progress(global_step, decay_steps, staircase));
}

double piecewise_constant(int64_t x, std::vector<int64_t> boundaries, std::vector<double> values) {
    if (values.size() != boundaries.size() + 1) {
        throw errors::InvalidArgumentError(
            fmt::format("The length of boundaries should be 1 less than the length of values (got "
                        "{} boundaries "
                        "and {} values)",
                        boundaries.size(),
                        values.size()));
    }
    for (std::size_t i = 0; i < boundaries.size(); ++i) {
        if (x <= boundaries[i]) return values[i];
    }
    return values.back();
}

double polynomial_decay(double learning_rate,
                        int64_t global_step,
                        int64_t decay_steps,
                        double end_learning_rate,
                        double power,
                        bool cycle) {
    if (decay_steps == 0) throw errors::InvalidArgumentError("decay_steps must not be 0");
    double steps = static_cast<double>(decay_steps);
    double step = static_cast<double>(global_step);
    if (cycle) {
        const double multiplier = global_step == 0 ? 1.0 : std::ceil(step / steps);
        steps *= multiplier;
    } else {
        step = std::min(step, steps);
    }
    return (learning_rate - end_learning_rate) * std::pow(1.0 - step / steps, power) +
           end_learning_rate;
}

double natural_exp_decay(double learning_rate,
                         int64_t global_step,
                         int64_t decay_steps,
                         double decay_rate,
                         bool staircase) {
    return learning_rate * std::exp(-decay_rate * progress(global_step, decay_steps, staircase));
}

double inverse_time_decay(double learning_rate,
                          int64_t global_step,
                          int64_t decay_steps,
                          double decay_rate,
                          bool staircase) {
    return learning_rate / (1.0 + decay_rate * progress(global_step, decay_steps, staircase));
}

double cosine_decay(double learning_rate, int64_t global_step, int64_t decay_steps, double alpha) {
    if (decay_steps == 0) throw errors::InvalidArgumentError("decay_steps must not be 0");
    return learning_rate * cosine_part(global_step, decay_steps, alpha);
}

double cosine_decay_restarts(double learning_rate,
                             int64_t global_step,
                             int64_t first_decay_steps,
                             double t_mul,
                             double m_mul,
                             double alpha) {
    if (first_decay_steps == 0)
        throw errors::InvalidArgumentError("first_decay_steps must not be 0");
    double f = static_cast<double>(global_step) / static_cast<double>(first_decay_steps);
    double i = 0;
    if (t_mul == 1.0) {
        i = std::floor(f);
        f -= i;
    } else {
        i = std::floor(std::log(1.0 - f * (1.0 - t_mul)) / std::log(t_mul));
        const double sum_r = (1.0 - std::pow(t_mul, i)) / (1.0 - t_mul);
        f = (f - sum_r) / std::pow(t_mul, i);
    }
    const double m = std::pow(m_mul, i);
    const double cosine = 0.5 * m * (1.0 + std::cos(std::numbers::pi * f));
    return learning_rate * ((1.0 - alpha) * cosine + alpha);
}

double linear_cosine_decay(double learning_rate,
                           int64_t global_step,
                           int64_t decay_steps,
                           double num_periods,
                           double alpha,
                           double beta) {
    if (decay_steps == 0) throw errors::InvalidArgumentError("decay_steps must not be 0");
    return linear_cosine(learning_rate, global_step, decay_steps, num_periods, alpha, beta, 0.0);
}

double noisy_linear_cosine_decay(double learning_rate,
                                 int64_t global_step,
                                 int64_t decay_steps,
                                 double initial_variance,
                                 double variance_decay,
                                 double num_periods,
                                 double alpha,
                                 double beta) {
    if (decay_steps == 0) throw errors::InvalidArgumentError("decay_steps must not be 0");
    const double s = static_cast<double>(std::min(global_step, decay_steps));
    const double variance = initial_variance / std::pow(1.0 + s, variance_decay);
    thread_local std::mt19937_64 engine{std::random_device{}()};
    std::normal_distribution<double> noise(0.0, std::sqrt(variance));
    return linear_cosine(
        learning_rate, global_step, decay_steps, num_periods, alpha, beta, noise(engine));
}

double ExponentialDecay::operator()(int64_t step) const {
    return exponential_decay(initial_learning_rate, step, decay_steps, decay_rate, staircase);
}

double PiecewiseConstantDecay::operator()(int64_t step) const {
    return piecewise_constant(step, boundaries, values);
}

double PolynomialDecay::operator()(int64_t step) const {
    return polynomial_decay(
        initial_learning_rate, step, decay_steps, end_learning_rate, power, cycle);
}

double InverseTimeDecay::operator()(int64_t step) const {
    return inverse_time_decay(initial_learning_rate, step, decay_steps, decay_rate, staircase);
}

double NaturalExpDecay::operator()(int64_t step) const {
    return natural_exp_decay(learning_rate, step, decay_steps, decay_rate, staircase);
}

double CosineDecay::operator()(int64_t step) const {
    if (warmup_target && warmup_steps > 0) {
        if (step < warmup_steps) {  // linear warm-up from the initial rate to the target
            const double done = static_cast<double>(step) / static_cast<double>(warmup_steps);
            return initial_learning_rate + (*warmup_target - initial_learning_rate) * done;
        }
        return cosine_decay(*warmup_target, step - warmup_steps, decay_steps, alpha);
    }
    return cosine_decay(initial_learning_rate, step, decay_steps, alpha);
}

double CosineDecayRestarts::operator()(int64_t step) const {
    return cosine_decay_restarts(
        initial_learning_rate, step, first_decay_steps, t_mul, m_mul, alpha);
}

LearningRate exponential_decay(double learning_rate,
                               const Variable& global_step,
                               int64_t decay_steps,
                               double decay_rate,
                               bool staircase) {
    return reading("exponential_decay", global_step, [=](int64_t step) {
        return exponential_decay(learning_rate, step, decay_steps, decay_rate, staircase);
    });
}

LearningRate piecewise_constant(const Variable& x,
                                std::vector<int64_t> boundaries,
                                std::vector<double> values) {
    (void)piecewise_constant(0, boundaries, values);  // the argument checks, at the call as in TF
    return reading("piecewise_constant",
                   x,
                   [boundaries = std::move(boundaries), values = std::move(values)](int64_t step) {
                       return piecewise_constant(step, boundaries, values);
                   });
}

LearningRate polynomial_decay(double learning_rate,
                              const Variable& global_step,
                              int64_t decay_steps,
                              double end_learning_rate,
                              double power,
                              bool cycle) {
    return reading("polynomial_decay", global_step, [=](int64_t step) {
        return polynomial_decay(learning_rate, step, decay_steps, end_learning_rate, power, cycle);
    });
}

LearningRate natural_exp_decay(double learning_rate,
                               const Variable& global_step,
                               int64_t decay_steps,
                               double decay_rate,
                               bool staircase) {
    return reading("natural_exp_decay", global_step, [=](int64_t step) {
        return natural_exp_decay(learning_rate, step, decay_steps, decay_rate, staircase);
    });
}

LearningRate inverse_time_decay(double learning_rate,
                                const Variable& global_step,
                                int64_t decay_steps,
                                double decay_rate,
                                bool staircase) {
    return reading("inverse_time_decay", global_step, [=](int64_t step) {
        return inverse_time_decay(learning_rate, step, decay_steps, decay_rate, staircase);
    });
}

LearningRate cosine_decay(double learning_rate,
                          const Variable& global_step,
                          int64_t decay_steps,
                          double alpha) {
    return reading("cosine_decay", global_step, [=](int64_t step) {
        return cosine_decay(learning_rate, step, decay_steps, alpha);
    });
}

LearningRate cosine_decay_restarts(double learning_rate,
                                   const Variable& global_step,
                                   int64_t first_decay_steps,
                                   double t_mul,
                                   double m_mul,
                                   double alpha) {
    return reading("cosine_decay_restarts", global_step, [=](int64_t step) {
        return cosine_decay_restarts(learning_rate, step, first_decay_steps, t_mul, m_mul, alpha);
    });
}

LearningRate linear_cosine_decay(double learning_rate,
                                 const Variable& global_step,
                                 int64_t decay_steps,
                                 double num_periods,
                                 double alpha,
                                 double beta) {
    return reading("linear_cosine_decay", global_step, [=](int64_t step) {
        return linear_cosine_decay(learning_rate, step, decay_steps, num_periods, alpha, beta);
    });
}

}  // namespace tapeflow::train
