// The ready SessionRunHooks of MonitoredTrainingSession, each built from a
// <Hook>Options struct: stop at a step, periodic checkpoints, loss summaries, the NaN guard, loss
// logging, the step rate, and a terminal progress bar. "Unset" integer/seconds fields are 0.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <tapeflow/core/error.hpp>
#include <tapeflow/core/export.hpp>
#include <tapeflow/train/monitored_session.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow::train {

class Saver;

/// Raised by NanTensorHook when the loss is NaN or infinite (code UNKNOWN, as TensorFlow's
/// Python-side exceptions map). The failing step is not checkpointed.
class NanLossDuringTrainingError : public errors::OpError {
public:
    explicit NanLossDuringTrainingError(const std::string& message)
        : errors::OpError(errors::Code::unknown, message) {}
};

/// Exactly one of num_steps (counted from the global step at begin) and last_step.
struct StopAtStepHookOptions {
    int64_t num_steps = 0;
    int64_t last_step = 0;
};
class StopAtStepHook : public SessionRunHook {
public:
    explicit StopAtStepHook(StopAtStepHookOptions options = {});
    void begin() override;
    void after_run(int64_t step, const Tensor& result) override;
    /// The global step at which the loop stops (known after begin()).
    int64_t last_step() const { return last_step_; }

private:
    StopAtStepHookOptions options_;
    int64_t last_step_ = 0;
};

/// Saves "<checkpoint_dir>/<checkpoint_basename>-<step>" every save_steps global steps or every
/// save_secs seconds (exactly one), at begin when the directory has no checkpoint yet, and at end.
struct CheckpointSaverHookOptions {
    std::string checkpoint_dir;
    int64_t save_steps = 0;
    double save_secs = 0;
    std::string checkpoint_basename = "model.ckpt";
    int max_to_keep = 5;
    /// Periodic saves in the background (SaverOptions::async): the loop waits only for the copy of
    /// the values; end() waits until the final checkpoint is durable.
    bool async_save = false;
    /// SaverOptions::format.
    CheckpointFormat format = CheckpointFormat::tensorflow;
};
class CheckpointSaverHook : public SessionRunHook {
public:
    explicit CheckpointSaverHook(CheckpointSaverHookOptions options = {});
    ~CheckpointSaverHook() override;
    void begin() override;
    void after_run(int64_t step, const Tensor& result) override;
    void end() override;
    /// The Saver (its last_checkpoints() are this hook's files).
    Saver& saver();

private:
    void save(int64_t step);
    std::vector<std::string> own_checkpoints(const std::vector<std::string>& listed) const;
    CheckpointSaverHookOptions options_;
    std::unique_ptr<Saver> saver_;
    std::optional<int64_t> last_saved_step_;
    std::chrono::steady_clock::time_point last_save_time_;
};

/// Writes each step's result (a one-element float tensor) as scalar "loss" every save_steps steps
/// to an event file in output_dir (shared with the other hooks and the session writing there), as
/// TF1's hook does: on the first run and then once the step passes the last written one by
/// save_steps, labelled with the global step after the run (1, 101, 201, ... from 0), and a
/// SessionLog START event at the first run's step.
struct SummarySaverHookOptions {
    std::string output_dir;
    int64_t save_steps = 100;
};
class SummarySaverHook : public SessionRunHook {
public:
    explicit SummarySaverHook(SummarySaverHookOptions options = {});
    void before_run(int64_t step) override;
    void after_run(int64_t step, const Tensor& result) override;
    void end() override;

private:
    SummarySaverHookOptions options_;
    std::optional<int64_t>
        last_written_;              // the step of the last summary (none before the first run)
    bool request_ = false;          // this run's result is to be written
    std::shared_ptr<void> writer_;  // keeps the directory's event file open
};

/// Raises NanLossDuringTrainingError ("NaN loss during training.") when a step's result has a NaN
/// or infinity, or (fail_on_nan_loss = false) logs a warning and requests a stop.
struct NanTensorHookOptions {
    bool fail_on_nan_loss = true;
};
class NanTensorHook : public SessionRunHook {
public:
    explicit NanTensorHook(NanTensorHookOptions options = {});
    void after_run(int64_t step, const Tensor& result) override;

private:
    NanTensorHookOptions options_;
};

/// Logs "step = <step>, loss = <value> (<secs> sec)" at INFO every every_n_iter runs.
struct LoggingTensorHookOptions {
    int64_t every_n_iter = 100;
};
class LoggingTensorHook : public SessionRunHook {
public:
    explicit LoggingTensorHook(LoggingTensorHookOptions options = {});
    void after_run(int64_t step, const Tensor& result) override;

private:
    LoggingTensorHookOptions options_;
    int64_t runs_ = 0;
    std::chrono::steady_clock::time_point last_;
    bool timed_ = false;
};

/// Measures global steps per second every every_n_steps steps: logs it and, with output_dir,
/// writes scalar "global_step/sec".
struct StepCounterHookOptions {
    int64_t every_n_steps = 100;
    std::string output_dir = "";
};
class StepCounterHook : public SessionRunHook {
public:
    explicit StepCounterHook(StepCounterHookOptions options = {});
    void begin() override;
    void after_run(int64_t step, const Tensor& result) override;

private:
    StepCounterHookOptions options_;
    std::shared_ptr<void> writer_;  // keeps the directory's event file open
    std::optional<int64_t> last_step_;
    std::chrono::steady_clock::time_point last_time_;
};

/// A progress bar: "[=====>    ] 120/1000  12%  35.2 steps/s  ETA 0:00:25  loss 0.1234". On a
/// terminal it redraws one line; otherwise (a log file, a pipe) it prints a plain line at most
/// every refresh_secs_plain seconds and at the end. total_steps is the last global step (0:
/// unknown).
struct ProgressBarHookOptions {
    int64_t total_steps = 0;
    int width = 40;
    std::FILE* stream = nullptr;     ///< nullptr: stdout
    double refresh_secs = 0.1;       ///< terminal redraw interval
    double refresh_secs_plain = 10;  ///< plain-line interval when the stream is not a terminal
};
class ProgressBarHook : public SessionRunHook {
public:
    explicit ProgressBarHook(ProgressBarHookOptions options = {});
    void begin() override;
    void after_run(int64_t step, const Tensor& result) override;
    void end() override;
    /// The text of the bar for a state (no terminal control characters); public for tests.
    std::string render(int64_t step, double steps_per_sec, std::optional<double> loss) const;

private:
    void draw(int64_t step, bool final_line);
    ProgressBarHookOptions options_;
    bool tty_ = false;
    std::optional<int64_t> start_step_;
    int64_t last_step_ = 0;
    std::optional<double> loss_;
    std::chrono::steady_clock::time_point start_;
    std::chrono::steady_clock::time_point last_draw_;
    std::optional<int64_t> drawn_step_;
};

}  // namespace tapeflow::train

TAPEFLOW_API_END
