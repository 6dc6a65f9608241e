// Internal variable hooks for checkpoints: creation observers (callbacks run right after a Variable
// is constructed and named: deferred restore of optimizer slots and EMA shadows created after a
// restore), TF1 checkpoint keys, and a copy-free value replacement for restores. Not public API.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

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

/// Variables created in this thread while it lives get `key` (which must outlive the scope) as
/// their TF1 checkpoint key, made unique among live variables with "_1", "_2", ...: an optimizer
/// names its slots and state as TF1's do ("w/Adam", "w/Adam_1", "beta1_power"), so that the Saver's
/// TensorFlow format writes and reads the keys a TF1 program uses.
class CheckpointKeyScope {
public:
    explicit CheckpointKeyScope(const std::string& key);
    ~CheckpointKeyScope();
    CheckpointKeyScope(const CheckpointKeyScope&) = delete;
    CheckpointKeyScope& operator=(const CheckpointKeyScope&) = delete;

private:
    const std::string* previous_;
};

/// Whether a CheckpointKeyScope is open in this thread (an inner one takes precedence).
bool checkpoint_key_scope_active();

/// The variable's TF1 checkpoint key: the one it was created with, else its name.
const std::string& checkpoint_key(const Variable& var);

/// Makes `value` (a fresh tensor nobody else writes: same shape, dtype and device as the variable)
/// the variable's buffer without copying it — a restore's freshly read tensors. Earlier reads keep
/// the old buffer, as with assign().
void replace_variable_value(Variable& var, Tensor value);

}  // namespace tapeflow::detail
