// Model's std::vector forms: several inputs and outputs (call_multi), one loss per output with
// loss weights (Keras' compile(loss=[...], loss_weights=[...])), and fit / evaluate / predict on
// lists of tensors, batched together as [x_0.., y_0.., sample_weight].
#include <functional>
#include <optional>

#include <fmt/format.h>

#include <tapeflow/autograd/gradient_tape.hpp>
#include <tapeflow/core/error.hpp>
#include <tapeflow/keras/mixed_precision.hpp>
#include <tapeflow/keras/model.hpp>
#include <tapeflow/ops/array.hpp>
#include <tapeflow/ops/creation.hpp>
#include <tapeflow/ops/math.hpp>

#include "keras/batches.hpp"

namespace tapeflow::keras {

namespace {
Tensor for_metrics(const Tensor& y_pred) {
    const bool low = y_pred.dtype() == DType::float16 || y_pred.dtype() == DType::bfloat16;
    return low ? cast(y_pred, DType::float32) : y_pred;
}
}  // namespace

void Model::compile(std::shared_ptr<train::Optimizer> optimizer,
                    std::vector<std::shared_ptr<losses::Loss>> losses,
                    std::vector<double> loss_weights,
                    std::vector<std::shared_ptr<metrics::Metric>> metrics) {
    if (losses.empty())
        throw errors::InvalidArgumentError(
            fmt::format("Model \"{}\": compile got an empty list of losses", name()));
    for (std::size_t i = 0; i < losses.size(); ++i)
        if (!losses[i])
            throw errors::InvalidArgumentError(fmt::format(
                "Model \"{}\": compile got an empty loss pointer for output {}", name(), i));
    if (!loss_weights.empty() && loss_weights.size() != losses.size())
        throw errors::InvalidArgumentError(
            fmt::format("Model \"{}\": compile got {} loss_weights for {} losses",
                        name(),
                        loss_weights.size(),
                        losses.size()));
    compile(std::move(optimizer), losses[0], std::move(metrics));
    output_losses_ = std::move(losses);
    loss_weights_ = std::move(loss_weights);
}

Tensor Model::compute_loss(const std::vector<Tensor>& y,
                           const std::vector<Tensor>& y_pred,
                           const Tensor& sample_weight) const {
    if (y.size() != y_pred.size())
        throw errors::InvalidArgumentError(fmt::format(
            "Model \"{}\": got {} targets for {} outputs", name(), y.size(), y_pred.size()));
    if (!output_losses_.empty() && output_losses_.size() != y_pred.size())
        throw errors::InvalidArgumentError(
            fmt::format("Model \"{}\" was compiled with {} losses but has {} outputs",
                        name(),
                        output_losses_.size(),
                        y_pred.size()));
    Tensor total;
    for (std::size_t i = 0; i < y_pred.size(); ++i) {
        const losses::Loss& loss = output_losses_.empty() ? *loss_ : *output_losses_[i];
        Tensor term = loss(y[i], y_pred[i], sample_weight);
        if (!loss_weights_.empty() && loss_weights_[i] != 1.0)
            term = term * scalar_like(term, loss_weights_[i]);
        total = total.defined() ? total + term : term;
    }
    return total;
}

Tensor Model::train_step(const std::vector<Tensor>& x,
                         const std::vector<Tensor>& y,
                         const Tensor& sample_weight) {
    std::vector<Tensor> y_pred;
    Tensor loss;
    std::vector<train::GradAndVar> pairs;
    {
        GradientTape tape;
        y_pred = call_multi(x, true);
        loss = compute_loss(y, y_pred, sample_weight);
        const std::vector<Variable> vars = trainable_variables();
        const auto* scaler =
            dynamic_cast<const mixed_precision::LossScaleOptimizer*>(optimizer_.get());
        std::vector<Gradient> grads =
            tape.gradient(scaler != nullptr ? scaler->scale_loss(loss) : loss, vars);
        for (std::size_t i = 0; i < vars.size(); ++i)
            pairs.push_back({std::move(grads[i]), vars[i]});
    }
    optimizer_->apply_gradients(pairs);
    for (const auto& m : metrics_)
        m->update_state(y[0], for_metrics(y_pred[0]), sample_weight);
    return loss;
}

namespace {
// [x_0.., y_0.., sample_weight], checked against the model's metrics.
std::vector<Tensor> packed(const Model& model,
                           const std::vector<Tensor>& x,
                           const std::vector<Tensor>& y,
                           const Tensor& sample_weight) {
    if (x.empty() || y.empty())
        throw errors::InvalidArgumentError(fmt::format(
            "Model \"{}\": the std::vector forms need at least one input and one target (got {} "
            "and {})",
            model.name(),
            x.size(),
            y.size()));
    if (y.size() > 1 && !model.metrics().empty())
        throw errors::InvalidArgumentError(fmt::format(
            "Model \"{}\": metrics with several outputs ({} targets) are not supported; compile "
            "without metrics",
            model.name(),
            y.size()));
    std::vector<Tensor> all = x;
    all.insert(all.end(), y.begin(), y.end());
    all.push_back(sample_weight);
    return all;
}

// Restores packed_inputs_ when the fit / evaluate returns or throws.
struct PackedScope {
    std::size_t& slot;
    std::size_t saved;
    PackedScope(std::size_t& s, std::size_t n) : slot(s), saved(s) { slot = n; }
    ~PackedScope() { slot = saved; }
    PackedScope(const PackedScope&) = delete;
    PackedScope& operator=(const PackedScope&) = delete;
};
}  // namespace

History Model::fit(const std::vector<Tensor>& x, const std::vector<Tensor>& y, FitOptions options) {
    detail::require_compiled(*this, "fit");
    if (options.validation_split != 0)
        throw errors::InvalidArgumentError(fmt::format(
            "Model \"{}\": validation_split is not supported by the std::vector form of fit; "
            "pass validation_data",
            name()));
    std::vector<Tensor> all = packed(*this, x, y, options.sample_weight);
    const PackedScope scope(packed_inputs_, x.size());
    detail::TensorBatches train(name(), all, options.batch_size);
    std::optional<detail::TensorBatches> validation;
    if (!options.validation_data.empty()) {
        std::vector<Tensor> val = options.validation_data;
        if (val.size() == x.size() + y.size()) val.emplace_back();
        if (val.size() != all.size())
            throw errors::InvalidArgumentError(fmt::format(
                "Model \"{}\": validation_data must hold {} tensors (the inputs, the targets, "
                "optionally a sample_weight), got {}",
                name(),
                x.size() + y.size(),
                options.validation_data.size()));
        validation.emplace(name(), val, options.batch_size);
    }
    std::function<std::map<std::string, double>()> validate;
    if (validation)
        validate = [&] {
            return run_evaluation([&](std::vector<Tensor>& b) { return validation->next(b); });
        };
    return run_fit(
        [&](int64_t) {
            if (options.shuffle) train.shuffle();
        },
        [&](std::vector<Tensor>& b) { return train.next(b); },
        train.steps(),
        validate,
        options);
}

std::map<std::string, double> Model::evaluate(const std::vector<Tensor>& x,
                                              const std::vector<Tensor>& y,
                                              int64_t batch_size) {
    detail::require_compiled(*this, "evaluate");
    const std::vector<Tensor> all = packed(*this, x, y, Tensor());
    const PackedScope scope(packed_inputs_, x.size());
    detail::TensorBatches batches(name(), all, batch_size);
    return run_evaluation([&](std::vector<Tensor>& b) { return batches.next(b); });
}

std::vector<Tensor> Model::predict(const std::vector<Tensor>& x, int64_t batch_size) {
    if (x.empty())
        throw errors::InvalidArgumentError(
            fmt::format("Model \"{}\": predict got an empty list of inputs", name()));
    detail::TensorBatches batches(name(), x, batch_size);
    std::vector<std::vector<Tensor>> parts;
    std::vector<Tensor> batch;
    while (batches.next(batch)) {
        const std::vector<Tensor> out = call_multi(batch, false);
        if (parts.empty()) parts.resize(out.size());
        for (std::size_t i = 0; i < out.size(); ++i)
            parts[i].push_back(out[i]);
    }
    if (parts.empty())
        throw errors::InvalidArgumentError(
            fmt::format("Model \"{}\": predict got no samples", name()));
    std::vector<Tensor> result;
    for (auto& p : parts)
        result.push_back(p.size() == 1 ? p[0] : concat(p, 0));
    return result;
}

}  // namespace tapeflow::keras
