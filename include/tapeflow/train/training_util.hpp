// The global step: an int64 scalar, non-trainable variable named
// "global_step", one per process; optimizers increment it when it is passed to apply_gradients.
#pragma once

#include <cstdint>
#include <optional>

#include <tapeflow/autograd/variable.hpp>
#include <tapeflow/core/export.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow::train {

/// Creates the global step (0); InvalidArgumentError ('"global_step" already exists.') if it
/// exists.
Variable create_global_step();
/// The global step: the one created here, else a live variable named "global_step" (which must be
/// an integer scalar: InvalidArgumentError otherwise), else nullopt.
std::optional<Variable> get_global_step();
/// get_global_step(), creating it when missing.
Variable get_or_create_global_step();
/// The current value of a step variable.
int64_t global_step(const Variable& step);

}  // namespace tapeflow::train

TAPEFLOW_API_END
