// NCCL all_reduce of a CUDA tensor (nccl_collectives.cpp): the CUDA plugin's device collective.
#pragma once

#include <optional>

#include <tapeflow/core/tensor.hpp>
#include <tapeflow/distribute.hpp>

namespace tapeflow::distribute::detail {

/// all_reduce on the tensor's GPU, or nullopt when the GPUs cannot be used (then: host staging).
std::optional<Tensor> nccl_all_reduce(const Tensor& t, ReduceOp op);

}  // namespace tapeflow::distribute::detail
