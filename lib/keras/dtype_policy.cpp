// Keras' DTypePolicy (keras/src/dtype_policies/dtype_policy.py) and the global policy.
#include <mutex>

#include <fmt/format.h>

#include <tapeflow/core/error.hpp>
#include <tapeflow/keras/dtype_policy.hpp>

namespace tapeflow::keras::mixed_precision {
namespace {

[[noreturn]] void bad_policy(const std::string& name) {
    throw errors::InvalidArgumentError(
        fmt::format("Cannot convert '{}' to a mixed precision DTypePolicy. Valid policies include "
                    "'mixed_float16', 'mixed_bfloat16', and the name of any float dtype such as "
                    "'float32'.",
                    name));
}

struct GlobalPolicy {
    std::mutex mutex;
    Policy policy{"float32"};
};

GlobalPolicy& global() {
    static GlobalPolicy g;
    return g;
}

}  // namespace

Policy::Policy(std::string name) : name_(std::move(name)) {
    if (name_ == "mixed_float16") {
        compute_ = DType::float16;
        variable_ = DType::float32;
        return;
    }
    if (name_ == "mixed_bfloat16") {
        compute_ = DType::bfloat16;
        variable_ = DType::float32;
        return;
    }
    DType dtype{};
    try {
        dtype = parse_dtype(name_);
    } catch (const errors::InvalidArgumentError&) {
        bad_policy(name_);
    }
    // Keras takes its dtype names only ("float32", not "float" or "tf.float32").
    if (dtype_name(dtype) != name_) bad_policy(name_);
    compute_ = variable_ = dtype;
}

void set_global_policy(const Policy& policy) {
    GlobalPolicy& g = global();
    const std::lock_guard lock(g.mutex);
    g.policy = policy;
}

void set_global_policy(const std::string& name) {
    set_global_policy(Policy(name));
}

Policy global_policy() {
    GlobalPolicy& g = global();
    const std::lock_guard lock(g.mutex);
    return g.policy;
}

}  // namespace tapeflow::keras::mixed_precision
