// Launchers of the kernels of current models' ops (topk_kernels.cu, depthwise_kernels.cu), in
// plain C++ as launch.hpp's (which defines Elem and Window): pointers, sizes and scalars only.
#pragma once

#include "launch.hpp"

namespace tapeflow::cuda_launch {

// ---- sorting (topk_kernels.cu) ----

/// TopKV2 of `rows` rows of n elements (any real elem): the k first of each row in the CPU's order
/// (value descending, NaN largest, ties to the lower index) into values [rows, k] and int32
/// indices [rows, k].
cudaError_t top_k(Elem elem,
                  const void* x,
                  void* values,
                  int32_t* indices,
                  int64_t rows,
                  int64_t n,
                  int64_t k,
                  cudaStream_t stream);

// ---- depthwise convolution (depthwise_kernels.cu); NHWC, filter [kh, kw, c, mult] ----

/// y [n, oh, ow, c * mult] of x [n, h, w, c] (float32/float64).
cudaError_t depthwise_conv2d(Elem elem,
                             const Window& w,
                             int64_t mult,
                             const void* x,
                             const void* f,
                             void* y,
                             cudaStream_t stream);
/// dx [n, h, w, c] from the filter and dy [n, oh, ow, c * mult] (writes every cell).
cudaError_t depthwise_backprop_input(Elem elem,
                                     const Window& w,
                                     int64_t mult,
                                     const void* f,
                                     const void* dy,
                                     void* dx,
                                     cudaStream_t stream);
/// df [kh, kw, c, mult] from x and dy (writes every element).
cudaError_t depthwise_backprop_filter(Elem elem,
                                      const Window& w,
                                      int64_t mult,
                                      const void* x,
                                      const void* dy,
                                      void* df,
                                      cudaStream_t stream);

}  // namespace tapeflow::cuda_launch
