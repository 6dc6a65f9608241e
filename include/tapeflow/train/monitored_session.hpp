// The fault-tolerant training loop: MonitoredTrainingSession restores the
// latest checkpoint of its directory on start (deferring variables created later, such as optimizer
// slots), runs hooks around each step (periodic checkpoints, summaries, step counter, ...) and
// saves a final checkpoint on close. A killed job rerun with the same code resumes where it left
// off.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <tapeflow/autograd/variable.hpp>
#include <tapeflow/core/export.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/train/checkpoint_reader.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow::train {

/// A callback around MonitoredTrainingSession::run. `step` is the global step: before the step in
/// before_run, after it in after_run (so after the first step of a fresh run, after_run sees 1 when
/// the step function passes the global step to the optimizer). A hook ends the loop with
/// request_stop(); exceptions from hooks propagate out of run().
class SessionRunHook {
public:
    virtual ~SessionRunHook();
    /// Once, when the session starts (after the restore: the global step is the restored one).
    virtual void begin();
    virtual void before_run(int64_t step);
    virtual void after_run(int64_t step, const Tensor& result);
    /// Once, when the session closes normally (not after a step that raised).
    virtual void end();

    /// True once the hook asked the session to stop.
    bool stop_requested() const { return stop_requested_; }

protected:
    /// Makes MonitoredTrainingSession::should_stop() true.
    void request_stop() { stop_requested_ = true; }

private:
    bool stop_requested_ = false;
};

struct MonitoredTrainingSessionOptions {
    /// Where checkpoints and summaries go; "" = no checkpoints, no summaries.
    std::string checkpoint_dir = "";
    /// Periodic checkpoints every so many global steps, or (taking precedence when set) every so
    /// many seconds; neither: only the final checkpoint of close().
    std::optional<int64_t> save_checkpoint_steps = 1000;
    std::optional<double> save_checkpoint_secs = {};
    /// Summaries written inside run() are recorded every so many steps (and the loss as "loss").
    std::optional<int64_t> save_summaries_steps = 100;
    /// "global_step/sec" every so many steps (0: never).
    int64_t log_step_count_steps = 100;
    std::vector<std::shared_ptr<SessionRunHook>> hooks = {};
    /// Checkpoints kept in checkpoint_dir (older ones are deleted; 0 keeps all).
    int max_to_keep = 5;
    /// Periodic checkpoints written in the background (CheckpointSaverHookOptions::async_save).
    bool async_checkpoints = false;
    /// The checkpoints' format (SaverOptions::format); restoring reads either.
    CheckpointFormat checkpoint_format = CheckpointFormat::tensorflow;
};

/// The training loop of a job that must survive being killed.
///
///     tf::Variable step = tf::train::get_or_create_global_step();
///     tf::train::MonitoredTrainingSession session({.checkpoint_dir = "ckpt", .hooks = {
///         std::make_shared<tf::train::StopAtStepHook>(tf::train::StopAtStepHookOptions{.last_step
///         = 1000})}});
///     while (!session.should_stop())
///         session.run([&] { return opt.minimize(loss_fn, {}, step); });
class MonitoredTrainingSession {
public:
    /// Gets or creates the global step and restores the latest checkpoint in checkpoint_dir, if
    /// any: every live global variable it holds now, and every variable created later under a name
    /// it holds (optimizer slots, EMA shadows) at creation. Live variables the checkpoint lacks
    /// keep their values (a warning names them). Then calls every hook's begin().
    explicit MonitoredTrainingSession(MonitoredTrainingSessionOptions options = {});
    /// Closes (final checkpoint) unless an exception is propagating; errors are logged, not thrown.
    ~MonitoredTrainingSession();
    MonitoredTrainingSession(const MonitoredTrainingSession&) = delete;
    MonitoredTrainingSession& operator=(const MonitoredTrainingSession&) = delete;

    /// True once a hook requested a stop (or after close()).
    bool should_stop() const;
    /// One step: hooks' before_run, `step_fn` (with the session's summary writer as the default
    /// writer, recording on summary steps), hooks' after_run. Returns what step_fn returned.
    /// Does not change the global step: pass it to the optimizer (minimize(..., global_step)).
    Tensor run(const std::function<Tensor()>& step_fn);
    /// Calls every hook's end() (the checkpoint hook saves a final checkpoint) and flushes the
    /// summaries. Idempotent. After a step raised, close() skips end(): no checkpoint of a failed
    /// step.
    void close();

    /// The global step variable.
    const Variable& global_step() const { return global_step_; }
    /// The checkpoint restored on start (a prefix), if any.
    const std::optional<std::string>& restored_from() const { return restored_from_; }

    struct State;  // internal

private:
    MonitoredTrainingSessionOptions options_;
    Variable global_step_;
    std::optional<std::string> restored_from_;
    std::vector<std::shared_ptr<SessionRunHook>> hooks_;
    std::shared_ptr<State> state_;
    bool closed_ = false;
    bool failed_ = false;
    int uncaught_at_start_ = 0;
};

}  // namespace tapeflow::train

TAPEFLOW_API_END
