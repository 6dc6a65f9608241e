// Moving averages: tf.train.ExponentialMovingAverage (shadow variables,
// num_updates rule, names, variables_to_restore), TF1's assign_moving_average (zero-debiased by
// default) and weighted_moving_average.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <tapeflow/autograd/variable.hpp>
#include <tapeflow/core/export.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow::train {

struct EmaOptions {
    /// An int64 scalar variable: the decay becomes min(decay, (1 + n) / (10 + n)).
    std::optional<Variable> num_updates = {};
    /// Only debiases shadows of plain tensors in TensorFlow; variables are never debiased.
    bool zero_debias = false;
    std::string name = "ExponentialMovingAverage";
};

/// Keeps a shadow variable per variable: shadow -= (1 - d)·(shadow - variable).
///
///     tf::train::ExponentialMovingAverage ema(0.999);
///     ema.apply({w, b});                       // after each training step
///     auto w_avg = ema.average(w)->value();
class ExponentialMovingAverage {
public:
    explicit ExponentialMovingAverage(double decay, EmaOptions options = {});

    /// Creates the shadows of variables seen for the first time (initial value: the variable's
    /// current value), then updates every listed shadow once, including new ones (eager TF).
    /// Empty var_list: every trainable variable. Non-floating variables: InvalidArgumentError.
    void apply(const std::vector<Variable>& var_list = {});
    /// The shadow variable, or nullopt.
    std::optional<Variable> average(const Variable& var) const;
    /// The shadow's name: "<var name>/<ema name>" (what it would be when there is none yet).
    std::string average_name(const Variable& var) const;
    /// {average_name(v): v} for the trainable variables and those with shadows, {name: v} for
    /// every other global variable: restoring a checkpoint through it loads averages into the
    /// model.
    std::map<std::string, Variable> variables_to_restore() const;
    const std::string& name() const { return options_.name; }
    double decay() const { return decay_; }

private:
    double decay_;
    EmaOptions options_;
    // Held by apply (shadow creation and updates) and by the readers of shadows_: an average
    // shared by threads creates each shadow once and applies one update at a time.
    mutable std::mutex mutex_;
    std::map<int64_t, Variable> shadows_;  // by variable id
};

/// variable <- variable - (variable - value)(1 - decay). With zero_debias (the default, as in TF1)
/// the average is kept in a hidden "<var>/biased" variable with a "<var>/local_step" counter and
/// the variable becomes biased / (1 - decay^local_step) (its own prior value is ignored).
void assign_moving_average(Variable& variable,
                           const Tensor& value,
                           double decay,
                           bool zero_debias = true);

/// TF1 weighted_moving_average as an object: non-debiased averages of value·weight and of weight
/// (both start at 0); update() returns their ratio.
class WeightedMovingAverage {
public:
    WeightedMovingAverage(double decay, const Shape& shape, DType dtype = DType::float32);
    Tensor update(const Tensor& value, const Tensor& weight);

private:
    double decay_;
    Variable numerator_, denominator_;
};

}  // namespace tapeflow::train

TAPEFLOW_API_END
