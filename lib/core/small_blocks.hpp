// A per-thread cache of small 64-byte-aligned blocks (NOTE [Small-block cache] in
// small_blocks.cpp), used by the host allocator for tiny tensors and, through SmallBlockAllocator,
// for the shared_ptr control blocks every tensor and storage needs.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <new>

namespace tapeflow {

inline constexpr std::size_t kSmallBlockAlignment = 64;
inline constexpr std::size_t kSmallBlockMaxBytes = 1024;

/// `nbytes` rounded up to the cache's size classes (multiples of 64).
constexpr std::size_t small_block_size(std::size_t nbytes) {
    return (nbytes + kSmallBlockAlignment - 1) / kSmallBlockAlignment * kSmallBlockAlignment;
}

/// A cached block of `rounded` bytes (a small_block_size() of at most kSmallBlockMaxBytes), or
/// nullptr when this thread has none.
void* small_block_take(std::size_t rounded) noexcept;
/// Keeps `block` (from small_block_take or aligned_alloc(64, rounded)) for reuse by this thread;
/// false when the cache is full, and the caller frees it.
bool small_block_keep(void* block, std::size_t rounded) noexcept;

/// A standard allocator drawing on the cache (allocate_shared's control block plus object).
template <class T>
struct SmallBlockAllocator {
    using value_type = T;
    SmallBlockAllocator() = default;
    template <class U>
    SmallBlockAllocator(const SmallBlockAllocator<U>& /*other*/) noexcept {}  // NOLINT: rebinding

    T* allocate(std::size_t n) {
        const std::size_t rounded = small_block_size(n * sizeof(T));
        void* p = rounded <= kSmallBlockMaxBytes ? small_block_take(rounded) : nullptr;
        if (p == nullptr) p = std::aligned_alloc(kSmallBlockAlignment, rounded);
        if (p == nullptr) throw std::bad_alloc();
        return static_cast<T*>(p);
    }
    void deallocate(T* p, std::size_t n) noexcept {
        const std::size_t rounded = small_block_size(n * sizeof(T));
        if (rounded > kSmallBlockMaxBytes || !small_block_keep(p, rounded)) std::free(p);
    }
    template <class U>
    bool operator==(const SmallBlockAllocator<U>& /*other*/) const noexcept {
        return true;
    }
};

}  // namespace tapeflow
