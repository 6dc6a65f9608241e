// The CUDA backend as a plugin: what libtapeflow_cuda.so (cuda/plugin.cpp) hands libtapeflow when
// it is loaded. The dispatch layer loads it on the first request for a CUDA device or kernel and
// registers its kernels; lib/core sees only its DeviceBackend (core/backend.hpp: load_backend).
#pragma once

#include <optional>

#include <tapeflow/core/tensor.hpp>

#include "core/backend.hpp"
#include "ops/dispatch.hpp"

namespace tapeflow {

namespace distribute {
enum class ReduceOp;  // <tapeflow/distribute.hpp>: the one name this table needs from it
}

struct CudaPlugin {
    const char* version;  // TAPEFLOW_VERSION_STRING of its build: must be libtapeflow's
    DeviceBackend* backend;
    void (*register_kernels)(KernelRegistry& registry);
    /// NCCL all_reduce of a CUDA tensor, or nullopt for host staging
    /// (distribute/device_collectives.hpp); nullptr when the plugin was built without NCCL.
    std::optional<Tensor> (*device_all_reduce)(const Tensor& t, distribute::ReduceOp op);
};

/// The plugin's entry point: extern "C" const CudaPlugin* tapeflow_cuda_plugin().
inline constexpr const char* kCudaPluginEntry = "tapeflow_cuda_plugin";
using CudaPluginEntry = const CudaPlugin* (*)();

/// The CUDA plugin, loaded (and its kernels registered) on the first call; nullptr when tapeflow
/// was built without CUDA or the plugin cannot be loaded (load_backend(DeviceType::cuda) says why).
const CudaPlugin* cuda_plugin();

}  // namespace tapeflow
