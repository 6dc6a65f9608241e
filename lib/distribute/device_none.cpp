// The device collectives of a build without NCCL (device_collectives.hpp): CUDA tensors always go
// through host staging.
#include "distribute/device_collectives.hpp"

namespace tapeflow::distribute::detail {

bool device_collectives_built() {
    return false;
}
std::optional<Tensor> device_all_reduce(const Tensor& /*t*/, ReduceOp /*op*/) {
    return std::nullopt;
}

}  // namespace tapeflow::distribute::detail
