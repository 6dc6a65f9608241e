// tapeflow's plugins: libtapeflow_cuda.so (the CUDA backend, links the CUDA runtime and NCCL) and
// libtapeflow_mpi.so (the MPI transport, links libmpi), loaded on first use so that libtapeflow
// itself links neither (docs/install.md). A plugin calls back into libtapeflow only through the
// declarations marked TAPEFLOW_PLUGIN_API (exported, but not public API: no installed header).
#pragma once

#include <string>
#include <string_view>

#define TAPEFLOW_PLUGIN_API __attribute__((visibility("default")))

namespace tapeflow::detail {

/// The address of the extern "C" entry point `symbol` of plugin `file`: from the process itself
/// when the plugin is already linked in (test programs link it), else from dlopen of `file` in
/// the folder of the binary that holds libtapeflow, else by the dynamic loader's search path.
/// nullptr when none loads; `error` then holds dlerror()'s text of the first attempt.
/// `global`: the plugin's symbols (and its libraries') are made visible to later loads (MPI needs
/// this for its own components).
void* load_plugin_entry(std::string_view file, const char* symbol, bool global, std::string& error);

}  // namespace tapeflow::detail
