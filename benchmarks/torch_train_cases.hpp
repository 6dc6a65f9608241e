// LibTorch's side of bench_train: the same training steps (tutorial network, medium MLP, a 10M
// parameter Adam step) registered next to tapeflow's. Without LibTorch these register nothing.
#pragma once

#include <cstdint>

namespace torch_train_cases {

bool available();
void register_tutorial_step();
void register_mlp_step();
void register_adam_10m(int64_t n);
/// Runs `steps` medium-MLP training steps (for the peak-RSS measurement in a child process).
void run_mlp_steps(int steps);

}  // namespace torch_train_cases
