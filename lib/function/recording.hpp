// A tf::function's trace: what its function did on the first call with a signature.
//
// NOTE [Function trace]: tapeflow is eager, so a tf::function traces by running its function once,
// eagerly, while recording: every op apply() runs (an OpTrace: the ops of a GradientTape's
// backward walk inside the function too, so the gradient computation is part of the trace), every
// variable read (its value at a replay is the variable's value then, not the traced tensor), the
// seed arguments of random ops (a replay draws what eager execution would draw next), and host
// steps: work whose effect is not an op's output — an optimizer's apply_gradients, a Variable
// assignment, a summary or tf::print — recorded as one callable run again at every replay on that
// replay's tensors. Every other C++ statement of the function runs while tracing only, as Python
// code does under tf.function. The plan (plan.hpp) turns the recording into a schedule.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <tapeflow/core/tensor.hpp>

#include "function/trace_hooks.hpp"
#include "ops/op_trace.hpp"

namespace tapeflow::function_detail {

/// The seed arguments a random op was called with (random_ops.cpp's next_stream).
struct RandomCall {
    Op op;
    DType dtype;
    std::optional<uint64_t> op_seed;
    uint64_t blocks = 0;
    SeedSource seed_source;  // set: a replay's op seed comes from here (note_seed_source)
};

/// A variable read or a host step, between the traced ops (`position`: the number of ops traced
/// before it).
struct TraceEvent {
    std::size_t position = 0;
    std::shared_ptr<VariableState> variable;  // a read: the variable
    Tensor read;                              //   and the tensor it returned
    std::string what;                         // a host step: its name,
    std::vector<Tensor> inputs;               //   its inputs
    HostBody body;                            //   and what it runs
    bool is_read() const { return variable != nullptr; }
};

class Recording {
public:
    /// `first_trace`: variables may be created (TensorFlow allows it on the first trace only).
    Recording(std::string function_name, bool first_trace)
        : name_(std::move(function_name)), first_trace_(first_trace) {}

    OpTrace& ops() { return ops_; }
    const OpTrace& ops() const { return ops_; }
    const std::vector<TraceEvent>& events() const { return events_; }
    /// The random op traced as call `index`, if that call is one.
    const RandomCall* random_call(std::size_t index) const;
    const std::string& name() const { return name_; }
    /// Host reads (item(), to_vector(), data()) the function made outside host steps.
    uint64_t host_reads() const { return host_reads_; }

    void add_read(std::shared_ptr<VariableState> variable, const Tensor& read);
    void add_host_step(std::string_view what, std::vector<Tensor> inputs, HostBody body);
    void add_random(RandomCall call) {
        if (pending_seed_ && call.op_seed == pending_seed_->first) {
            call.seed_source = std::move(pending_seed_->second);
            pending_seed_.reset();
        }
        randoms_.push_back({ops_.calls().size(), std::move(call)});
    }
    void set_seed_source(uint64_t seed, SeedSource source) {
        pending_seed_.emplace(seed, std::move(source));
    }
    void check_variable_creation(std::string_view variable) const;
    void set_host_reads(uint64_t n) { host_reads_ = n; }

private:
    std::string name_;
    bool first_trace_;
    OpTrace ops_;
    std::vector<TraceEvent> events_;
    std::vector<std::pair<std::size_t, RandomCall>> randoms_;  // (call index, its seeds)
    std::optional<std::pair<uint64_t, SeedSource>> pending_seed_;
    uint64_t host_reads_ = 0;
};

/// Installs a recording (and its OpTrace) on this thread for the scope's lifetime.
class RecordingScope {
public:
    explicit RecordingScope(Recording& recording);
    ~RecordingScope();
    RecordingScope(const RecordingScope&) = delete;
    RecordingScope& operator=(const RecordingScope&) = delete;

private:
    Recording* previous_;
    OpTraceScope ops_;
};

/// Hides the active recording and op trace for the scope's lifetime (a host step's body).
class [[nodiscard]] NotRecording {
public:
    NotRecording();
    ~NotRecording();
    NotRecording(const NotRecording&) = delete;
    NotRecording& operator=(const NotRecording&) = delete;

private:
    Recording* recording_;
    OpTrace* ops_;
};

}  // namespace tapeflow::function_detail
