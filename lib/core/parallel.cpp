// CPU thread count for kernels.
#include "core/parallel.hpp"

#include <omp.h>

namespace tapeflow {

int cpu_threads() { return omp_get_max_threads(); }  // follows omp_set_num_threads

}  // namespace tapeflow
