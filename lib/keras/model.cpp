// Model: compile, the training step, evaluate, predict and weights; Sequential. The fit loop is in
// fit.cpp, the summary table in summary.cpp.
#include <fmt/format.h>

#include <tapeflow/autograd/gradient_tape.hpp>
#include <tapeflow/core/error.hpp>
#include <tapeflow/function.hpp>
#include <tapeflow/keras/mixed_precision.hpp>
#include <tapeflow/keras/model.hpp>
#include <tapeflow/ops/array.hpp>
#include <tapeflow/ops/creation.hpp>
#include <tapeflow/ops/math.hpp>

#include "function/trace_hooks.hpp"
#include "keras/batches.hpp"

namespace tapeflow::keras {

Model::Model(std::string name) : Layer(std::move(name)) {}

Model::Model(std::string name, std::string_view class_name) : Layer(std::move(name), class_name) {}

void Model::compile(std::shared_ptr<train::Optimizer> optimizer,
                    std::shared_ptr<losses::Loss> loss,
                    std::vector<std::shared_ptr<metrics::Metric>> metrics,
                    CompileOptions options) {
    if (!optimizer || !loss)
        throw errors::InvalidArgumentError(
            fmt::format("Model \"{}\": compile needs an optimizer and a loss (got {} and {})",
                        name(),
                        optimizer ? "one" : "none",
                        loss ? "one" : "none"));
    for (const auto& m : metrics)
        if (!m)
            throw errors::InvalidArgumentError(
                fmt::format("Model \"{}\": compile got an empty metric pointer", name()));
    // Keras 3: under mixed_float16 a Keras optimizer is wrapped in a LossScaleOptimizer.
    namespace mp = mixed_precision;
    auto keras_optimizer = std::dynamic_pointer_cast<optimizers::Optimizer>(optimizer);
    if (mp::global_policy().name() == "mixed_float16" && keras_optimizer &&
        !std::dynamic_pointer_cast<mp::LossScaleOptimizer>(keras_optimizer)) {
        optimizer = std::make_shared<mp::LossScaleOptimizer>(std::move(keras_optimizer));
    }
    optimizer_ = std::move(optimizer);
    loss_ = std::move(loss);
    metrics_ = std::move(metrics);
    output_losses_.clear();
    loss_weights_.clear();
    compile_options_ = options;
    // Keras 3's make_train_function: the step under tf.function with reduce_retracing (the last,
    // smaller batch generalizes the batch dimension instead of adding a trace per size).
    using Step = std::function<Tensor(const Tensor&, const Tensor&, const Tensor&)>;
    if (options.run_eagerly) {
        train_function_ = [this](const Tensor& x, const Tensor& y, const Tensor& w) {
            return train_step(x, y, w);
        };
        test_function_ = [this](const Tensor& x, const Tensor& y, const Tensor& w) {
            return test_step(x, y, w);
        };
        predict_function_ = [this](const Tensor& x) {
            return (*this)(x, false);
        };
        return;
    }
    const FunctionOptions traced{.reduce_retracing = true, .jit_compile = options.jit_compile};
    FunctionOptions named = traced;
    named.name = name() + "_train_function";
    train_function_ = Step(tapeflow::function(
        [this](const Tensor& x, const Tensor& y, const Tensor& w) { return train_step(x, y, w); },
        named));
    named.name = name() + "_test_function";
    test_function_ = Step(tapeflow::function(
        [this](const Tensor& x, const Tensor& y, const Tensor& w) { return test_step(x, y, w); },
        named));
    named.name = name() + "_predict_function";
    predict_function_ = std::function<Tensor(const Tensor&)>(
        tapeflow::function([this](const Tensor& x) { return (*this)(x, false); }, named));
}

void detail::require_compiled(const Model& model, std::string_view what) {
    if (!model.compiled())
        throw errors::FailedPreconditionError(fmt::format(
            "You must call compile() before {} on model \"{}\": model.compile(optimizer, loss, "
            "metrics)",
            what,
            model.name()));
}

namespace {
// The metrics' states are C++ members: inside a tf::function their update is a host step, run
// again at every replay on that replay's values (NOTE [Function trace]).
void update_metrics(const std::vector<std::shared_ptr<metrics::Metric>>& metrics,
                    const Tensor& y,
                    const Tensor& y_pred,
                    const Tensor& sample_weight) {
    if (metrics.empty()) return;
    function_detail::host_step(
        "update_metrics", {y, y_pred, sample_weight}, [metrics](std::span<const Tensor> in) {
            for (const auto& m : metrics)
                m->update_state(in[0], in[1], in[2]);
        });
}

// Metrics compute in float32 (Keras 3's floatx), as losses do.
Tensor for_metrics(const Tensor& y_pred) {
    const bool low = y_pred.dtype() == DType::float16 || y_pred.dtype() == DType::bfloat16;
    return low ? cast(y_pred, DType::float32) : y_pred;
}
}  // namespace

Tensor Model::train_step(const Tensor& x, const Tensor& y, const Tensor& sample_weight) {
    Tensor y_pred, loss;
    std::vector<train::GradAndVar> pairs;
    {
        GradientTape tape;
        y_pred = (*this)(x, true);
        loss = compute_loss({y}, {y_pred}, sample_weight);
        const std::vector<Variable> vars = trainable_variables();
        // A LossScaleOptimizer differentiates the scaled loss (and unscales in apply_gradients).
        const auto* scaler =
            dynamic_cast<const mixed_precision::LossScaleOptimizer*>(optimizer_.get());
        std::vector<Gradient> grads =
            tape.gradient(scaler != nullptr ? scaler->scale_loss(loss) : loss, vars);
        pairs.reserve(vars.size());
        for (std::size_t i = 0; i < vars.size(); ++i)
            pairs.push_back({std::move(grads[i]), vars[i]});
    }
    optimizer_->apply_gradients(pairs);
    update_metrics(metrics_, y, for_metrics(y_pred), sample_weight);
    return loss;
}

Tensor Model::test_step(const Tensor& x, const Tensor& y, const Tensor& sample_weight) {
    const Tensor y_pred = (*this)(x, false);
    const Tensor loss = compute_loss({y}, {y_pred}, sample_weight);
    update_metrics(metrics_, y, for_metrics(y_pred), sample_weight);
    return loss;
}

std::map<std::string, double> Model::run_evaluation(
    const std::function<bool(std::vector<Tensor>&)>& next) {
    detail::LossTracker tracker;
    for (const auto& m : metrics_)
        m->reset_state();
    std::vector<Tensor> batch;
    while (next(batch))
        tracker.add(evaluate_on(batch), batch[0]);
    return detail::logs_of(tracker, metrics_);
}

Tensor Model::step_on(const std::vector<Tensor>& batch) {
    if (packed_inputs_ == 0) {
        const Tensor& w = batch.size() > 2 ? batch[2] : Tensor();
        return train_function_(batch[0], batch[1], w);
    }
    const auto n_x = static_cast<std::ptrdiff_t>(packed_inputs_);
    const std::vector<Tensor> x(batch.begin(), batch.begin() + n_x);
    const std::vector<Tensor> y(batch.begin() + n_x, batch.end() - 1);
    return train_step(x, y, batch.back());
}

Tensor Model::evaluate_on(const std::vector<Tensor>& batch) {
    if (packed_inputs_ == 0) {
        const Tensor& w = batch.size() > 2 ? batch[2] : Tensor();
        return test_function_(batch[0], batch[1], w);
    }
    const auto n_x = static_cast<std::ptrdiff_t>(packed_inputs_);
    const std::vector<Tensor> x(batch.begin(), batch.begin() + n_x);
    const std::vector<Tensor> y(batch.begin() + n_x, batch.end() - 1);
    const std::vector<Tensor> y_pred = call_multi(x, false);
    const Tensor loss = compute_loss(y, y_pred, batch.back());
    for (const auto& m : metrics_)
        m->update_state(y[0], for_metrics(y_pred[0]), batch.back());
    return loss;
}

std::map<std::string, double> Model::evaluate(const Tensor& x,
                                              const Tensor& y,
                                              int64_t batch_size) {
    detail::require_compiled(*this, "evaluate");
    detail::TensorBatches batches(name(), {x, y}, batch_size);
    return run_evaluation([&](std::vector<Tensor>& b) { return batches.next(b); });
}

std::map<std::string, double> Model::evaluate(const data::Dataset<std::vector<Tensor>>& data) {
    detail::require_compiled(*this, "evaluate");
    detail::DatasetBatches batches(name(), data);
    return run_evaluation([&](std::vector<Tensor>& b) { return batches.next(b); });
}

Tensor Model::predict(const Tensor& x, int64_t batch_size) {
    detail::TensorBatches batches(name(), {x}, batch_size);
    std::vector<Tensor> outputs, batch;
    while (batches.next(batch))
        outputs.push_back(predict_function_ ? predict_function_(batch[0])
                                            : (*this)(batch[0], false));
    if (outputs.empty())
        throw errors::InvalidArgumentError(
            fmt::format("Model \"{}\": predict got no samples (x has shape {})",
                        name(),
                        x.shape().debug_string()));
    return outputs.size() == 1 ? outputs[0] : concat(outputs, 0);
}

std::vector<std::shared_ptr<layers::Layer>> Model::layers() const {
    std::vector<std::shared_ptr<layers::Layer>> out;
    for (const auto& child : children())
        if (auto layer = std::dynamic_pointer_cast<layers::Layer>(child)) out.push_back(layer);
    return out;
}

std::vector<Tensor> Model::get_weights() const {
    std::vector<Tensor> out;
    for (const Variable& v : variables())
        out.push_back(v.value());
    return out;
}

void Model::set_weights(const std::vector<Tensor>& weights) {
    const std::vector<Variable> vars = variables();
    if (weights.size() != vars.size())
        throw errors::InvalidArgumentError(
            fmt::format("Model \"{}\": set_weights got {} tensors for {} variables",
                        name(),
                        weights.size(),
                        vars.size()));
    for (std::size_t i = 0; i < vars.size(); ++i) {
        Variable v = vars[i];
        v.assign(weights[i]);
    }
}

// ---- Sequential ----

Sequential::Sequential(std::vector<std::shared_ptr<layers::Layer>> layers, std::string name)
    : Model(std::move(name), "Sequential") {
    for (auto& layer : layers)
        add(std::move(layer));
}

void Sequential::add(std::shared_ptr<layers::Layer> layer) {
    if (!layer)
        throw errors::InvalidArgumentError(
            fmt::format("Sequential \"{}\": add() got an empty layer pointer", name()));
    layers_.push_back(track(std::move(layer)));
}

Tensor Sequential::call(const Tensor& x, bool training) {
    if (layers_.empty())
        throw errors::FailedPreconditionError(fmt::format(
            "Sequential model \"{}\" has no layers; add() some before calling it", name()));
    // Keras' masks: each layer gets the previous one's compute_mask (none unless a layer makes
    // one).
    Tensor h = x;
    Tensor mask;
    for (const auto& layer : layers_) {
        Tensor next =
            mask.defined() ? layer->call_with_mask(h, mask, training) : (*layer)(h, training);
        mask = layer->compute_mask(h, mask);
        h = std::move(next);
    }
    return h;
}

}  // namespace tapeflow::keras
