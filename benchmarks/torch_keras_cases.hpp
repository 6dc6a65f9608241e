// LibTorch's side of bench_keras: torch::nn modules for the same steps (the medium MLP and the
// digits convnet, 8 steps per iteration; one BatchNorm2d and one LayerNorm training step; LSTM
// and GRU forward and backward).
// Without LibTorch these register nothing.
#pragma once

#include <cstdint>

namespace torch_keras_cases {

bool available();
void register_cases(int64_t steps_per_iteration);

}  // namespace torch_keras_cases
