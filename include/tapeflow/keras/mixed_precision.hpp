// Keras mixed precision (tf::keras::mixed_precision): dtype policies (dtype_policy.hpp) and Keras
// 3's LossScaleOptimizer. docs/mixed-precision.md.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <tapeflow/core/dtype.hpp>
#include <tapeflow/core/export.hpp>
#include <tapeflow/keras/dtype_policy.hpp>
#include <tapeflow/keras/optimizers.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow::keras::mixed_precision {

/// Keras 3's dynamic loss scaling around a Keras optimizer. A training step multiplies its loss by
/// scale_loss() before differentiating; apply_gradients divides the gradients by the scale, then:
/// if any gradient has an inf or NaN, the step is skipped (the inner optimizer does not run and its
/// iterations do not advance) and the scale is halved; else the inner optimizer applies them and,
/// after dynamic_growth_steps finite steps in a row, the scale is doubled. The state lives in two
/// variables, "<name>/dynamic_scale" (float32) and "<name>/step_counter" (int64), listed first by
/// variables(). compute_gradients and minimize scale the loss themselves (compute_gradients returns
/// the gradients of the scaled loss, which apply_gradients unscales). iterations(), the slots and
/// the learning rate are the inner optimizer's.
///
///     auto opt = std::make_shared<LossScaleOptimizer>(std::make_shared<optimizers::Adam>());
///     tf::GradientTape tape;
///     tf::Tensor loss = model(x, true) ...;
///     auto grads = tape.gradient(opt->scale_loss(loss), vars);
///     opt->apply_gradients(pairs(grads, vars));       // unscaled, maybe skipped
class LossScaleOptimizer : public optimizers::Optimizer {
public:
    /// InvalidArgumentError for a null inner optimizer, initial_scale not a positive finite number,
    /// or dynamic_growth_steps < 1.
    LossScaleOptimizer(std::shared_ptr<optimizers::Optimizer> inner,
                       double initial_scale = 32768.0,
                       int64_t dynamic_growth_steps = 2000);

    /// loss * the current scale (in the loss's dtype).
    Tensor scale_loss(const Tensor& loss) const;
    /// The current loss scale (a float32 scalar variable).
    Variable dynamic_scale() const { return dynamic_scale_; }
    /// Finite steps since the scale last changed (an int64 scalar variable).
    Variable step_counter() const { return step_counter_; }
    int64_t dynamic_growth_steps() const { return growth_steps_; }
    optimizers::Optimizer& inner_optimizer() const { return *inner_; }

    std::vector<train::GradAndVar> compute_gradients(
        const std::function<Tensor()>& loss_fn,
        std::vector<Variable> var_list = {},
        train::GateGradients gate_gradients = train::GateGradients::gate_op,
        AggregationMethod aggregation_method = AggregationMethod::default_) override;
    void apply_gradients(const std::vector<train::GradAndVar>& grads_and_vars,
                         std::optional<Variable> global_step = {}) override;
    /// Returns the loss, unscaled.
    Tensor minimize(const std::function<Tensor()>& loss_fn,
                    std::vector<Variable> var_list = {},
                    std::optional<Variable> global_step = {},
                    train::GateGradients gate_gradients = train::GateGradients::gate_op,
                    AggregationMethod aggregation_method = AggregationMethod::default_) override;
    std::optional<Variable> get_slot(const Variable& var,
                                     std::string_view slot_name) const override;
    std::vector<std::string> get_slot_names() const override;
    int64_t iterations() const override;
    double current_learning_rate() const override;
    void set_learning_rate(train::LearningRate learning_rate) override;
    std::vector<Variable> variables() const override;

protected:
    void apply_dense(const Variable& var, const Tensor& grad) override;

private:
    std::shared_ptr<optimizers::Optimizer> inner_;
    int64_t growth_steps_;
    Variable dynamic_scale_;
    Variable step_counter_;
};

}  // namespace tapeflow::keras::mixed_precision

TAPEFLOW_API_END
