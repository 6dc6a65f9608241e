// TF1's loss scaling for the tf::train optimizers:
// tf.compat.v1.train.experimental.MixedPrecisionLossScaleOptimizer with a dynamic or a fixed loss
// scale (tf.mixed_precision.experimental.DynamicLossScale / FixedLossScale).
// docs/mixed-precision.md.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <tapeflow/core/export.hpp>
#include <tapeflow/train/optimizer.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow::train {

/// TF1's DynamicLossScale: on finite gradients good_steps += 1, and when it reaches
/// increment_period the scale is multiplied by `multiplier` (kept if that overflows) and
/// good_steps resets; on an inf or NaN the scale is divided by `multiplier` (never below 1) and
/// good_steps resets.
struct DynamicLossScaleOptions {
    double initial_loss_scale = 32768.0;
    int64_t increment_period = 2000;
    double multiplier = 2.0;
};

/// compute_gradients scales the loss and returns the gradients unscaled; apply_gradients updates
/// the loss scale and applies them (incrementing global_step) only when all are finite. With a
/// fixed scale the gradients are always applied. The state is in "<name>/current_loss_scale"
/// (float32) and "<name>/good_steps" (int64), listed first by variables(); the slots, the
/// learning rate and iterations() are the wrapped optimizer's.
class MixedPrecisionLossScaleOptimizer : public Optimizer {
public:
    /// loss_scale="dynamic". InvalidArgumentError for a null optimizer or bad options.
    explicit MixedPrecisionLossScaleOptimizer(std::shared_ptr<Optimizer> opt,
                                              DynamicLossScaleOptions dynamic = {});
    /// A fixed loss scale (a positive finite number).
    MixedPrecisionLossScaleOptimizer(std::shared_ptr<Optimizer> opt, double fixed_loss_scale);

    /// The current loss scale.
    Variable loss_scale() const { return loss_scale_; }
    bool dynamic() const { return dynamic_; }

    std::vector<GradAndVar> compute_gradients(
        const std::function<Tensor()>& loss_fn,
        std::vector<Variable> var_list = {},
        GateGradients gate_gradients = GateGradients::gate_op,
        AggregationMethod aggregation_method = AggregationMethod::default_) override;
    void apply_gradients(const std::vector<GradAndVar>& grads_and_vars,
                         std::optional<Variable> global_step = {}) override;
    Tensor minimize(const std::function<Tensor()>& loss_fn,
                    std::vector<Variable> var_list = {},
                    std::optional<Variable> global_step = {},
                    GateGradients gate_gradients = GateGradients::gate_op,
                    AggregationMethod aggregation_method = AggregationMethod::default_) override;
    std::optional<Variable> get_slot(const Variable& var,
                                     std::string_view slot_name) const override;
    std::vector<std::string> get_slot_names() const override;
    int64_t iterations() const override;
    double current_learning_rate() const override;
    std::vector<Variable> variables() const override;

protected:
    void apply_dense(const Variable& var, const Tensor& grad) override;

private:
    std::shared_ptr<Optimizer> inner_;
    bool dynamic_;
    DynamicLossScaleOptions options_;
    Variable loss_scale_;
    Variable good_steps_;
};

}  // namespace tapeflow::train

TAPEFLOW_API_END
