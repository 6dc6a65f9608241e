// Loading the CUDA plugin (backend_plugin.hpp) and the error that names what is missing.
#include "ops/backend_plugin.hpp"

#include <cstring>

#include <fmt/format.h>

#include <tapeflow/version.hpp>

#include "core/plugin.hpp"
#include "plugin_config.hpp"

namespace tapeflow {
namespace {

struct LoadedCuda {
    BackendLoad load;
    const CudaPlugin* plugin = nullptr;
};

LoadedCuda load_cuda_plugin() {
    LoadedCuda loaded;
    BackendLoad& load = loaded.load;
    load.built = TAPEFLOW_CUDA_PLUGIN_BUILT;
    if (!load.built) {
        load.error =
            "tapeflow was built without CUDA (configure with -Dcuda=enabled on a machine "
            "with nvcc)";
        return loaded;
    }
    std::string error;
    void* entry =
        detail::load_plugin_entry(TAPEFLOW_CUDA_PLUGIN_FILE, kCudaPluginEntry, false, error);
    if (entry == nullptr) {
        load.error = fmt::format(
            "tapeflow's CUDA backend ({}) could not be loaded: {}. It needs {}: install the NVIDIA "
            "driver and the CUDA Toolkit {} (or NVIDIA's packages {}), or add the folder that "
            "holds them to LD_LIBRARY_PATH",
            TAPEFLOW_CUDA_PLUGIN_FILE,
            error,
            TAPEFLOW_CUDA_PLUGIN_NEEDS,
            TAPEFLOW_CUDA_MAJOR,
            TAPEFLOW_CUDA_PACKAGES);
        return loaded;
    }
    const CudaPlugin* plugin = reinterpret_cast<CudaPluginEntry>(entry)();
    if (std::strcmp(plugin->version, TAPEFLOW_VERSION_STRING) != 0) {
        load.error =
            fmt::format("{} is version {} but libtapeflow is {}: install both from the same build",
                        TAPEFLOW_CUDA_PLUGIN_FILE,
                        plugin->version,
                        TAPEFLOW_VERSION_STRING);
        return loaded;
    }
    plugin->register_kernels(mutable_kernel_registry());
    load.backend = plugin->backend;
    loaded.plugin = plugin;
    return loaded;
}

const LoadedCuda& loaded_cuda() {
    static const LoadedCuda loaded = load_cuda_plugin();  // once: a failed load stays failed
    return loaded;
}

}  // namespace

const BackendLoad& load_backend(DeviceType type) {
    static const BackendLoad none{nullptr, false, "no plugin for this device type"};
    return type == DeviceType::cuda ? loaded_cuda().load : none;
}

const CudaPlugin* cuda_plugin() {
    return loaded_cuda().plugin;
}

}  // namespace tapeflow
