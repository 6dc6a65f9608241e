// The .cu kernels' launchers, in plain C++: pointers, sizes and scalars only. .cu files include no
// tapeflow header beyond lib/random/philox.hpp (nvcc cannot compile fmt's consteval checks), and the
// g++-compiled ops_cuda.cpp turns KernelContexts into these calls. Each returns the launch status.
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

namespace tapeflow::cuda_launch {

/// out[i] = pattern for i < n, with elements of `element_size` bytes (1, 2, 4 or 8).
cudaError_t fill_bits(void* out, int64_t n, uint64_t pattern, int element_size);

enum class Distribution { uniform, normal, truncated_normal };

/// Element i of `distribution` from the Philox stream (key, call), as a + b * sample: for uniform
/// a = minval, b = maxval - minval; for the normals a = mean, b = stddev. `is_double` selects
/// float64 output, else float32.
cudaError_t random(void* out, int64_t n, bool is_double, Distribution distribution, uint64_t key,
                   uint64_t call, double a, double b);

}  // namespace tapeflow::cuda_launch
