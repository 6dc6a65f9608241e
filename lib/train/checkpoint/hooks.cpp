// The ready hooks except the progress bar: stop at a step, periodic checkpoints, loss summaries,
// the NaN guard, loss logging and the step counter (TensorFlow's basic_session_run_hooks).
#include <algorithm>
#include <cmath>
#include <filesystem>

#include <fmt/format.h>

#include <tapeflow/core/logging.hpp>
#include <tapeflow/train/hooks.hpp>
#include <tapeflow/train/saver.hpp>

#include "train/checkpoint/checkpoint_file.hpp"
#include "train/checkpoint/checkpoint_state.hpp"
#include "train/checkpoint/session_support.hpp"

namespace tapeflow::train {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
}

}  // namespace

// ---- StopAtStepHook ----

StopAtStepHook::StopAtStepHook(StopAtStepHookOptions options) : options_(options) {
    if ((options_.num_steps > 0) == (options_.last_step > 0)) {
        throw errors::InvalidArgumentError(
            fmt::format("StopAtStepHook: exactly one of num_steps and last_step must be positive, "
                        "got num_steps={}, last_step={}",
                        options_.num_steps,
                        options_.last_step));
    }
}

void StopAtStepHook::begin() {
    const int64_t step = session::current_global_step();
    last_step_ = options_.num_steps > 0 ? step + options_.num_steps : options_.last_step;
    if (step >= last_step_) request_stop();  // a resumed job that already got there runs no step
}

void StopAtStepHook::after_run(int64_t step, const Tensor& /*result*/) {
    if (step >= last_step_) request_stop();
}

// ---- CheckpointSaverHook ----

// The listed checkpoints plus any unlisted "<basename>-<step>" file of the directory, oldest first.
std::vector<std::string> CheckpointSaverHook::own_checkpoints(
    const std::vector<std::string>& listed) const {
    namespace fs = std::filesystem;
    const std::string stem = options_.checkpoint_basename + "-";
    const auto step_of = [&](const std::string& prefix) -> int64_t {  // -1: not of this hook's form
        const std::string name = fs::path(prefix).filename().string();
        const std::string digits = name.starts_with(stem) ? name.substr(stem.size()) : "";
        if (digits.empty() || digits.size() > 18 ||
            digits.find_first_not_of("0123456789") != std::string::npos)
            return -1;
        return std::stoll(digits);
    };
    std::vector<std::string> out = listed;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(options_.checkpoint_dir, ec)) {
        const std::string name = entry.path().filename().string();
        if (!name.ends_with(".safetensors") && !name.ends_with(".index")) continue;
        const std::string prefix = ckpt::checkpoint_prefix(entry.path().string());
        const bool is_listed = std::any_of(listed.begin(), listed.end(), [&](const std::string& l) {
            return fs::path(l).filename() == fs::path(prefix).filename();
        });
        if (!is_listed && step_of(prefix) >= 0) out.push_back(prefix);
    }
    std::stable_sort(out.begin(), out.end(), [&](const std::string& a, const std::string& b) {
        return step_of(a) < step_of(b);
    });
    return out;
}

CheckpointSaverHook::CheckpointSaverHook(CheckpointSaverHookOptions options)
    : options_(std::move(options)) {
    if (options_.checkpoint_dir.empty())
        throw errors::InvalidArgumentError("CheckpointSaverHook: checkpoint_dir is empty");
    if (options_.save_steps > 0 && options_.save_secs > 0) {
        throw errors::InvalidArgumentError(
            "CheckpointSaverHook: give at most one of save_steps and save_secs");
    }
    saver_ = std::make_unique<Saver>(SaverOptions{.max_to_keep = options_.max_to_keep,
                                                  .format = options_.format,
                                                  .async = options_.async_save});
}

CheckpointSaverHook::~CheckpointSaverHook() = default;

Saver& CheckpointSaverHook::saver() {
    return *saver_;
}

void CheckpointSaverHook::begin() {
    const int64_t step = session::current_global_step();
    last_save_time_ = std::chrono::steady_clock::now();
    const auto state = ckpt::read_checkpoint_state(options_.checkpoint_dir);
    if (state) {
        // Resumed: keep deleting the older files (also those a kill left unlisted: saved, but the
        // state file not yet updated), and do not rewrite the restored step (variables restored
        // lazily, such as slots, do not exist yet).
        saver_->recover_last_checkpoints(own_checkpoints(state->all_model_checkpoint_paths));
        if (latest_checkpoint(options_.checkpoint_dir)) {
            last_saved_step_ = step;
            return;
        }
    }
    save(step);
}

