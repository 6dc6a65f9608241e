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

EarlyStopping::EarlyStopping(std::string monitor,
                             int64_t patience,
                             bool restore_best_weights,
                             double min_delta,
                             std::string mode)
    : monitor_(std::move(monitor)),
      mode_(std::move(mode)),
      patience_(patience),
      restore_best_weights_(restore_best_weights),
      min_delta_(std::abs(min_delta)) {
    if (mode_ != "auto" && mode_ != "min" && mode_ != "max")
        throw errors::InvalidArgumentError(fmt::format(
            "EarlyStopping: mode must be \"auto\", \"min\" or \"max\", got \"{}\"", mode_));
}

void EarlyStopping::on_train_begin(const Logs&) {
    wait_ = 0;
    stopped_epoch_ = 0;
    best_epoch_ = 0;
    best_weights_.clear();
    if (mode_ == "auto") {
        const auto maximize = maximize_for(monitor_, model());
        if (!maximize)
            throw errors::InvalidArgumentError(fmt::format(
                "EarlyStopping received monitor={} but cannot tell whether it should be "
                "maximized or minimized; pass mode \"max\" or \"min\"",
                monitor_));
        maximize_ = *maximize;
    } else {
        maximize_ = mode_ == "max";
    }
    best_ = maximize_ ? -std::numeric_limits<double>::infinity()
                      : std::numeric_limits<double>::infinity();
}

void EarlyStopping::on_epoch_end(int64_t epoch, const Logs& logs) {
    const auto it = logs.find(monitor_);
    if (it == logs.end()) {
        logging::warn("EarlyStopping conditioned on metric {} which is not available", monitor_);
        return;
    }
    const double current = it->second;
    if (restore_best_weights_ && best_weights_.empty()) {
        best_weights_ = model()->get_weights();
        best_epoch_ = epoch;
    }
    ++wait_;
    const bool improved = maximize_ ? current - min_delta_ > best_ : current + min_delta_ < best_;
    if (improved) {
        best_ = current;
        best_epoch_ = epoch;
        if (restore_best_weights_) best_weights_ = model()->get_weights();
        wait_ = 0;
        return;
    }
    if (wait_ >= patience_ && epoch > 0) {
        stopped_epoch_ = epoch;
        model()->stop_training = true;
    }
}

void EarlyStopping::on_train_end(const Logs&) {
    if (restore_best_weights_ && !best_weights_.empty()) model()->set_weights(best_weights_);
}

}  // namespace tapeflow::keras::callbacks
