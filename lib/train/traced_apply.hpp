// apply_gradients inside a tf::function trace: one host step (NOTE [Function trace]), so that
// every replay updates the variables with that replay's gradients through the optimizer's own
// code (its slots, hyperparameters, decayed learning rate and iteration count as eagerly).
#pragma once

#include <optional>
#include <vector>

#include <tapeflow/train/optimizer.hpp>

namespace tapeflow::detail {

/// While a tf::function traces on this thread: runs `optimizer.apply_gradients(grads_and_vars,
/// global_step)` as a host step and returns true. Otherwise returns false (the caller applies).
bool apply_as_host_step(train::Optimizer& optimizer,
                        const std::vector<train::GradAndVar>& grads_and_vars,
                        const std::optional<Variable>& global_step);

}  // namespace tapeflow::detail
