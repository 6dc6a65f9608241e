// TAPEFLOW_HD marks functions compiled for both host and device, so the CPU kernels and the CUDA
// kernels share one definition of the math (and the CPU tests exercise the GPU's formulas).
#pragma once

#if defined(__CUDACC__)
#define TAPEFLOW_HD __host__ __device__
#else
#define TAPEFLOW_HD
#endif
