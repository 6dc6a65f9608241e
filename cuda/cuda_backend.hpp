// The CUDA backend's interface to the core, in plain C++ (no CUDA headers), so lib/ can use it.
#pragma once

#include <cstdint>

#include "core/backend.hpp"

namespace tapeflow {

/// The CUDA device backend (memory, copies). Safe to call on machines without a GPU or driver:
/// device_count() is then 0 and unavailable_reason() says why.
DeviceBackend& cuda_backend();

/// Counters of the caching allocator of one CUDA device (what tf::memory_stats does not show).
struct CudaAllocatorStats {
    int64_t reserved_bytes = 0;  // held from cudaMalloc: blocks in use plus the cache
    int64_t cached_bytes = 0;    // free blocks kept for reuse
    int64_t malloc_calls = 0;    // cudaMalloc calls since the start
    int64_t cache_hits = 0;      // allocations served from the cache
    int64_t cache_flushes = 0;   // times the cache was given back to the driver (OOM retries)
};
CudaAllocatorStats cuda_allocator_stats(int device);
/// Synchronizes `device` and gives every cached block back to the driver.
void cuda_empty_cache(int device);
/// Waits until every op queued on `device`'s stream has finished (errors of those ops surface
/// here as tapeflow errors).
void cuda_synchronize(int device);

}  // namespace tapeflow
