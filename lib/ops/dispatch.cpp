// The kernel registry.
#include "ops/dispatch.hpp"

#include <tapeflow/core/error.hpp>

#include "kernels/isa/dispatch.hpp"

namespace tapeflow {

void KernelRegistry::add(Op op, DeviceType device, KernelFn fn, DTypeSet dtypes) {
    KernelEntry& entry = entries_[static_cast<int>(op)][static_cast<int>(device)];
    if (entry.fn != nullptr) {
        throw errors::InternalError(fmt::format(
            "two kernels registered for op '{}' on device type {}; this is a tapeflow bug",
            op_name(op), static_cast<int>(device)));
    }
    entry = {fn, dtypes};
}

bool KernelRegistry::has(Op op, DeviceType device) const {
    return entries_[static_cast<int>(op)][static_cast<int>(device)].fn != nullptr;
}

KernelFn KernelRegistry::find(Op op, Device device, DType dtype) const {
    const KernelEntry& entry = entries_[static_cast<int>(op)][static_cast<int>(device.type())];
    if (entry.fn == nullptr || !entry.dtypes.contains(dtype)) {
        throw errors::UnimplementedError(
            fmt::format("No kernel for op '{}' on {} with dtype {}{}", op_name(op), device.str(),
                        dtype_name(dtype),
                        entry.fn == nullptr ? " (the op has no kernel on this device type)"
                                            : " (the kernel does not support this dtype)"),
            std::string(op_type(op)));
    }
    return entry.fn;
}

const KernelRegistry& kernel_registry() {
    static const KernelRegistry registry = [] {
        KernelRegistry r;
        cpu_isa::register_kernels(r);  // the kernel set for this CPU (lib/kernels/isa)
#ifdef TAPEFLOW_HAVE_CUDA
        register_cuda_kernels(r);
#endif
        return r;
    }();
    return registry;
}

}  // namespace tapeflow
