// MonitoredTrainingSession: restore on start (live variables now, later ones at creation), the
// default hooks (checkpoints, loss summaries, step counter) after the user's, summaries recorded on
// summary steps inside run(), and end() of every hook on a normal close.
#include <exception>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <tapeflow/core/error.hpp>
#include <tapeflow/core/logging.hpp>
#include <tapeflow/distribute.hpp>
#include <tapeflow/train/hooks.hpp>
#include <tapeflow/train/monitored_session.hpp>
#include <tapeflow/train/saver.hpp>
#include <tapeflow/train/training_util.hpp>

#include "autograd/variable_observers.hpp"
#include "distribute/wire.hpp"
#include "io/file_util.hpp"
#include "train/checkpoint/restore.hpp"
#include "train/checkpoint/session_support.hpp"

namespace tapeflow::train {

SessionRunHook::~SessionRunHook() = default;
void SessionRunHook::begin() {}
void SessionRunHook::before_run(int64_t /*step*/) {}
void SessionRunHook::after_run(int64_t /*step*/, const Tensor& /*result*/) {}
void SessionRunHook::end() {}

struct MonitoredTrainingSession::State {
    std::shared_ptr<PendingRestore> pending;  // deferred restore, armed for the session's life
    std::optional<summary::SummaryWriter> writer;
};

namespace {

std::shared_ptr<PendingRestore> restore_latest(const std::string& dir,
                                               std::optional<std::string>& restored_from) {
    const std::optional<std::string> latest = latest_checkpoint(dir);
    if (!latest) return nullptr;
    auto reader = ckpt::CheckpointReader::open_any(*latest);
    std::vector<std::pair<std::string, Variable>> targets;
    for (const Variable& v : global_variables())
        targets.emplace_back(reader->is_bundle() ? detail::checkpoint_key(v) : v.name(), v);
    const ckpt::RestoreOutcome outcome =
        ckpt::restore_variables(*reader, targets, /*strict=*/false);
    if (!outcome.not_in_checkpoint.empty()) {
        logging::warn("Checkpoint {} has no value for {}; they keep their initial values",
                      *latest,
                      fmt::join(outcome.not_in_checkpoint, ", "));
    }
    logging::info("Restored {} variables from {}{}",
                  targets.size() - outcome.not_in_checkpoint.size(),
                  *latest,
                  outcome.not_live.empty()
                      ? ""
                      : fmt::format(" ({} more when created)", outcome.not_live.size()));
    restored_from = *latest;
    return ckpt::defer_restore(std::move(reader), outcome.not_live);
}

}  // namespace

MonitoredTrainingSession::MonitoredTrainingSession(MonitoredTrainingSessionOptions options)
    : options_(std::move(options)),
      state_(std::make_shared<State>()),
      uncaught_at_start_(std::uncaught_exceptions()) {
    global_step_ = get_or_create_global_step();
    const std::string& dir = options_.checkpoint_dir;
    hooks_ = options_.hooks;
    for (const auto& hook : hooks_) {
        if (!hook) throw errors::InvalidArgumentError("MonitoredTrainingSession: a hook is null");
    }
    if (!dir.empty()) {
        io::make_dirs(dir);
        if (distribute::size() == 1) {
            state_->pending = restore_latest(dir, restored_from_);
        } else {  // the chief restores, every process takes its values (docs/distributed.md)
            const std::string from = distribute::detail::run_on_chief([&] {
                state_->pending = restore_latest(dir, restored_from_);
                return restored_from_.value_or("");
            });
            if (!from.empty()) {
                restored_from_ = from;
                distribute::broadcast_variables(global_variables(), distribute::chief_rank());
            }
        }
        CheckpointSaverHookOptions saver{.checkpoint_dir = dir,
                                         .max_to_keep = options_.max_to_keep,
                                         .async_save = options_.async_checkpoints,
                                         .format = options_.checkpoint_format};
        if (options_.save_checkpoint_secs && *options_.save_checkpoint_secs > 0) {
            saver.save_secs = *options_.save_checkpoint_secs;
        } else if (options_.save_checkpoint_steps && *options_.save_checkpoint_steps > 0) {
            saver.save_steps = *options_.save_checkpoint_steps;
        }
        hooks_.push_back(std::make_shared<CheckpointSaverHook>(saver));
        if (options_.save_summaries_steps && *options_.save_summaries_steps > 0) {
            state_->writer = session::shared_writer(dir);
            hooks_.push_back(std::make_shared<SummarySaverHook>(SummarySaverHookOptions{
                .output_dir = dir, .save_steps = *options_.save_summaries_steps}));
        }
        if (options_.log_step_count_steps > 0) {
            hooks_.push_back(std::make_shared<StepCounterHook>(StepCounterHookOptions{
                .every_n_steps = options_.log_step_count_steps, .output_dir = dir}));
        }
    }
    for (const auto& hook : hooks_)
        hook->begin();
}

MonitoredTrainingSession::~MonitoredTrainingSession() {
    if (std::uncaught_exceptions() > uncaught_at_start_) failed_ = true;  // leaving by an exception
    try {
        close();
    } catch (const std::exception& e) {
        logging::error("MonitoredTrainingSession: closing failed: {}", e.what());
    }
}

bool MonitoredTrainingSession::should_stop() const {
    if (closed_) return true;
    for (const auto& hook : hooks_) {
        if (hook->stop_requested()) return true;
    }
    return false;
}

Tensor MonitoredTrainingSession::run(const std::function<Tensor()>& step_fn) {
    if (closed_) throw errors::RuntimeError("MonitoredTrainingSession.run: the session is closed");
    if (!step_fn)
        throw errors::InvalidArgumentError(
            "MonitoredTrainingSession.run: the step function is empty");
    try {
        const int64_t before = train::global_step(global_step_);
        for (const auto& hook : hooks_)
            hook->before_run(before);
        Tensor result;
        {
            std::optional<summary::DefaultWriterScope> writer_scope;
            std::optional<summary::RecordIf> record;
            if (state_->writer) {
                writer_scope.emplace(*state_->writer);
                record.emplace(before % *options_.save_summaries_steps == 0);
            }
            result = step_fn();
        }
        const int64_t after = train::global_step(global_step_);
        for (const auto& hook : hooks_)
            hook->after_run(after, result);
        return result;
    } catch (...) {
        failed_ = true;
        throw;
    }
}

void MonitoredTrainingSession::close() {
    if (closed_) return;
    closed_ = true;
    if (!failed_) {
        for (const auto& hook : hooks_)
            hook->end();
    }
    if (state_->writer) state_->writer->flush();
    state_->pending.reset();
}

}  // namespace tapeflow::train
