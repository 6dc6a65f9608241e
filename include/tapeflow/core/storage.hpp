// Storage: a reference-counted byte buffer on one device, and the allocator interface behind it.
// The CPU allocator returns 64-byte-aligned memory (a cache line; enough for AVX-512 loads).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include <tapeflow/core/device.hpp>

namespace tapeflow {

/// Allocates device memory. Implementations throw errors::ResourceExhaustedError when out of memory
/// and must be thread-safe. The CUDA backend brings its own allocator.
class Allocator {
public:
    virtual ~Allocator() = default;
    virtual void* allocate(std::size_t nbytes, Device device) = 0;
    virtual void deallocate(void* ptr, std::size_t nbytes, Device device) noexcept = 0;
};

/// The host allocator: 64-byte-aligned blocks; blocks of 256 KiB and more are cached for reuse (up
/// to TAPEFLOW_CPU_CACHE_BYTES, default 1 GiB), since fresh large mappings page-fault on every use.
Allocator& cpu_allocator();
/// The allocator of `type`'s backend; throws UnimplementedError when that backend is not built in.
Allocator& allocator_for(DeviceType type);

/// Bytes held by tensors (Storage) on one device type; like TensorFlow's get_memory_info.
struct MemoryStats {
    int64_t bytes_in_use = 0;
    int64_t peak_bytes_in_use = 0;  // since the start or the last reset_peak_memory_stats
};
/// Tensor memory of `device`'s type (every CUDA device counts together).
MemoryStats memory_stats(Device device = Device::cpu());
/// Starts a new peak at the current bytes in use.
void reset_peak_memory_stats(Device device = Device::cpu());

/// An owned, untyped, uninitialized buffer of `nbytes` bytes on `device`. Tensors share a Storage
/// through std::shared_ptr; views (reshape, unstack, ...) point into it at an offset.
class Storage {
public:
    Storage(std::size_t nbytes, Device device);
    ~Storage();
    Storage(const Storage&) = delete;
    Storage& operator=(const Storage&) = delete;

    void* data() const { return data_; }
    std::size_t nbytes() const { return nbytes_; }
    Device device() const { return device_; }

private:
    void* data_ = nullptr;
    std::size_t nbytes_ = 0;
    Device device_;
    Allocator* allocator_ = nullptr;
};

}  // namespace tapeflow
