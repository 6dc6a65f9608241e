// The device collectives (device_collectives.hpp): the CUDA plugin's NCCL path when it has one,
// else host staging. Only CUDA tensors get here, so the plugin is already loaded.
#include "distribute/device_collectives.hpp"

#include "ops/backend_plugin.hpp"

namespace tapeflow::distribute::detail {

std::optional<Tensor> device_all_reduce(const Tensor& t, ReduceOp op) {
    const CudaPlugin* plugin = cuda_plugin();
    if (plugin == nullptr || plugin->device_all_reduce == nullptr) return std::nullopt;
    return plugin->device_all_reduce(t, op);
}

}  // namespace tapeflow::distribute::detail