void CheckpointSaverHook::after_run(int64_t step, const Tensor& /*result*/) {
    const bool by_steps = options_.save_steps > 0 && last_saved_step_ &&
                          step >= *last_saved_step_ + options_.save_steps;
    const bool by_secs =
        options_.save_secs > 0 && seconds_since(last_save_time_) >= options_.save_secs;
    if (by_steps || by_secs) save(step);
}

void CheckpointSaverHook::end() {
    const int64_t step = session::current_global_step();
    if (last_saved_step_ != step) save(step);
    saver_->wait();  // the job ends with its last checkpoint durable (async saves)
}

void CheckpointSaverHook::save(int64_t step) {
    const std::string prefix =
        (std::filesystem::path(options_.checkpoint_dir) / options_.checkpoint_basename).string();
    saver_->save(prefix, step);
    last_saved_step_ = step;
    last_save_time_ = std::chrono::steady_clock::now();
    logging::debug("Saved checkpoint {}-{}", prefix, step);
}

// ---- SummarySaverHook ----

SummarySaverHook::SummarySaverHook(SummarySaverHookOptions options) : options_(std::move(options)) {
    if (options_.output_dir.empty())
        throw errors::InvalidArgumentError("SummarySaverHook: output_dir is empty");
    if (options_.save_steps <= 0)
        throw errors::InvalidArgumentError("SummarySaverHook: save_steps must be positive");
}

// TF1's SecondOrStepTimer on the step the run will end at (the step before it + 1).
void SummarySaverHook::before_run(int64_t step) {
    request_ = !last_written_ || step + 1 >= *last_written_ + options_.save_steps;
}

void SummarySaverHook::after_run(int64_t step, const Tensor& result) {
    if (!request_) return;
    summary::SummaryWriter writer = session::kept_writer(options_.output_dir, writer_);
    if (!last_written_) {  // SessionLog START
        summary::Event start;
        start.step = step;
        start.session_log_status = 1;
        writer.add_event(start);
    }
    last_written_ = step;
    if (const auto loss = session::scalar_value(result)) writer.scalar("loss", *loss, step);
}

void SummarySaverHook::end() {
    if (writer_) session::kept_writer(options_.output_dir, writer_).flush();
}

// ---- NanTensorHook ----

NanTensorHook::NanTensorHook(NanTensorHookOptions options) : options_(options) {}

void NanTensorHook::after_run(int64_t /*step*/, const Tensor& result) {
    if (!result.defined() || !is_floating(result.dtype())) return;
    for (const double x : result.to_vector<double>()) {
        if (std::isfinite(x)) continue;
        if (options_.fail_on_nan_loss)
            throw NanLossDuringTrainingError("NaN loss during training.");
        logging::warn("Model diverged with loss = NaN.");
        request_stop();
        return;
    }
}

// ---- LoggingTensorHook ----

LoggingTensorHook::LoggingTensorHook(LoggingTensorHookOptions options) : options_(options) {
    if (options_.every_n_iter <= 0)
        throw errors::InvalidArgumentError("LoggingTensorHook: every_n_iter must be positive");
}

void LoggingTensorHook::after_run(int64_t step, const Tensor& result) {
    if (runs_++ % options_.every_n_iter != 0) return;
    const std::string loss = session::scalar_value(result)
                                 ? fmt::format("{:.6g}", *session::scalar_value(result))
                                 : (result.defined() ? result.str() : "(none)");
    if (timed_) {
        logging::info("step = {}, loss = {} ({:.3f} sec)", step, loss, seconds_since(last_));
    } else {
        logging::info("step = {}, loss = {}", step, loss);
    }
    last_ = Clock::now();
    timed_ = true;
}

// ---- StepCounterHook ----

StepCounterHook::StepCounterHook(StepCounterHookOptions options) : options_(std::move(options)) {
    if (options_.every_n_steps <= 0)
        throw errors::InvalidArgumentError("StepCounterHook: every_n_steps must be positive");
}

void StepCounterHook::begin() {
    last_step_ = session::current_global_step();
    last_time_ = Clock::now();
}

void StepCounterHook::after_run(int64_t step, const Tensor& /*result*/) {
    if (!last_step_ || step < *last_step_ + options_.every_n_steps) return;
    const double elapsed = seconds_since(last_time_);
    const double rate = elapsed > 0 ? static_cast<double>(step - *last_step_) / elapsed : 0.0;
    logging::info("global_step/sec: {:.4g}", rate);
    if (!options_.output_dir.empty()) {
        session::kept_writer(options_.output_dir, writer_).scalar("global_step/sec", rate, step);
    }
    last_step_ = step;
    last_time_ = Clock::now();
}

}  // namespace tapeflow::train
