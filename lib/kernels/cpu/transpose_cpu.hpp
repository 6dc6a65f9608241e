// The CPU transpose kernel (transpose_cpu.cpp), registered with the other shape kernels by
// register_array_cpu() (array_ops_cpu.cpp).
#pragma once

#include "ops/dispatch.hpp"

namespace tapeflow::cpu {

void transpose_kernel(const KernelContext& ctx);

}  // namespace tapeflow::cpu
