// The kernel registry.
#include "ops/dispatch.hpp"

#include <tapeflow/core/error.hpp>

#include "core/backend.hpp"
#include "kernels/isa/dispatch.hpp"

namespace tapeflow {

void KernelRegistry::add(Op op, DeviceType device, KernelFn fn, DTypeSet dtypes) {
    KernelEntry& entry = entries_[static_cast<int>(op)][static_cast<int>(device)];
    if (entry.fn != nullptr) {
        throw errors::InternalError(fmt::format(
            "two kernels registered for op '{}' on device type {}; this is a tapeflow bug",
            op_name(op),
            static_cast<int>(device)));
    }
    entry = {fn, dtypes};
}

bool KernelRegistry::has(Op op, DeviceType device) const {
    if (device != DeviceType::cpu) load_backend(device);  // a plugin registers on its first load
    return entries_[static_cast<int>(op)][static_cast<int>(device)].fn != nullptr;
}

KernelFn KernelRegistry::find(Op op, Device device, DType dtype) const {
    const KernelEntry& entry = entries_[static_cast<int>(op)][static_cast<int>(device.type())];
    if (entry.fn == nullptr && !device.is_cpu() && load_backend(device.type()).backend != nullptr) {
        // The plugin may have been loaded (and registered) just now.
        if (entry.fn != nullptr) return find(op, device, dtype);
    }
    if (entry.fn == nullptr || !entry.dtypes.contains(dtype)) {
        throw errors::UnimplementedError(
            fmt::format("No kernel for op '{}' on {} with dtype {}{}",
                        op_name(op),
                        device.str(),
                        dtype_name(dtype),
                        entry.fn == nullptr ? " (the op has no kernel on this device type)"
                                            : " (the kernel does not support this dtype)"),
            std::string(op_type(op)));
    }
    return entry.fn;
}

KernelRegistry& mutable_kernel_registry() {
    // The CPU kernels now; a plugin's (CUDA) when it is loaded, before any tensor of its device
    // exists (backend_plugin.cpp). Its entries are other memory than the CPU's: no race with
    // lookups of CPU kernels on other threads.
    static KernelRegistry registry = [] {
        KernelRegistry r;
        cpu_isa::register_kernels(r);  // the kernel set for this CPU (lib/kernels/isa)
        return r;
    }();
    return registry;
}

const KernelRegistry& kernel_registry() {
    return mutable_kernel_registry();
}

}  // namespace tapeflow
