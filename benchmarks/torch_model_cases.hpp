// LibTorch's side of bench_models: the same einsum and convolutions, registered next to
// tapeflow's so one run measures both. Without LibTorch (Debian's libtorch-dev) these register
// nothing.
#pragma once

namespace torch_model_cases {

/// einsum "bqhd,bkhd->bhqk" of [8, 256, 4, 32] operands, forward + backward (torch::einsum).
void register_einsum();
/// depthwise 3x3 SAME on [8, 64, 56, 56] (groups = channels), forward + backward.
void register_depthwise();
/// transposed 3x3 stride-2 convolution [8, 64, 16, 16] -> [8, 32, 32, 32], forward + backward.
void register_conv_transpose();

}  // namespace torch_model_cases
