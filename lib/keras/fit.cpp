// Model.fit: the epoch loop shared by the tensor and the dataset overloads (callbacks, logs,
// History, the progress bar, validation). Logs are read from the device only at epoch ends and
// where a callback or the terminal bar asks for them, so a step never waits for the device.
#include <cmath>

#include <fmt/format.h>

#include <tapeflow/core/error.hpp>
#include <tapeflow/keras/model.hpp>

#include "keras/batches.hpp"
#include "keras/progress_bar.hpp"

namespace tapeflow::keras {

History Model::run_fit(const std::function<void(int64_t)>& begin_epoch,
                       const std::function<bool(std::vector<Tensor>&)>& next_batch,
                       std::optional<int64_t> steps_per_epoch,
                       const std::function<std::map<std::string, double>()>& validate,
                       const FitOptions& options) {
    if (options.epochs < 0 || options.initial_epoch < 0)
        throw errors::InvalidArgumentError(
            fmt::format("Model \"{}\": fit needs epochs >= 0 and initial_epoch >= 0, got {} and {}",
                        name(),
                        options.epochs,
                        options.initial_epoch));
    bool batch_logs = false;
    for (const auto& cb : options.callbacks) {
        if (!cb)
            throw errors::InvalidArgumentError(
                fmt::format("Model \"{}\": fit got an empty callback pointer", name()));
        cb->set_model(this);
        batch_logs = batch_logs || cb->needs_batch_logs();
    }
    stop_training = false;
    History history;
    callbacks::Logs logs;
    resume_epoch.reset();
    for (const auto& cb : options.callbacks)
        cb->on_train_begin({});
    const int64_t first_epoch = resume_epoch.value_or(options.initial_epoch);
    resume_epoch.reset();
    for (int64_t epoch = first_epoch; epoch < options.epochs && !stop_training; ++epoch) {
        begin_epoch(epoch);
        for (const auto& m : metrics_)
            m->reset_state();
        for (const auto& cb : options.callbacks)
            cb->on_epoch_begin(epoch, {});
        detail::ProgressBar bar(options.verbose, epoch, options.epochs, steps_per_epoch);
        detail::LossTracker tracker;
        std::vector<Tensor> batch;
        int64_t step = 0;
        while (next_batch(batch)) {
            for (const auto& cb : options.callbacks)
                cb->on_train_batch_begin(step, {});
            tracker.add(step_on(batch), batch[0]);
            const bool draw = bar.due();
            const callbacks::Logs running =
                batch_logs || draw ? detail::logs_of(tracker, metrics_) : callbacks::Logs{};
            for (const auto& cb : options.callbacks)
                cb->on_train_batch_end(step, running);
            ++step;
            if (draw) bar.update(step, running);
            if (stop_training) break;  // Keras 3: a callback ends the epoch at this batch
        }
        if (step == 0)
            throw errors::InvalidArgumentError(
                fmt::format("Model \"{}\": fit got no training batches (empty data)", name()));
        steps_per_epoch = step;
        logs = detail::logs_of(tracker, metrics_);
        if (validate)
            for (const auto& [key, value] : validate())
                logs["val_" + key] = value;
        bar.finish(step, logs);
        history.epoch.push_back(epoch);
        for (const auto& [key, value] : logs)
            history.history[key].push_back(value);
        for (const auto& cb : options.callbacks)
            cb->on_epoch_end(epoch, logs);
    }
    for (const auto& cb : options.callbacks)
        cb->on_train_end(logs);
    return history;
}

History Model::fit(const Tensor& x, const Tensor& y, FitOptions options) {
    detail::require_compiled(*this, "fit");
    if (!(options.validation_split >= 0 && options.validation_split < 1))
        throw errors::InvalidArgumentError(
            fmt::format("Model \"{}\": validation_split must be in [0, 1), got {}",
                        name(),
                        options.validation_split));
    if (options.validation_split > 0 && !options.validation_data.empty())
        throw errors::InvalidArgumentError(fmt::format(
            "Model \"{}\": give validation_split or validation_data, not both", name()));
    // Checks x, y and sample_weight agree before anything is split off.
    detail::TensorBatches all(name(), {x, y, options.sample_weight}, options.batch_size);
    // Keras takes the validation rows from the end, before shuffling.
    const auto split_at = static_cast<int64_t>(
        std::floor(static_cast<double>(all.rows()) * (1.0 - options.validation_split)));
    std::vector<Tensor> val = options.validation_data;
    if (options.validation_split > 0) {
        const int64_t n_val = all.rows() - split_at;
        val = {detail::rows(x, split_at, n_val),
               detail::rows(y, split_at, n_val),
               detail::rows(options.sample_weight, split_at, n_val)};
    }
    if (!val.empty() && val.size() != 2 && val.size() != 3)
        throw errors::InvalidArgumentError(fmt::format(
            "Model \"{}\": validation_data must be [x, y] or [x, y, sample_weight], got {} "
            "tensors",
            name(),
            val.size()));
    detail::TensorBatches train(name(),
                                {detail::rows(x, 0, split_at),
                                 detail::rows(y, 0, split_at),
                                 detail::rows(options.sample_weight, 0, split_at)},
                                options.batch_size);
    std::optional<detail::TensorBatches> validation;
    if (!val.empty()) validation.emplace(name(), val, options.batch_size);
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

History Model::fit(const data::Dataset<std::vector<Tensor>>& data,
                   FitOptions options,
                   std::optional<data::Dataset<std::vector<Tensor>>> validation_data) {
    detail::require_compiled(*this, "fit");
    if (options.validation_split != 0)
        throw errors::InvalidArgumentError(
            fmt::format("Model \"{}\": validation_split is not supported with a dataset; pass "
                        "validation_data",
                        name()));
    detail::DatasetBatches train(name(), data);
    std::optional<detail::DatasetBatches> validation;
    if (validation_data) validation.emplace(name(), *validation_data);
    std::function<std::map<std::string, double>()> validate;
    if (validation)
        validate = [&] {
            return run_evaluation([&](std::vector<Tensor>& b) { return validation->next(b); });
        };
    return run_fit([](int64_t) {},
                   [&](std::vector<Tensor>& b) { return train.next(b); },
                   {},
                   validate,
                   options);
}

}  // namespace tapeflow::keras
