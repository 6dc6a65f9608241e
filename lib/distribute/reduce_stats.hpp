// What DistributedOptimizer's last backward walk did with its buckets, so tests can check that
// all-reduces started while the walk was still running (the overlap), not only after it.
#pragma once

#include <cstddef>

namespace tapeflow::distribute::detail {

struct ReduceStats {
    std::size_t buckets = 0;
    std::size_t started_before_last_gradient =
        0;  // all-reduces started while gradients were pending
};

/// Of the last compute_gradients / minimize on this thread.
ReduceStats& last_reduce_stats();

}  // namespace tapeflow::distribute::detail
