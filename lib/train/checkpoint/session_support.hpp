// Helpers shared by MonitoredTrainingSession and its hooks: one summary writer per directory (so
// the session and every hook writing to checkpoint_dir share one event file), the loss of a step's
// result, and the current global step.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include <tapeflow/core/tensor.hpp>
#include <tapeflow/summary.hpp>

namespace tapeflow::train::session {

/// The live writer of `dir`, created when there is none (it closes with its last handle).
summary::SummaryWriter shared_writer(const std::string& dir);
/// shared_writer(dir), kept open by `keep` (a hook's member) so that later calls reuse its file.
summary::SummaryWriter kept_writer(const std::string& dir, std::shared_ptr<void>& keep);

/// The value of a one-element numeric result; nullopt for anything else.
std::optional<double> scalar_value(const Tensor& result);

/// The global step's value, 0 when there is none.
int64_t current_global_step();

}  // namespace tapeflow::train::session
