// DeviceBackend: what a device type provides to the core (memory and copies). The CPU backend is
// built in; the CUDA backend is a plugin (libtapeflow_cuda.so) that the dispatch layer loads on
// first use (lib/ops/backend_plugin.cpp): core never includes or calls cuda/. Kernels are not
// here: they live in the kernel registry (lib/ops/dispatch.hpp).
#pragma once

#include <cstddef>
#include <string>

#include <tapeflow/core/device.hpp>
#include <tapeflow/core/storage.hpp>

namespace tapeflow {

class DeviceBackend {
public:
    virtual ~DeviceBackend() = default;
    /// Usable devices of this type (0 when the driver or hardware is missing).
    virtual int device_count() = 0;
    /// Why device_count() is 0, for error messages ("" when devices are present).
    virtual std::string unavailable_reason() = 0;
    virtual Allocator& allocator() = 0;
    /// Copies `nbytes` between host memory and this backend's devices, or within one of them.
    /// When it returns, the data is in place as far as any later op or host read can tell.
    virtual void copy(
        void* dst, Device dst_device, const void* src, Device src_device, std::size_t nbytes) = 0;

    // Kernel timing for the profiler (lib/profiler/op_scope.cpp). A backend without it keeps
    // these defaults: no markers, and the profiler records host times only.
    /// A marker enqueued on `device`'s stream behind the work queued so far; nullptr when the
    /// backend has none.
    virtual void* record_marker(Device device) {
        (void)device;
        return nullptr;
    }
    /// Microseconds of stream time from marker `from` to marker `to`; waits until `to` has passed.
    virtual double marker_elapsed_us(void* from, void* to) {
        (void)from;
        (void)to;
        return 0.0;
    }
    virtual void release_marker(void* marker) noexcept { (void)marker; }
};

/// The backend of `type`, or nullptr when tapeflow was built without it or its plugin cannot be
/// loaded.
DeviceBackend* find_backend(DeviceType type);

/// A plugin backend after its first load: the backend, or nullptr with the reason (`built`:
/// whether this build has the plugin at all; `error` names the missing library and the fix).
struct BackendLoad {
    DeviceBackend* backend = nullptr;
    bool built = false;
    std::string error;
};
/// Loads the plugin of `type` on the first call (implemented by the dispatch layer, which also
/// registers the plugin's kernels: lib/ops/backend_plugin.cpp).
const BackendLoad& load_backend(DeviceType type);

/// Throws unless `device` exists: UnimplementedError when its backend is not built in,
/// NotFoundError when its plugin or a library it needs cannot be loaded, InvalidArgumentError for
/// an index >= device_count().
void check_device(Device device);

}  // namespace tapeflow
