// Storage and the 64-byte-aligned host allocator.
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <unordered_map>
#include <vector>

#include <tapeflow/core/error.hpp>
#include <tapeflow/core/storage.hpp>

#include "core/adopt.hpp"
#include "core/backend.hpp"
#include "core/deferred.hpp"
#include "core/small_blocks.hpp"

namespace tapeflow {
namespace {

constexpr std::size_t kCpuAlignment = kSmallBlockAlignment;
// Blocks from this size up are cached for reuse: glibc serves them with mmap/munmap, and every
// fresh mapping page-faults on first touch (about 4 us per 4 KiB page on these VMs), which made
// allocation, not arithmetic, the cost of large element-wise ops (measured against LibTorch,
// docs/performance.md).
constexpr std::size_t kCacheMinBytes = std::size_t{1} << 18;

// Size classes: four per power of two, so a reused block wastes at most 25%.
std::size_t size_class(std::size_t nbytes) {
    if (nbytes < kCacheMinBytes) return small_block_size(nbytes);
    const int top = 63 - __builtin_clzll(nbytes);
    const std::size_t step = std::size_t{1} << (top - 2);
    return (nbytes + step - 1) / step * step;
}

std::size_t cache_limit() {
    const char* env = std::getenv("TAPEFLOW_CPU_CACHE_BYTES");
    return env != nullptr ? std::strtoull(env, nullptr, 10) : (std::size_t{1} << 30);
}

class CpuAllocator final : public Allocator {
public:
    void* allocate(std::size_t nbytes, Device device) override {
        if (nbytes > kMaxBytes) throw_oom(nbytes, device);  // also keeps size_class from wrapping
        const std::size_t rounded = size_class(nbytes);
        if (rounded <= kSmallBlockMaxBytes) {
            if (void* cached = small_block_take(rounded)) return cached;
        } else if (rounded >= kCacheMinBytes) {
            const std::lock_guard lock(mutex_);
            auto it = free_.find(rounded);
            if (it != free_.end() && !it->second.empty()) {
                void* ptr = it->second.back();
                it->second.pop_back();
                cached_bytes_ -= rounded;
                return ptr;
            }
        }
        void* ptr = std::aligned_alloc(kCpuAlignment, rounded);
        if (ptr == nullptr) {
            release_cache();  // give cached blocks back and try once more
            ptr = std::aligned_alloc(kCpuAlignment, rounded);
        }
        if (ptr == nullptr) throw_oom(nbytes, device);
        return ptr;
    }

    void deallocate(void* ptr, std::size_t nbytes, Device /*device*/) noexcept override {
        const std::size_t rounded = size_class(nbytes);
        if (rounded <= kSmallBlockMaxBytes) {
            if (small_block_keep(ptr, rounded)) return;
        } else if (rounded >= kCacheMinBytes) {
            const std::lock_guard lock(mutex_);
            if (cached_bytes_ + rounded <= limit_) {
                try {
                    free_[rounded].push_back(ptr);
                    cached_bytes_ += rounded;
                    return;
                } catch (...) {  // no memory for the list entry: free the block instead
                }
            }
        }
        std::free(ptr);
    }

    void release_cache() noexcept {
        const std::lock_guard lock(mutex_);
        for (auto& [size, blocks] : free_) {
            for (void* p : blocks)
                std::free(p);
        }
        free_.clear();
        cached_bytes_ = 0;
    }

private:
    static constexpr std::size_t kMaxBytes = PTRDIFF_MAX;

    [[noreturn]] static void throw_oom(std::size_t nbytes, Device device) {
        throw errors::ResourceExhaustedError(
            fmt::format("OOM when allocating {} bytes on {}", nbytes, device.str()));
    }

    std::mutex mutex_;
    std::unordered_map<std::size_t, std::vector<void*>> free_;
    std::size_t cached_bytes_ = 0;
    const std::size_t limit_ = cache_limit();
};

}  // namespace

Allocator& cpu_allocator() {
    // Never destroyed: tensors in static objects may be freed after static destructors ran.
    static auto* allocator = new CpuAllocator;
    return *allocator;
}

namespace {

// Hands out the pointer of the adoption in progress on this thread (detail::adopt_storage) and
// keeps its owner until the storage deallocates it. Several adoptions of one address (two
// DLPack exports of one buffer) each hold an owner keeping it alive, so any one may go first.
class AdoptingAllocator final : public Allocator {
public:
    struct Adoption {
        void* data;
        std::shared_ptr<void> owner;
    };
    static inline thread_local Adoption* next = nullptr;

