// The trace hooks (trace_hooks.hpp) and the recording they fill (recording.hpp).
#include "function/recording.hpp"

#include <fmt/format.h>

#include <tapeflow/core/error.hpp>

#include "core/host_reads.hpp"

namespace tapeflow::function_detail {

Recording*& active_recording() {
    thread_local Recording* recording = nullptr;
    return recording;
}

const RandomCall* Recording::random_call(std::size_t index) const {
    for (const auto& [at, call] : randoms_)
        if (at == index) return &call;
    return nullptr;
}

void Recording::add_read(std::shared_ptr<VariableState> variable, const Tensor& read) {
    TraceEvent e;
    e.position = ops_.calls().size();
    e.variable = std::move(variable);
    e.read = read;
    events_.push_back(std::move(e));
}

void Recording::add_host_step(std::string_view what, std::vector<Tensor> inputs, HostBody body) {
    TraceEvent e;
    e.position = ops_.calls().size();
    e.what = std::string(what);
    e.inputs = std::move(inputs);
    e.body = std::move(body);
    events_.push_back(std::move(e));
}

void Recording::check_variable_creation(std::string_view variable) const {
    if (first_trace_) return;
    throw errors::InvalidArgumentError(fmt::format(
        "tf::function '{}' tried to create variable '{}' on a trace after the first: a "
        "tf::function only supports creating variables on the first call (create them outside, "
        "or once, e.g. when a member is still undefined)",
        name_,
        variable));
}

RecordingScope::RecordingScope(Recording& recording)
    : previous_(active_recording()), ops_(recording.ops()) {
    active_recording() = &recording;
}

RecordingScope::~RecordingScope() {
    active_recording() = previous_;
}

NotRecording::NotRecording()
    : recording_(active_recording()), ops_(tapeflow::detail::active_op_trace()) {
    active_recording() = nullptr;
    tapeflow::detail::active_op_trace() = nullptr;
}

NotRecording::~NotRecording() {
    active_recording() = recording_;
    tapeflow::detail::active_op_trace() = ops_;
}

void host_step(std::string_view what, std::vector<Tensor> inputs, const HostBody& body) {
    Recording* recording = active_recording();
    if (recording == nullptr) {
        body(inputs);
        return;
    }
    {
        const NotRecording hidden;
        const tapeflow::detail::UncountedHostReads uncounted;
        body(inputs);
    }
    recording->add_host_step(what, std::move(inputs), body);
}

void note_variable_read(const std::shared_ptr<VariableState>& variable, const Tensor& read) {
    if (Recording* recording = active_recording()) recording->add_read(variable, read);
}

void note_random(Op op, DType dtype, std::optional<uint64_t> op_seed, uint64_t blocks) {
    if (Recording* recording = active_recording())
        recording->add_random({op, dtype, op_seed, blocks});
}

void note_seed_source(uint64_t seed, SeedSource source) {
    if (Recording* recording = active_recording())
        recording->set_seed_source(seed, std::move(source));
}

void note_variable_creation(std::string_view name) {
    if (const Recording* recording = active_recording()) recording->check_variable_creation(name);
}

}  // namespace tapeflow::function_detail
