// The per-thread small-block cache.
//
// NOTE [Small-block cache]: a small model's step makes a few dozen tiny tensors (outputs,
// gradients, optimizer temporaries), each with a TensorImpl and a Storage, and frees them again;
// glibc's malloc/aligned_alloc and free cost one to three hundred instructions per pair once its
// own per-thread cache (7 blocks per size) overflows, more than the step's arithmetic. Freed blocks
// up to kSmallBlockMaxBytes wait here, a stack per 64-byte class per thread (no lock), for the next
// request of that class on the thread that freed them; a full stack lets the caller free the block,
// and a thread's blocks are freed when it exits.
#include "core/small_blocks.hpp"

#include <array>

namespace tapeflow {
namespace {

constexpr std::size_t kClasses = kSmallBlockMaxBytes / kSmallBlockAlignment;
constexpr std::size_t kPerClass = 32;
// Under AddressSanitizer every block goes back to malloc at once: a block parked here would hide a
// use after free of a small tensor from ASan's quarantine (scripts/sanitize.sh).
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kKeepBlocks = false;
#else
constexpr bool kKeepBlocks = true;
#endif

struct Cache {
    std::array<std::array<void*, kPerClass>, kClasses> blocks;
    std::array<std::size_t, kClasses> count{};
};

// This thread's cache: nullptr before the first use, kGone after the thread's exit began. A plain
// pointer (trivial, so one TLS access per call); the owner below frees the blocks at thread exit.
Cache* const kGone = reinterpret_cast<Cache*>(alignof(Cache));
thread_local Cache* tl_cache = nullptr;

struct CacheOwner {
    Cache cache;
    ~CacheOwner() {
        tl_cache = kGone;
        for (std::size_t c = 0; c < kClasses; ++c) {
            for (std::size_t i = 0; i < cache.count[c]; ++i)
                std::free(cache.blocks[c][i]);
        }
    }
};

Cache* first_use() {
    thread_local CacheOwner owner;
    tl_cache = &owner.cache;
    return tl_cache;
}

Cache* cache() {
    Cache* c = tl_cache;
    if (c == nullptr) [[unlikely]]
        return first_use();
    return c == kGone ? nullptr : c;
}

}  // namespace

void* small_block_take(std::size_t rounded) noexcept {
    if (!kKeepBlocks) return nullptr;
    Cache* c = cache();
    const std::size_t k = rounded / kSmallBlockAlignment - 1;
    if (c == nullptr || c->count[k] == 0) return nullptr;
    return c->blocks[k][--c->count[k]];
}

bool small_block_keep(void* block, std::size_t rounded) noexcept {
    if (!kKeepBlocks) return false;
    Cache* c = cache();
    const std::size_t k = rounded / kSmallBlockAlignment - 1;
    if (c == nullptr || c->count[k] == kPerClass) return false;
    c->blocks[k][c->count[k]++] = block;
    return true;
}

}  // namespace tapeflow
