// The remote-apply hook (remote_apply.hpp): one atomic pointer, read once per apply_gradients.
#include "train/remote_apply.hpp"

#include <atomic>

namespace tapeflow::train {
Optimizer* find_live_optimizer(std::string_view name);  // optimizer.cpp: its name registry
}

namespace tapeflow::detail {
namespace {

std::atomic<RemoteApplyFn> hook{nullptr};
thread_local bool inside_hook = false;

}  // namespace

void set_remote_apply(RemoteApplyFn fn) {
    hook.store(fn, std::memory_order_release);
}

bool remote_apply_installed() {
    return hook.load(std::memory_order_acquire) != nullptr;
}

bool apply_remotely(train::Optimizer& optimizer,
                    const std::vector<train::GradAndVar>& grads_and_vars,
                    const std::optional<Variable>& global_step) {
    const RemoteApplyFn fn = hook.load(std::memory_order_acquire);
    if (fn == nullptr || inside_hook) return false;
    inside_hook = true;
    struct Reset {
        ~Reset() { inside_hook = false; }
    } reset;
    return fn(optimizer, grads_and_vars, global_step);
}

train::Optimizer* find_optimizer(std::string_view name) {
    return train::find_live_optimizer(name);
}

}  // namespace tapeflow::detail
