// Internal variable hooks for checkpoints: creation observers (callbacks run right after a Variable
// is constructed and named: deferred restore of optimizer slots and EMA shadows created after a
// restore) and a copy-free value replacement for restores. Not part of the public API.
#pragma once

#include <cstdint>
#include <functional>

#include <tapeflow/autograd/variable.hpp>

namespace tapeflow::detail {

using VariableCreatedFn = std::function<void(Variable& created)>;

/// Registers `fn` (called in the creating thread, outside every registry lock; an exception it
/// throws propagates out of the Variable constructor). Returns an id for removal.
int64_t add_variable_observer(VariableCreatedFn fn);
/// Unregisters an observer; unknown ids are ignored.
void remove_variable_observer(int64_t id);
/// Runs the observers for a just-created variable (called by the Variable constructor).
void notify_variable_observers(Variable& created);

/// Makes `value` (a fresh tensor nobody else writes: same shape, dtype and device as the variable)
/// the variable's buffer without copying it — a restore's freshly read tensors. Earlier reads keep
/// the old buffer, as with assign().
void replace_variable_value(Variable& var, Tensor value);

}  // namespace tapeflow::detail
