// The entry point of libtapeflow_cuda.so: the table libtapeflow reads when it loads the plugin
// (lib/ops/backend_plugin.hpp).
#include <tapeflow/version.hpp>

#include "cuda_backend.hpp"
#include "ops/backend_plugin.hpp"
#include "ops_cuda.hpp"
#ifdef TAPEFLOW_HAVE_NCCL
#include "nccl_collectives.hpp"
#endif

extern "C" TAPEFLOW_PLUGIN_API const tapeflow::CudaPlugin* tapeflow_cuda_plugin() {
#ifdef TAPEFLOW_HAVE_NCCL
    constexpr auto device_all_reduce = &tapeflow::distribute::detail::nccl_all_reduce;
#else
    constexpr decltype(tapeflow::CudaPlugin::device_all_reduce) device_all_reduce = nullptr;
#endif
    static const tapeflow::CudaPlugin plugin{TAPEFLOW_VERSION_STRING,
                                             &tapeflow::cuda_backend(),
                                             tapeflow::register_cuda_kernels,
                                             device_all_reduce};
    return &plugin;
}
