// Collectives on GPU memory (NCCL) for CUDA tensors: device_collectives.cpp calls the CUDA
// plugin's cuda/nccl_collectives.cpp (built when meson finds CUDA, NCCL and MPI). When the GPUs
// cannot be used (no NCCL in this build, processes sharing one GPU, which NCCL refuses, or a
// tensor on another GPU than the communicator's) the functions return nullopt and collectives.cpp
// stages through the host.
// Every process must make the same calls (collectives.cpp checks the devices agree first).
#pragma once

#include <optional>

#include <tapeflow/core/tensor.hpp>
#include <tapeflow/distribute.hpp>

namespace tapeflow::distribute::detail {

/// all_reduce of a CUDA tensor on its GPU, or nullopt (then: host staging).
std::optional<Tensor> device_all_reduce(const Tensor& t, ReduceOp op);

}  // namespace tapeflow::distribute::detail
