// The global step: a process-wide int64 scalar variable.
#include <mutex>

#include <fmt/format.h>

#include <tapeflow/core/error.hpp>
#include <tapeflow/ops/creation.hpp>
#include <tapeflow/train/training_util.hpp>

namespace tapeflow::train {
namespace {

std::mutex& step_mutex() {
    static std::mutex m;
    return m;
}

std::optional<Variable>& the_step() {
    static std::optional<Variable> step;
    return step;
}

std::optional<Variable> find_step() {
    if (the_step()) return the_step();
    for (const Variable& v : global_variables()) {
        if (v.name() != "global_step") continue;
        if (!is_integer(v.dtype()) || v.shape().rank() != 0) {
            throw errors::InvalidArgumentError(fmt::format(
                "Existing \"global_step\" must be an integer scalar, got dtype {} and shape {}",
                dtype_name(v.dtype()),
                v.shape().str()));
        }
        return v;
    }
    return std::nullopt;
}

Variable make_step() {
    const DeviceScope cpu(Device::cpu());  // placed on the CPU, as TensorFlow does in eager mode
    Variable step(constant(int64_t{0}), {.name = "global_step", .trainable = false});
    the_step() = step;
    return step;
}

}  // namespace

Variable create_global_step() {
    const std::lock_guard lock(step_mutex());
    if (find_step()) throw errors::InvalidArgumentError("\"global_step\" already exists.");
    return make_step();
}

std::optional<Variable> get_global_step() {
    const std::lock_guard lock(step_mutex());
    return find_step();
}

Variable get_or_create_global_step() {
    const std::lock_guard lock(step_mutex());
    if (auto step = find_step()) return *step;
    return make_step();
}

int64_t global_step(const Variable& step) {
    if (!step.defined())
        throw errors::InvalidArgumentError("global_step: the variable handle is empty");
    return step.value().cast(DType::int64).item<int64_t>();
}

}  // namespace tapeflow::train
