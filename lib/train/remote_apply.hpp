// Optimizers whose variables live in another process: tf::train::Server (lib/distribute/server.cpp)
// installs a hook that sends apply_gradients of variables placed on parameter-server tasks to
// those tasks, which apply them with their optimizer of the same name. Not public API.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include <tapeflow/train/optimizer.hpp>

namespace tapeflow::detail {

/// Applies what it can remotely and the rest through `optimizer` itself; false when none of the
/// variables is remote (then the caller applies everything as usual).
using RemoteApplyFn = bool (*)(train::Optimizer& optimizer,
                               const std::vector<train::GradAndVar>& grads_and_vars,
                               const std::optional<Variable>& global_step);

/// Installs the hook (nullptr removes it).
void set_remote_apply(RemoteApplyFn fn);
/// Whether a hook is installed (minimize then takes the path through apply_gradients).
bool remote_apply_installed();
/// Calls the hook, unless none is installed or this thread is inside it already (its local part
/// goes through apply_gradients again): true when the hook applied the gradients.
bool apply_remotely(train::Optimizer& optimizer,
                    const std::vector<train::GradAndVar>& grads_and_vars,
                    const std::optional<Variable>& global_step);

/// The live optimizer named `name`, nullptr when none is (names are unique among live ones).
train::Optimizer* find_optimizer(std::string_view name);

}  // namespace tapeflow::detail
