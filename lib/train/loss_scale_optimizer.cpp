// tf::train::MixedPrecisionLossScaleOptimizer (TF1's rule, tensorflow/python/training/experimental/
// loss_scale_optimizer.py and loss_scale.py) and the helpers both loss-scale optimizers share.
#include <algorithm>
#include <cmath>

#include <tapeflow/core/error.hpp>
#include <tapeflow/ops/creation.hpp>
#include <tapeflow/ops/math.hpp>
#include <tapeflow/train/loss_scale_optimizer.hpp>

#include "train/loss_scaling.hpp"
#include "train/traced_apply.hpp"

namespace tapeflow::train {

bool detail::all_finite(const std::vector<GradAndVar>& grads_and_vars) {
    // g - g is 0 where g is finite and NaN where it is inf or NaN; one sum of the per-gradient sums
    // in float32, so one host read for the step.
    std::vector<Tensor> sums;
    for (const GradAndVar& p : grads_and_vars) {
        if (!p.gradient.defined()) continue;
        const Tensor g = p.gradient.is_sparse() ? p.gradient.sparse().values : p.gradient.dense();
        if (!is_floating(g.dtype())) continue;
        sums.push_back(cast(reduce_sum(subtract(g, g)), DType::float32));
    }
    if (sums.empty()) return true;
    return std::isfinite(add_n(sums).item<float>());
}

std::vector<GradAndVar> detail::unscaled(const std::vector<GradAndVar>& grads_and_vars,
                                         const Tensor& scale) {
    std::vector<GradAndVar> out;
    out.reserve(grads_and_vars.size());
    for (const GradAndVar& p : grads_and_vars) {
        if (!p.gradient.defined()) {
            out.push_back(p);
        } else if (p.gradient.is_sparse()) {
            const IndexedSlices& s = p.gradient.sparse();
            out.push_back(
                {IndexedSlices{
                     divide(s.values, cast(scale, s.values.dtype())), s.indices, s.dense_shape},
                 p.variable});
        } else {
            const Tensor g = p.gradient.dense();
            out.push_back({divide(g, cast(scale, g.dtype())), p.variable});
        }
    }
    return out;
}

Tensor detail::scaled_loss(const Tensor& loss, const Tensor& scale, const char* who) {
    if (!loss.defined() || !is_floating(loss.dtype())) {
        throw errors::InvalidArgumentError(
            fmt::format("{}: the loss must be a floating tensor, got {}",
                        who,
                        loss.defined() ? dtype_name(loss.dtype()) : "an undefined tensor"));
    }
    return multiply(loss, cast(scale, loss.dtype()));
}

namespace {

constexpr const char* kName = "MixedPrecisionLossScaleOptimizer";

std::shared_ptr<Optimizer> checked(std::shared_ptr<Optimizer> opt) {
    if (opt == nullptr) {
        throw errors::InvalidArgumentError(
            "MixedPrecisionLossScaleOptimizer: the optimizer to wrap is null");
    }
    return opt;
}

void check_scale(double scale, const char* what) {
    if (!(std::isfinite(scale) && scale > 0)) {
        throw errors::InvalidArgumentError(fmt::format(
            "MixedPrecisionLossScaleOptimizer: {} must be a positive finite number, got {}",
            what,
            scale));
    }
}

}  // namespace

MixedPrecisionLossScaleOptimizer::MixedPrecisionLossScaleOptimizer(std::shared_ptr<Optimizer> opt,
                                                                   DynamicLossScaleOptions dynamic)
    : Optimizer(kName, 0.0, false),
      inner_(checked(std::move(opt))),
      dynamic_(true),
      options_(dynamic) {
    check_scale(options_.initial_loss_scale, "initial_loss_scale");
    if (options_.increment_period < 1) {
        throw errors::InvalidArgumentError(fmt::format(
            "MixedPrecisionLossScaleOptimizer: increment_period must be at least 1, got {}",
            options_.increment_period));
    }
    if (!(std::isfinite(options_.multiplier) && options_.multiplier >= 1)) {
        throw errors::InvalidArgumentError(fmt::format(
            "MixedPrecisionLossScaleOptimizer: multiplier must be a finite number >= 1, got {}",
            options_.multiplier));
    }
    loss_scale_ = non_slot("current_loss_scale", options_.initial_loss_scale, DType::float32);
    good_steps_ = non_slot("good_steps", 0, DType::int64);
}

MixedPrecisionLossScaleOptimizer::MixedPrecisionLossScaleOptimizer(std::shared_ptr<Optimizer> opt,
                                                                   double fixed_loss_scale)
    : Optimizer(kName, 0.0, false), inner_(checked(std::move(opt))), dynamic_(false) {
    check_scale(fixed_loss_scale, "the loss scale");
    options_.initial_loss_scale = fixed_loss_scale;
    loss_scale_ = non_slot("current_loss_scale", fixed_loss_scale, DType::float32);
    good_steps_ = non_slot("good_steps", 0, DType::int64);
}

std::vector<GradAndVar> MixedPrecisionLossScaleOptimizer::compute_gradients(
    const std::function<Tensor()>& loss_fn,
    std::vector<Variable> var_list,
    GateGradients gate_gradients,
    AggregationMethod aggregation_method) {
    if (!loss_fn) throw errors::InvalidArgumentError(fmt::format("{}: loss_fn is empty", kName));
    const Tensor scale = loss_scale_.value();
    const std::vector<GradAndVar> scaled =
        inner_->compute_gradients([&] { return detail::scaled_loss(loss_fn(), scale, kName); },
                                  std::move(var_list),
                                  gate_gradients,
                                  aggregation_method);
    return detail::unscaled(scaled, scale);
}

void MixedPrecisionLossScaleOptimizer::apply_gradients(
    const std::vector<GradAndVar>& grads_and_vars, std::optional<Variable> global_step) {
    if (tapeflow::detail::apply_as_host_step(*this, grads_and_vars, global_step)) return;
    if (!dynamic_) {
        inner_->apply_gradients(grads_and_vars, global_step);
        return;
    }
    const bool finite = detail::all_finite(grads_and_vars);
    const double scale = loss_scale_.value().item<float>();
    if (finite) {
        const int64_t good = good_steps_.value().item<int64_t>() + 1;
        if (good >= options_.increment_period) {
            const double grown = scale * options_.multiplier;
            // TF's _assign_if_finite: a scale that would overflow float32 stays.
            if (std::isfinite(static_cast<float>(grown))) {
                loss_scale_.assign(constant(grown, DType::float32));
            }
            good_steps_.assign(constant(int64_t{0}));
        } else {
            good_steps_.assign(constant(good));
        }
        inner_->apply_gradients(grads_and_vars, global_step);
    } else {
        loss_scale_.assign(constant(std::max(scale / options_.multiplier, 1.0), DType::float32));
        good_steps_.assign(constant(int64_t{0}));
    }
}

Tensor MixedPrecisionLossScaleOptimizer::minimize(const std::function<Tensor()>& loss_fn,
                                                  std::vector<Variable> var_list,
                                                  std::optional<Variable> global_step,
                                                  GateGradients gate_gradients,
                                                  AggregationMethod aggregation_method) {
    if (!loss_fn) throw errors::InvalidArgumentError(fmt::format("{}: loss_fn is empty", kName));
    Tensor loss;
    const std::vector<GradAndVar> pairs = compute_gradients(
        [&] {
            loss = loss_fn();
            return loss;
        },
        std::move(var_list),
        gate_gradients,
        aggregation_method);
    apply_gradients(pairs, global_step);
    return loss;
}

std::optional<Variable> MixedPrecisionLossScaleOptimizer::get_slot(
    const Variable& var, std::string_view slot_name) const {
    return inner_->get_slot(var, slot_name);
}

std::vector<std::string> MixedPrecisionLossScaleOptimizer::get_slot_names() const {
    return inner_->get_slot_names();
}

int64_t MixedPrecisionLossScaleOptimizer::iterations() const {
    return inner_->iterations();
}

double MixedPrecisionLossScaleOptimizer::current_learning_rate() const {
    return inner_->current_learning_rate();
}

std::vector<Variable> MixedPrecisionLossScaleOptimizer::variables() const {
    std::vector<Variable> out{loss_scale_, good_steps_};
    for (const Variable& v : inner_->variables())
        out.push_back(v);
    return out;
}

void MixedPrecisionLossScaleOptimizer::apply_dense(const Variable&, const Tensor&) {
    throw errors::InternalError(
        "MixedPrecisionLossScaleOptimizer applies through its wrapped optimizer; this is a "
        "tapeflow bug");
}

}  // namespace tapeflow::train
