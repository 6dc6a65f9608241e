// Storage: a reference-counted byte buffer on one device, and the allocator interface behind it.
// The CPU allocator returns 64-byte-aligned memory (a cache line; enough for AVX-512 loads).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include <tapeflow/core/device.hpp>
#include <tapeflow/core/export.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow {

namespace detail {
class Deferred;  // a computation that fills a Storage when it is first read (lib/core/deferred.hpp)
}

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

    /// The bytes. A storage whose contents are still deferred (fused element-wise chains, see
    /// NOTE [Deferred element-wise fusion] in lib/kernels/cpu/fusion.hpp) is allocated and computed
    /// first, so every reader sees finished data.
    void* data() const {
        if (pending()) [[unlikely]]
            materialize();
        return data_;
    }
    std::size_t nbytes() const { return nbytes_; }
    Device device() const { return device_; }

    /// Makes the contents the result of `computation`, run (into freshly allocated memory) on the
    /// first data() call; the memory allocated so far is released until then. Only for a storage
    /// no one has read yet (a kernel's fresh output).
    void defer(std::shared_ptr<detail::Deferred> computation);
    /// The pending computation, or nullptr once computed (or if there never was one).
    detail::Deferred* deferred() const { return pending() ? deferred_.get() : nullptr; }

private:
    // An atomic flag without <atomic> in this public header (parse time): GCC/Clang builtins.
    bool pending() const { return __atomic_load_n(&pending_, __ATOMIC_ACQUIRE); }
    void materialize() const;
    void allocate() const;

    std::shared_ptr<detail::Deferred> deferred_;  // set once before the storage is shared
    mutable bool pending_ = false;
    mutable void* data_ = nullptr;
    std::size_t nbytes_ = 0;
    Device device_;
    Allocator* allocator_ = nullptr;
};

}  // namespace tapeflow

TAPEFLOW_API_END
