// LibTorch's side of bench_checkpoint: torch::save and torch::load of the same tensors (a zip
// archive; LibTorch writes it in place, without fsync). Without LibTorch these register nothing.
#pragma once

#include <cstdint>
#include <string>

namespace torch_checkpoint_cases {

bool available();
/// Registers "checkpoint/save_<label>/libtorch" and "checkpoint/restore_<label>/libtorch" for
/// `count` float32 tensors of `elements` each, in files under `folder`.
void register_save_restore(const std::string& label,
                           int count,
                           int64_t elements,
                           const std::string& folder);

}  // namespace torch_checkpoint_cases