    void* allocate(std::size_t, Device) override {
        std::lock_guard lock(mutex_);
        owners_.emplace(next->data, std::move(next->owner));
        return next->data;
    }
    void deallocate(void* ptr, std::size_t, Device) noexcept override {
        std::shared_ptr<void> owner;  // released after the lock: its deleter may take time
        std::lock_guard lock(mutex_);
        const auto it = owners_.find(ptr);
        if (it == owners_.end()) return;
        owner = std::move(it->second);
        owners_.erase(it);
    }

private:
    std::mutex mutex_;
    std::unordered_multimap<void*, std::shared_ptr<void>> owners_;
};

AdoptingAllocator& adopting_allocator() {
    static auto* allocator = new AdoptingAllocator();  // never destroyed: storages may outlive main
    return *allocator;
}

}  // namespace

namespace detail {

std::shared_ptr<Storage> adopt_storage(void* data,
                                       std::size_t nbytes,
                                       Device device,
                                       std::shared_ptr<void> owner) {
    AdoptingAllocator::Adoption adoption{data, std::move(owner)};
    AdoptingAllocator::next = &adoption;
    struct Reset {
        ~Reset() { AdoptingAllocator::next = nullptr; }
    } reset;
    return std::make_shared<Storage>(nbytes, device);
}

}  // namespace detail

Allocator& allocator_for(DeviceType type) {
    if (AdoptingAllocator::next != nullptr) [[unlikely]]
        return adopting_allocator();
    DeviceBackend* backend = find_backend(type);
    if (backend == nullptr) {
        throw errors::UnimplementedError("tapeflow was built without CUDA: no CUDA allocator");
    }
    return backend->allocator();
}

namespace {

struct Counters {
    std::atomic<int64_t> in_use{0};
    std::atomic<int64_t> peak{0};
};

Counters& counters(Device device) {
    static Counters per_type[2];
    return per_type[static_cast<int>(device.type())];
}

void count(Device device, int64_t delta) {
    Counters& c = counters(device);
    const int64_t now = c.in_use.fetch_add(delta) + delta;
    int64_t peak = c.peak.load();
    while (now > peak && !c.peak.compare_exchange_weak(peak, now)) {
    }
}

}  // namespace

MemoryStats memory_stats(Device device) {
    const Counters& c = counters(device);
    return {c.in_use.load(), c.peak.load()};
}

void reset_peak_memory_stats(Device device) {
    Counters& c = counters(device);
    c.peak.store(c.in_use.load());
}

Storage::Storage(std::size_t nbytes, Device device) : nbytes_(nbytes), device_(device) {
    if (!device.is_cpu()) check_device(device);  // also for empty tensors: no silent bad device
    if (nbytes == 0) return;
    allocator_ = &allocator_for(device.type());
    allocate();
}

void Storage::allocate() const {
    data_ = allocator_->allocate(nbytes_, device_);
    count(device_, static_cast<int64_t>(nbytes_));
}

void Storage::defer(std::shared_ptr<detail::Deferred> computation) {
    if (data_ != nullptr) {
        allocator_->deallocate(data_, nbytes_, device_);
        count(device_, -static_cast<int64_t>(nbytes_));
        data_ = nullptr;
    }
    deferred_ = std::move(computation);
    __atomic_store_n(&pending_, deferred_ != nullptr, __ATOMIC_RELEASE);
}

void Storage::materialize() const {
    deferred_->run([this] {
        if (nbytes_ != 0) allocate();
        return data_;
    });
    __atomic_store_n(&pending_, false, __ATOMIC_RELEASE);
}

Storage::~Storage() {
    if (data_ == nullptr) return;
    allocator_->deallocate(data_, nbytes_, device_);
    count(device_, -static_cast<int64_t>(nbytes_));
}

}  // namespace tapeflow
