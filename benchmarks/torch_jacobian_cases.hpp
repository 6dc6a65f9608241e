// LibTorch's side of bench_jacobian: the same jacobians, registered next to tapeflow's so one run
// measures both. Without LibTorch (Debian's libtorch-dev) these register nothing.
#pragma once

#include <cstdint>

namespace torch_jacobian_cases {

/// jacobian of y = tanh(x W + b), x [1, n]: one backward over batched grad_outputs (what
/// torch.autograd.grad(is_grads_batched=True) runs) and, as "jacobian_loop", one backward per row.
void register_tanh_layer(int64_t n);
/// batch_jacobian of the same layer on x [batch, n], both ways.
void register_batch_tanh_layer(int64_t batch, int64_t n);

}  // namespace torch_jacobian_cases
