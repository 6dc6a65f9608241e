// The ready callbacks: TensorBoard (Keras 3's runs and tags), ModelCheckpoint (tf::train::Saver)
// and EarlyStopping (Keras 3's rule: wait counts epochs without improvement, never stop at epoch 0,
// best weights restored at the end of training).
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include <tapeflow/core/error.hpp>
#include <tapeflow/core/logging.hpp>
#include <tapeflow/keras/callbacks.hpp>
#include <tapeflow/keras/model.hpp>

namespace tapeflow::keras::callbacks {

Callback::~Callback() = default;
void Callback::on_train_begin(const Logs&) {}
void Callback::on_train_end(const Logs&) {}
void Callback::on_epoch_begin(int64_t, const Logs&) {}
void Callback::on_epoch_end(int64_t, const Logs&) {}
void Callback::on_train_batch_begin(int64_t, const Logs&) {}
void Callback::on_train_batch_end(int64_t, const Logs&) {}

namespace {

bool starts_with(const std::string& s, std::string_view prefix) {
    return s.compare(0, prefix.size(), prefix) == 0;
}

// Keras' "auto" mode: maximize metrics whose direction is up; minimize losses. nullopt: unknown.
std::optional<bool> maximize_for(const std::string& monitor, const Model* model) {
    const std::string metric = starts_with(monitor, "val_") ? monitor.substr(4) : monitor;
    if (metric == "loss") return false;
    if (model != nullptr)
        for (const auto& m : model->metrics())
            if (m->name() == metric) return m->higher_is_better();
    return std::nullopt;
}

}  // namespace

// ---- TensorBoard ----

TensorBoard::TensorBoard(std::string log_dir) : log_dir_(std::move(log_dir)) {}

void TensorBoard::on_train_begin(const Logs&) {
    train_ = summary::create_file_writer(log_dir_ + "/train");
    validation_ = summary::create_file_writer(log_dir_ + "/validation");
}

void TensorBoard::on_epoch_end(int64_t epoch, const Logs& logs) {
    if (!train_) on_train_begin({});
    const int64_t iterations =
        model() && model()->optimizer() ? model()->optimizer()->iterations() : 0;
    bool any_validation = false;
    for (const auto& [name, value] : logs) {
        if (starts_with(name, "val_")) {
            const std::string metric = name.substr(4);
            validation_->scalar("epoch_" + metric, value, epoch);
            validation_->scalar("evaluation_" + metric + "_vs_iterations", value, iterations);
            any_validation = true;
        } else {
            train_->scalar("epoch_" + name, value, epoch);
        }
    }
    if (model() && model()->optimizer())
        train_->scalar("epoch_learning_rate", model()->optimizer()->current_learning_rate(), epoch);
    train_->flush();
    if (any_validation) validation_->flush();
}

void TensorBoard::on_train_end(const Logs&) {
    if (train_) train_->close();
    if (validation_) validation_->close();
    train_.reset();
    validation_.reset();
}

// ---- ModelCheckpoint ----

ModelCheckpoint::ModelCheckpoint(std::string filepath, bool save_best_only, std::string monitor)
    : filepath_(std::move(filepath)),
      monitor_(std::move(monitor)),
      save_best_only_(save_best_only) {
    if (filepath_.empty())
        throw errors::InvalidArgumentError("ModelCheckpoint: filepath must not be empty");
}

ModelCheckpoint::~ModelCheckpoint() = default;

void ModelCheckpoint::on_epoch_end(int64_t epoch, const Logs& logs) {
    if (model() == nullptr) return;
    if (save_best_only_) {
        const auto it = logs.find(monitor_);
        if (it == logs.end()) {
            logging::warn("ModelCheckpoint: can save best model only with {} available, skipping",
                          monitor_);
            return;
        }
        const bool maximize = maximize_for(monitor_, model()).value_or(false);
        if (best_ && !(maximize ? it->second > *best_ : it->second < *best_)) return;
        best_ = it->second;
    }
    if (!saver_) {
        // The model's weights and the optimizer's state: a checkpoint to resume from.
        std::vector<Variable> vars = model()->variables();
        if (model()->optimizer())
            for (const Variable& v : model()->optimizer()->variables())
                vars.push_back(v);
        saver_ = std::make_unique<train::Saver>(vars, train::SaverOptions{.max_to_keep = 0});
    }
    std::string path = filepath_;
    for (std::size_t at; (at = path.find("{epoch}")) != std::string::npos;)
        path.replace(at, 7, std::to_string(epoch + 1));
    saved_.push_back(saver_->save(path));
}

// ---- EarlyStopping ----

namespace {

void check_mode(const char* callback, const std::string& mode) {
    if (mode != "auto" && mode != "min" && mode != "max")
        throw errors::InvalidArgumentError(fmt::format(
            "{}: mode must be \"auto\", \"min\" or \"max\", got \"{}\"", callback, mode));
}

// Keras' MonitorCallback._set_monitor_op.
bool resolve_maximize(const char* callback,
                      const std::string& mode,
                      const std::string& monitor,
                      const Model* model) {
    if (mode != "auto") return mode == "max";
    const auto maximize = maximize_for(monitor, model);
    if (!maximize)
        throw errors::InvalidArgumentError(
            fmt::format("{} received monitor={} but cannot tell whether it should be "
                        "maximized or minimized; pass mode \"max\" or \"min\"",
                        callback,
                        monitor));
    return *maximize;
}

// Keras' _is_improvement: any value beats no reference; else by more than min_delta.
bool is_improvement(double current,
                    const std::optional<double>& reference,
                    bool maximize,
                    double min_delta) {
    if (!reference) return true;
    return maximize ? current - min_delta > *reference : current + min_delta < *reference;
}

}  // namespace

EarlyStopping::EarlyStopping(std::string monitor,
                             double min_delta,
                             int64_t patience,
                             int verbose,
                             std::string mode,
                             std::optional<double> baseline,
                             bool restore_best_weights,
                             int64_t start_from_epoch)
    : EarlyStopping(EarlyStoppingOptions{.monitor = std::move(monitor),
                                         .min_delta = min_delta,
                                         .patience = patience,
                                         .verbose = verbose,
                                         .mode = std::move(mode),
                                         .baseline = baseline,
                                         .restore_best_weights = restore_best_weights,
                                         .start_from_epoch = start_from_epoch}) {}

EarlyStopping::EarlyStopping(EarlyStoppingOptions options) : options_(std::move(options)) {
    options_.min_delta = std::abs(options_.min_delta);
    check_mode("EarlyStopping", options_.mode);
    if (options_.patience < 0 || options_.start_from_epoch < 0)
        throw errors::InvalidArgumentError(
            fmt::format("EarlyStopping: patience and start_from_epoch must be >= 0, got {} and {}",
                        options_.patience,
                        options_.start_from_epoch));
}

void EarlyStopping::on_train_begin(const Logs&) {
    wait_ = 0;
    stopped_epoch_ = 0;
    best_epoch_ = 0;
    best_.reset();
    best_weights_.clear();
    maximize_ = resolve_maximize("EarlyStopping", options_.mode, options_.monitor, model());
}

void EarlyStopping::on_epoch_end(int64_t epoch, const Logs& logs) {
    const auto it = logs.find(options_.monitor);
    if (it == logs.end()) {
        logging::warn("EarlyStopping conditioned on metric {} which is not available",
                      options_.monitor);
        return;
    }
    if (epoch < options_.start_from_epoch) return;
    const double current = it->second;
    if (options_.restore_best_weights && best_weights_.empty()) {
        best_weights_ = model()->get_weights();
        best_epoch_ = epoch;
    }
    ++wait_;
    if (is_improvement(current, best_, maximize_, options_.min_delta)) {
        best_ = current;
        best_epoch_ = epoch;
        if (options_.restore_best_weights) best_weights_ = model()->get_weights();
        // The wait restarts only when the epoch also beats the baseline.
        if (!options_.baseline ||
            is_improvement(current, options_.baseline, maximize_, options_.min_delta))
            wait_ = 0;
        return;
    }
    if (wait_ >= options_.patience && epoch > 0) {
        stopped_epoch_ = epoch;
        model()->stop_training = true;
    }
}

void EarlyStopping::on_train_end(const Logs&) {
    if (stopped_epoch_ > 0 && options_.verbose > 0)
        fmt::print("Epoch {}: early stopping\n", stopped_epoch_ + 1);
    if (options_.restore_best_weights && !best_weights_.empty()) {
        if (options_.verbose > 0)
            fmt::print("Restoring model weights from the end of the best epoch: {}.\n",
                       best_epoch_ + 1);
        model()->set_weights(best_weights_);
    }
}

// ---- ReduceLROnPlateau ----

ReduceLROnPlateau::ReduceLROnPlateau(ReduceLROnPlateauOptions options)
    : options_(std::move(options)) {
    if (options_.factor >= 1.0)
        throw errors::InvalidArgumentError(fmt::format(
            "ReduceLROnPlateau does not support a factor >= 1.0, got factor={}", options_.factor));
    options_.min_delta = std::abs(options_.min_delta);
    check_mode("ReduceLROnPlateau", options_.mode);
}

void ReduceLROnPlateau::on_train_begin(const Logs&) {
    best_.reset();
    cooldown_counter_ = 0;
    wait_ = 0;
    maximize_ = resolve_maximize("ReduceLROnPlateau", options_.mode, options_.monitor, model());
}

void ReduceLROnPlateau::on_epoch_end(int64_t epoch, const Logs& logs) {
    auto* optimizer = model()->optimizer();
    const auto it = logs.find(options_.monitor);
    if (it == logs.end()) {
        logging::warn("Learning rate reduction is conditioned on metric {} which is not available",
                      options_.monitor);
        return;
    }
    const double current = it->second;
    if (cooldown_counter_ > 0) {
        --cooldown_counter_;
        wait_ = 0;
    }
    if (is_improvement(current, best_, maximize_, options_.min_delta)) {
        best_ = current;
        wait_ = 0;
    } else if (cooldown_counter_ == 0) {
        if (++wait_ >= options_.patience) {
            const double old_lr = optimizer->current_learning_rate();
            if (old_lr > static_cast<double>(static_cast<float>(options_.min_lr))) {
                const double new_lr = std::max(old_lr * options_.factor, options_.min_lr);
                optimizer->set_learning_rate(new_lr);
                if (options_.verbose > 0)
                    fmt::print("\nEpoch {}: ReduceLROnPlateau reducing learning rate to {}.\n",
                               epoch + 1,
                               new_lr);
                cooldown_counter_ = options_.cooldown;
                wait_ = 0;
            }
        }
    }
}

}  // namespace tapeflow::keras::callbacks
