// Keras' AutoCastVariable, without a separate class: a variable marked autocast (a layer's weight
// under a mixed policy) reads as the thread's autocast dtype while an AutocastScope is open (a
// Keras layer's call, with its compute dtype), through a differentiable cast, so gradients reach
// the float32 variable in float32. Other reads (optimizers, checkpoints) see the variable's dtype.
#pragma once

#include <optional>

#include <tapeflow/autograd/variable.hpp>
#include <tapeflow/core/dtype.hpp>

namespace tapeflow::detail {

/// This thread's autocast dtype; nullopt: no casting.
std::optional<DType>& autocast_dtype();

/// Sets the autocast dtype for its lifetime (nullopt: none), restoring the previous one.
class AutocastScope {
public:
    explicit AutocastScope(std::optional<DType> dtype) : previous_(autocast_dtype()) {
        autocast_dtype() = dtype;
    }
    ~AutocastScope() { autocast_dtype() = previous_; }
    AutocastScope(const AutocastScope&) = delete;
    AutocastScope& operator=(const AutocastScope&) = delete;

private:
    std::optional<DType> previous_;
};

/// Marks a floating variable as cast on read inside an AutocastScope.
void set_autocast(const Variable& variable, bool autocast);

}  // namespace tapeflow::detail
