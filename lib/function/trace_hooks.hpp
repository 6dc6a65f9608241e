// What the rest of the library tells a tf::function that is tracing on this thread (NOTE [Function
// trace] in lib/function/recording.hpp): variable reads, the seeds of random ops, variable
// creation, and host steps — work whose effect is not an op's output (an optimizer's update, an
// assignment, a summary, a print), recorded as one callable that every replay runs again.
// Outside a trace each hook costs one thread-local load.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include <tapeflow/core/tensor.hpp>

#include "ops/op.hpp"

namespace tapeflow {
struct VariableState;
}

namespace tapeflow::function_detail {

class Recording;

/// The recording of the tf::function tracing on this thread, or nullptr.
Recording*& active_recording();

inline bool tracing() {
    return active_recording() != nullptr;
}

/// A host step's body: runs on the step's input tensors (at the trace, then at every replay).
using HostBody = std::function<void(std::span<const Tensor>)>;

/// Runs `body(inputs)`. While a tf::function traces on this thread, the call is also recorded as
/// one step of the trace that runs `body` again at every replay, on that replay's values of
/// `inputs`; nothing `body` does is recorded (its ops, reads and host reads are its own). `what`
/// names the step in errors and in the concrete function's graph.
void host_step(std::string_view what, std::vector<Tensor> inputs, const HostBody& body);

/// Variable::value() tells the trace that `read` is the current value of `variable`.
void note_variable_read(const std::shared_ptr<VariableState>& variable, const Tensor& read);

/// A variable's value now (a replay's read).
Tensor current_value(const std::shared_ptr<VariableState>& variable);

/// next_stream() tells the trace the seed arguments of the random op about to run.
void note_random(Op op, DType dtype, std::optional<uint64_t> op_seed, uint64_t blocks);

/// Where a random op's op seed comes from when C++ state picks a new one per call (a Keras
/// layer's seed generator: detail::next_seed): called at every replay for that call's seed.
using SeedSource = std::function<std::optional<uint64_t>()>;

/// `seed` was just drawn from `source`: the random op that uses it as its op seed takes its seed
/// from `source` at every replay (as eager execution would call it again).
void note_seed_source(uint64_t seed, SeedSource source);

/// A Variable is being created: allowed on a function's first trace only (TensorFlow's rule);
/// InvalidArgumentError on a later one.
void note_variable_creation(std::string_view name);

}  // namespace tapeflow::function_detail
