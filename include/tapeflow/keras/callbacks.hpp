// tf::keras::callbacks: hooks into Model.fit (Keras 3's Callback), and the ready ones:
// TensorBoard (Keras' train/ and validation/ runs, epoch_<metric> tags), ModelCheckpoint (through
// tf::train::Saver) and EarlyStopping (Keras 3's patience rule, restore_best_weights).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <tapeflow/core/export.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/summary.hpp>
#include <tapeflow/train/saver.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow::keras {

class Model;

namespace callbacks {

/// Logs: "loss", metric names, "val_loss", "val_<metric>" (epoch ends); the running values
/// (batch ends).
using Logs = std::map<std::string, double>;

/// Override what you need; fit sets model() before on_train_begin. Epochs and batches count from 0.
class Callback {
public:
    virtual ~Callback();
    virtual void on_train_begin(const Logs& logs);
    virtual void on_train_end(const Logs& logs);
    virtual void on_epoch_begin(int64_t epoch, const Logs& logs);
    virtual void on_epoch_end(int64_t epoch, const Logs& logs);
    virtual void on_train_batch_begin(int64_t batch, const Logs& logs);
    virtual void on_train_batch_end(int64_t batch, const Logs& logs);
    Model* model() const { return model_; }
    void set_model(Model* model) { model_ = model; }
    /// Whether on_train_batch_end needs the running loss and metrics (reading them waits for the
    /// device, so fit computes them only for callbacks that do).
    virtual bool needs_batch_logs() const { return true; }

private:
    Model* model_ = nullptr;
};

/// Writes the epoch logs for TensorBoard: "<log_dir>/train" gets epoch_loss, epoch_<metric> and
/// epoch_learning_rate; "<log_dir>/validation" gets epoch_loss, epoch_<metric> (from val_*) and
/// evaluation_<name>_vs_iterations (at the optimizer's iterations). Steps are 0-based epochs.
class TensorBoard : public Callback {
public:
    explicit TensorBoard(std::string log_dir = "logs");
    void on_train_begin(const Logs& logs) override;
    void on_epoch_end(int64_t epoch, const Logs& logs) override;
    void on_train_end(const Logs& logs) override;
    bool needs_batch_logs() const override { return false; }

private:
    std::string log_dir_;
    std::optional<summary::SummaryWriter> train_, validation_;
};

/// Saves the model's variables (and the optimizer's) with tf::train::Saver at each epoch end:
/// `filepath` is a checkpoint prefix where "{epoch}" becomes the 1-based epoch; the directory's
/// "checkpoint" file names the latest. save_best_only: only when `monitor` improved (max for
/// accuracy-like metrics, min otherwise).
class ModelCheckpoint : public Callback {
public:
    explicit ModelCheckpoint(std::string filepath,
                             bool save_best_only = false,
                             std::string monitor = "val_loss");
    ~ModelCheckpoint() override;
    void on_epoch_end(int64_t epoch, const Logs& logs) override;
    bool needs_batch_logs() const override { return false; }
    /// The prefixes written, oldest first.
    const std::vector<std::string>& saved() const { return saved_; }

private:
    std::string filepath_, monitor_;
    bool save_best_only_;
    std::optional<double> best_;
    std::unique_ptr<train::Saver> saver_;
    std::vector<std::string> saved_;
};

/// EarlyStopping's arguments by name (Keras 3's keyword arguments).
struct EarlyStoppingOptions {
    std::string monitor = "val_loss";
    double min_delta = 0;
    int64_t patience = 0;
    int verbose = 0;
    std::string mode = "auto";
    std::optional<double> baseline = std::nullopt;
    bool restore_best_weights = false;
    int64_t start_from_epoch = 0;
};

/// Stops fit when `monitor` has not improved by more than min_delta for `patience` epochs (Keras
/// 3: never at epoch 0); restore_best_weights puts back the weights of the best epoch at the end.
/// mode "auto": max for metrics where higher is better (accuracy, precision, recall), min for
/// losses; InvalidArgumentError when neither is known (pass mode "min" or "max"). A baseline: the
/// wait restarts only on epochs that also beat it. Epochs before start_from_epoch are ignored.
/// The arguments in Keras 3's positional order.
class EarlyStopping : public Callback {
public:
    explicit EarlyStopping(std::string monitor = "val_loss",
                           double min_delta = 0,
                           int64_t patience = 0,
                           int verbose = 0,
                           std::string mode = "auto",
                           std::optional<double> baseline = std::nullopt,
                           bool restore_best_weights = false,
                           int64_t start_from_epoch = 0);
    explicit EarlyStopping(EarlyStoppingOptions options);
    void on_train_begin(const Logs& logs) override;
    void on_epoch_end(int64_t epoch, const Logs& logs) override;
    void on_train_end(const Logs& logs) override;
    bool needs_batch_logs() const override { return false; }
    /// The epoch fit stopped at (0: it did not stop early) and the best one.
    int64_t stopped_epoch() const { return stopped_epoch_; }
    int64_t best_epoch() const { return best_epoch_; }

private:
    EarlyStoppingOptions options_;
    bool maximize_ = false;
    std::optional<double> best_;
    int64_t wait_ = 0, stopped_epoch_ = 0, best_epoch_ = 0;
    std::vector<Tensor> best_weights_;
};

/// Keras' ReduceLROnPlateau: after `patience` epochs without an improvement of `monitor` by more
/// than min_delta, multiplies the optimizer's learning rate by `factor` (at least min_lr), then
/// waits `cooldown` epochs. factor >= 1 raises InvalidArgumentError.
struct ReduceLROnPlateauOptions {
    std::string monitor = "val_loss";
    double factor = 0.1;
    int64_t patience = 10;
    int verbose = 0;
    std::string mode = "auto";
    double min_delta = 1e-4;
    int64_t cooldown = 0;
    double min_lr = 0;
};
class ReduceLROnPlateau : public Callback {
public:
    explicit ReduceLROnPlateau(ReduceLROnPlateauOptions options = {});
    void on_train_begin(const Logs& logs) override;
    void on_epoch_end(int64_t epoch, const Logs& logs) override;
    bool needs_batch_logs() const override { return false; }

private:
    ReduceLROnPlateauOptions options_;
    bool maximize_ = false;
    std::optional<double> best_;
    int64_t wait_ = 0, cooldown_counter_ = 0;
};

/// Keras' LearningRateScheduler: at each epoch's start, sets the optimizer's learning rate to
/// schedule(epoch, current learning rate).
class LearningRateScheduler : public Callback {
public:
    using Schedule = std::function<double(int64_t epoch, double learning_rate)>;
    explicit LearningRateScheduler(Schedule schedule, int verbose = 0);
    void on_epoch_begin(int64_t epoch, const Logs& logs) override;
    bool needs_batch_logs() const override { return false; }

private:
    Schedule schedule_;
    int verbose_;
};

/// Keras' CSVLogger: one row per epoch, "epoch" then the log keys sorted (with "val_<key>"
/// columns added when the first epoch has no validation keys; missing values "NA"), values as
/// Python's repr of a float. append: keeps the file and writes no header when it has lines.
class CSVLogger : public Callback {
public:
    explicit CSVLogger(std::string filename, std::string separator = ",", bool append = false);
    void on_train_begin(const Logs& logs) override;
    void on_epoch_end(int64_t epoch, const Logs& logs) override;
    void on_train_end(const Logs& logs) override;
    bool needs_batch_logs() const override { return false; }

private:
    std::string filename_, separator_;
    bool append_, header_ = true;
    std::vector<std::string> keys_;
    std::string text_;  // the file's content, rewritten atomically each epoch
};

/// Keras' TerminateOnNaN: stops fit after a batch whose loss is NaN or infinite (raise_error:
/// throws InvalidArgumentError instead).
class TerminateOnNaN : public Callback {
public:
    explicit TerminateOnNaN(bool raise_error = false);
    void on_train_batch_end(int64_t batch, const Logs& logs) override;

private:
    bool raise_error_;
};

/// Keras' BackupAndRestore: writes "<backup_dir>/latest.weights.h5" and
/// "training_metadata.json" ({"epoch": next epoch, "batch": 0}) at each epoch end; at the start
/// of fit, restores them when present (the model's weights, and fit resumes at that epoch). The
/// optimizer's state is not part of the backup. delete_checkpoint: the directory is removed when
/// fit ends normally.
class BackupAndRestore : public Callback {
public:
    explicit BackupAndRestore(std::string backup_dir, bool delete_checkpoint = true);
    void on_train_begin(const Logs& logs) override;
    void on_epoch_end(int64_t epoch, const Logs& logs) override;
    void on_train_end(const Logs& logs) override;
    bool needs_batch_logs() const override { return false; }

private:
    std::string backup_dir_;
    bool delete_checkpoint_;
};

}  // namespace callbacks
}  // namespace tapeflow::keras

TAPEFLOW_API_END
