// Collectives on GPU memory (NCCL) for CUDA tensors. Implemented by cuda/nccl_collectives.cpp when
// meson finds CUDA, NCCL and MPI, else by device_none.cpp. When the GPUs cannot be used (no NCCL
// in this build, processes sharing one GPU, which NCCL refuses, or a tensor on another GPU than
// the communicator's) the functions return nullopt and collectives.cpp stages through the host.
// Every process must make the same calls (collectives.cpp checks the devices agree first).
#pragma once

#include <optional>

#include <tapeflow/core/tensor.hpp>
#include <tapeflow/distribute.hpp>

namespace tapeflow::distribute::detail {

/// True when this build has the NCCL path.
bool device_collectives_built();
/// all_reduce of a CUDA tensor on its GPU, or nullopt (then: host staging).
std::optional<Tensor> device_all_reduce(const Tensor& t, ReduceOp op);

}  // namespace tapeflow::distribute::detail
