// The number of CPU threads tapeflow's kernels use (element-wise loops, reductions, matmul and
// conv slices, the optimizers' fused updates). OpenBLAS follows it inside tapeflow's kernels.
#pragma once

#include <tapeflow/core/export.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow {

/// Threads the CPU kernels use: the last set_num_threads, else OMP_NUM_THREADS, else the cores.
int num_threads();

/// Sets the CPU kernels' thread count for the whole process (every thread that runs ops).
/// 1 runs each kernel on its calling thread: the fastest choice for small models and on a machine
/// already busy with other work, where threads that wait for each other lose most of their time.
/// InvalidArgumentError when n < 1.
void set_num_threads(int n);

}  // namespace tapeflow

TAPEFLOW_API_END
