// Keras 3's LearningRateScheduler, CSVLogger, TerminateOnNaN and BackupAndRestore
// (keras/src/callbacks/): the same files, columns and resume rule.
#include <cmath>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <tapeflow/core/error.hpp>
#include <tapeflow/keras/callbacks.hpp>
#include <tapeflow/keras/model.hpp>

#include "io/file_util.hpp"

namespace tapeflow::keras::callbacks {

namespace fs = std::filesystem;

namespace {
Model& model_of(const Callback& cb, const char* name) {
    if (cb.model() == nullptr)
        throw errors::FailedPreconditionError(
            fmt::format("{}: no model (the callback runs inside Model::fit)", name));
    return *cb.model();
}

// Python's str(float): the shortest repr, with ".0" on integral values.
std::string python_float(double v) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    std::string s = fmt::format("{}", v);
    if (s.find_first_of(".e") == std::string::npos) s += ".0";
    return s;
}
}  // namespace

// ---- LearningRateScheduler ----

LearningRateScheduler::LearningRateScheduler(Schedule schedule, int verbose)
    : schedule_(std::move(schedule)), verbose_(verbose) {
    if (!schedule_)
        throw errors::InvalidArgumentError("LearningRateScheduler: the schedule is empty");
}

void LearningRateScheduler::on_epoch_begin(int64_t epoch, const Logs&) {
    train::Optimizer* optimizer = model_of(*this, "LearningRateScheduler").optimizer();
    const double lr = schedule_(epoch, optimizer->current_learning_rate());
    if (!std::isfinite(lr) || lr < 0)
        throw errors::InvalidArgumentError(fmt::format(
            "LearningRateScheduler: the schedule gave {} at epoch {} (a learning rate must be a "
            "finite number >= 0)",
            lr,
            epoch));
    optimizer->set_learning_rate(lr);
    if (verbose_ > 0)
        fmt::print(
            "\nEpoch {}: LearningRateScheduler setting learning rate to {}.\n", epoch + 1, lr);
}

// ---- CSVLogger ----

CSVLogger::CSVLogger(std::string filename, std::string separator, bool append)
    : filename_(std::move(filename)), separator_(std::move(separator)), append_(append) {
    if (filename_.empty()) throw errors::InvalidArgumentError("CSVLogger: empty filename");
}

void CSVLogger::on_train_begin(const Logs&) {
    text_.clear();
    keys_.clear();
    header_ = true;
    if (append_ && fs::exists(filename_)) {
        text_ = io::read_whole_file(filename_);
        header_ = text_.empty() || text_[0] == '\n' || text_[0] == '\r';
    }
    io::write_file_atomically(filename_, text_);
}

void CSVLogger::on_epoch_end(int64_t epoch, const Logs& logs) {
    const std::string line_end = "\r\n";  // Python's csv.excel dialect
    if (keys_.empty()) {
        bool has_val = false;
        for (const auto& [key, value] : logs) {
            keys_.push_back(key);  // std::map: sorted, as Keras' sorted(logs.keys())
            has_val = has_val || key.rfind("val_", 0) == 0;
        }
        if (!has_val) {
            const std::size_t n = keys_.size();
            for (std::size_t i = 0; i < n; ++i)
                keys_.push_back("val_" + keys_[i]);
        }
        if (header_) {
            text_ += "epoch";
            for (const auto& k : keys_)
                text_ += separator_ + k;
            text_ += line_end;
        }
    }
    text_ += std::to_string(epoch);
    for (const auto& k : keys_) {
        const auto it = logs.find(k);
        text_ += separator_ + (it == logs.end() ? std::string("NA") : python_float(it->second));
    }
    text_ += line_end;
    io::write_file_atomically(filename_, text_);
}

void CSVLogger::on_train_end(const Logs&) {
    keys_.clear();
}

// ---- TerminateOnNaN ----

TerminateOnNaN::TerminateOnNaN(bool raise_error) : raise_error_(raise_error) {}

void TerminateOnNaN::on_train_batch_end(int64_t batch, const Logs& logs) {
    const auto it = logs.find("loss");
    if (it == logs.end() || std::isfinite(it->second)) return;
    if (raise_error_)
        throw errors::InvalidArgumentError(fmt::format(
            "NaN or Inf loss encountered at batch {}. Loss value: {}. Terminating training "
            "immediately.",
            batch,
            it->second));
    fmt::print("Batch {}: Invalid loss, terminating training\n", batch);
    model_of(*this, "TerminateOnNaN").stop_training = true;
}

// ---- BackupAndRestore ----

BackupAndRestore::BackupAndRestore(std::string backup_dir, bool delete_checkpoint)
    : backup_dir_(std::move(backup_dir)), delete_checkpoint_(delete_checkpoint) {
    if (backup_dir_.empty())
        throw errors::InvalidArgumentError("BackupAndRestore: empty backup_dir argument passed");
}

void BackupAndRestore::on_train_begin(const Logs&) {
    Model& model = model_of(*this, "BackupAndRestore");
    const fs::path dir(backup_dir_);
    const fs::path weights = dir / "latest.weights.h5", metadata = dir / "training_metadata.json";
    if (fs::exists(weights)) {
        if (model.variables().empty())
            throw errors::FailedPreconditionError(fmt::format(
                "BackupAndRestore: model \"{}\" must be built before fit() to restore {} (call "
                "it on a batch of data first)",
                model.name(),
                weights.string()));
        model.load_weights(weights.string());
    }
    if (fs::exists(metadata)) {
        const std::string text = io::read_whole_file(metadata.string());
        const auto json = nlohmann::json::parse(text, nullptr, false);
        if (json.is_discarded() || !json.contains("epoch") || !json["epoch"].is_number_integer())
            throw errors::DataLossError(fmt::format(
                "BackupAndRestore: {} is not Keras' training metadata ({{\"epoch\": ..., "
                "\"batch\": ...}})",
                metadata.string()));
        model.resume_epoch = json["epoch"].get<int64_t>();
    }
}

void BackupAndRestore::on_epoch_end(int64_t epoch, const Logs&) {
    Model& model = model_of(*this, "BackupAndRestore");
    io::make_dirs(backup_dir_);
    const fs::path dir(backup_dir_);
    model.save_weights((dir / "latest.weights.h5").string());
    const nlohmann::json metadata = {{"epoch", epoch + 1}, {"batch", 0}};
    io::write_file_atomically((dir / "training_metadata.json").string(), metadata.dump());
}

void BackupAndRestore::on_train_end(const Logs&) {
    // Keras deletes the backup only when fit ends normally (an exception skips on_train_end).
    if (delete_checkpoint_ && fs::exists(backup_dir_)) fs::remove_all(backup_dir_);
}

}  // namespace tapeflow::keras::callbacks
