// Keras 3's LossScaleOptimizer (keras/src/optimizers/loss_scale_optimizer.py).
#include <cmath>

#include <tapeflow/core/error.hpp>
#include <tapeflow/keras/mixed_precision.hpp>
#include <tapeflow/ops/creation.hpp>
#include <tapeflow/ops/math.hpp>

#include "train/loss_scaling.hpp"
#include "train/traced_apply.hpp"

namespace tapeflow::keras::mixed_precision {
namespace {

constexpr const char* kWho = "LossScaleOptimizer";

std::shared_ptr<optimizers::Optimizer> checked(std::shared_ptr<optimizers::Optimizer> inner) {
    if (inner == nullptr) {
        throw errors::InvalidArgumentError(
            "LossScaleOptimizer: inner_optimizer must be a Keras optimizer, got null");
    }
    if (dynamic_cast<LossScaleOptimizer*>(inner.get()) != nullptr) {
        throw errors::InvalidArgumentError(
            "LossScaleOptimizer: inner_optimizer is already a LossScaleOptimizer");
    }
    return inner;
}

}  // namespace

LossScaleOptimizer::LossScaleOptimizer(std::shared_ptr<optimizers::Optimizer> inner,
                                       double initial_scale,
                                       int64_t dynamic_growth_steps)
    : optimizers::Optimizer(0.0, optimizers::CommonOptions{.name = "loss_scale_optimizer"}),
      inner_(checked(std::move(inner))),
      growth_steps_(dynamic_growth_steps) {
    if (!(std::isfinite(initial_scale) && initial_scale > 0)) {
        throw errors::InvalidArgumentError(fmt::format(
            "LossScaleOptimizer: initial_scale must be a positive finite number, got {}",
            initial_scale));
    }
    if (dynamic_growth_steps < 1) {
        throw errors::InvalidArgumentError(
            fmt::format("LossScaleOptimizer: dynamic_growth_steps must be at least 1, got {}",
                        dynamic_growth_steps));
    }
    dynamic_scale_ = non_slot("dynamic_scale", initial_scale, DType::float32);
    step_counter_ = non_slot("step_counter", 0, DType::int64);
}

Tensor LossScaleOptimizer::scale_loss(const Tensor& loss) const {
    return train::detail::scaled_loss(loss, dynamic_scale_.value(), kWho);
}

std::vector<train::GradAndVar> LossScaleOptimizer::compute_gradients(
    const std::function<Tensor()>& loss_fn,
    std::vector<Variable> var_list,
    train::GateGradients gate_gradients,
    AggregationMethod aggregation_method) {
    if (!loss_fn) throw errors::InvalidArgumentError("LossScaleOptimizer: loss_fn is empty");
    return inner_->compute_gradients([&] { return scale_loss(loss_fn()); },
                                     std::move(var_list),
                                     gate_gradients,
                                     aggregation_method);
}

void LossScaleOptimizer::apply_gradients(const std::vector<train::GradAndVar>& grads_and_vars,
                                         std::optional<Variable> global_step) {
    if (tapeflow::detail::apply_as_host_step(*this, grads_and_vars, global_step)) return;
    if (!train::detail::all_finite(grads_and_vars)) {
        // Skip the step: halve the scale, restart the count (no lower bound, as Keras 3).
        dynamic_scale_.assign(multiply(dynamic_scale_.value(), constant(0.5f)));
        step_counter_.assign(constant(int64_t{0}));
        return;
    }
    inner_->apply_gradients(train::detail::unscaled(grads_and_vars, dynamic_scale_.value()),
                            global_step);
    if (step_counter_.value().item<int64_t>() == growth_steps_ - 1) {
        step_counter_.assign(constant(int64_t{0}));
        dynamic_scale_.assign(multiply(dynamic_scale_.value(), constant(2.0f)));
    } else {
        step_counter_.assign_add(constant(int64_t{1}));
    }
}

Tensor LossScaleOptimizer::minimize(const std::function<Tensor()>& loss_fn,
                                    std::vector<Variable> var_list,
                                    std::optional<Variable> global_step,
                                    train::GateGradients gate_gradients,
                                    AggregationMethod aggregation_method) {
    if (!loss_fn) throw errors::InvalidArgumentError("LossScaleOptimizer: loss_fn is empty");
    Tensor loss;
    const std::vector<train::GradAndVar> pairs = inner_->compute_gradients(
        [&] {
            loss = loss_fn();
            return scale_loss(loss);
        },
        std::move(var_list),
        gate_gradients,
        aggregation_method);
    apply_gradients(pairs, global_step);
    return loss;
}

std::optional<Variable> LossScaleOptimizer::get_slot(const Variable& var,
                                                     std::string_view slot_name) const {
    return inner_->get_slot(var, slot_name);
}

std::vector<std::string> LossScaleOptimizer::get_slot_names() const {
    return inner_->get_slot_names();
}

int64_t LossScaleOptimizer::iterations() const {
    return inner_->iterations();
}

double LossScaleOptimizer::current_learning_rate() const {
    return inner_->current_learning_rate();
}

void LossScaleOptimizer::set_learning_rate(train::LearningRate learning_rate) {
    inner_->set_learning_rate(std::move(learning_rate));
}

std::vector<Variable> LossScaleOptimizer::variables() const {
    std::vector<Variable> out{dynamic_scale_, step_counter_};
    for (const Variable& v : inner_->variables())
        out.push_back(v);
    return out;
}

void LossScaleOptimizer::apply_dense(const Variable&, const Tensor&) {
    throw errors::InternalError(
        "LossScaleOptimizer applies through its inner optimizer; this is a tapeflow bug");
}

}  // namespace tapeflow::keras::mixed_precision
