// Declarations of the CPU kernels, one line per kernel, grouped by the file that defines them.
// register_creation_cpu() (creation_cpu.cpp) puts them in the kernel registry.
#pragma once

#include "ops/dispatch.hpp"

namespace tapeflow::cpu {

// creation_cpu.cpp
void identity_kernel(const KernelContext& ctx);
void cast_kernel(const KernelContext& ctx);
void fill_kernel(const KernelContext& ctx);
void one_hot_kernel(const KernelContext& ctx);

// random_cpu.cpp
void random_uniform_kernel(const KernelContext& ctx);
void random_normal_kernel(const KernelContext& ctx);
void truncated_normal_kernel(const KernelContext& ctx);
void random_shuffle_kernel(const KernelContext& ctx);

}  // namespace tapeflow::cpu
