// The number of CPU threads tapeflow's kernels use (element-wise loops, reductions, matmul and
// conv slices, the optimizers' fused updates). OpenBLAS follows it inside tapeflow's kernels.
#pragma once

#include <tapeflow/core/export.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow {

/// Threads the CPU kernels use: the last set_num_threads, else OMP_NUM_THREADS, else the cores.
int num_threads();

/// Sets the CPU kernels' thread count for the whole process (every thread that runs ops).
/// 1 runs each kernel on its calling thread: the fastest choice for tiny models. On a machine
/// busy with other work more threads are no slower than 1 (idle ones sleep; a loop's caller takes
/// the chunks of threads that are not running: docs/performance.md "Threads").
/// InvalidArgumentError when n < 1.
void set_num_threads(int n);

}  // namespace tapeflow

TAPEFLOW_API_END
