// Variable-creation observers: callbacks run right after a Variable is constructed and named.
// Checkpoints use them for deferred restore (optimizer slots and EMA shadows created after a
// restore get their saved values at creation). Internal: not part of the public API.
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

}  // namespace tapeflow::detail
