// The per-thread small-block cache.
//
// NOTE [Small-block cache]: a small model's step makes a few dozen tiny tensors (outputs,
// gradients, optimizer temporaries), each with a TensorImpl and a Storage, and frees them again;
// glibc's malloc/aligned_alloc and free cost one to three hundred instructions per pair once its own
// per-thread cache (7 blocks per size) overflows, more than the step's arithmetic. Freed blocks up
// to kSmallBlockMaxBytes wait here, a stack per 64-byte class per thread (no lock), for the next
// request of that class on the thread that freed them; a full stack lets the caller free the block,
// and a thread's blocks are freed when it exits.
#include <array>

#include "core/small_blocks.hpp"

namespace tapeflow {
namespace {

constexpr std::size_t kClasses = kSmallBlockMaxBytes / kSmallBlockAlignment;
constexpr std::size_t kPerClass = 32;

thread_local bool cache_gone = false;  // trivially destructible: readable during thread exit

struct Cache {
    std::array<std::array<void*, kPerClass>, kClasses> blocks;
    std::array<std::size_t, kClasses> count{};

    ~Cache() {
        cache_gone = true;
        for (std::size_t c = 0; c < kClasses; ++c) {
            for (std::size_t i = 0; i < count[c]; ++i) std::free(blocks[c][i]);
        }
    }
};

Cache* cache() {
    if (cache_gone) return nullptr;
    thread_local Cache c;
    return &c;
}

}  // namespace

void* small_block_take(std::size_t rounded) noexcept {
    Cache* c = cache();
    const std::size_t k = rounded / kSmallBlockAlignment - 1;
    if (c == nullptr || c->count[k] == 0) return nullptr;
    return c->blocks[k][--c->count[k]];
}

bool small_block_keep(void* block, std::size_t rounded) noexcept {
    Cache* c = cache();
    const std::size_t k = rounded / kSmallBlockAlignment - 1;
    if (c == nullptr || c->count[k] == kPerClass) return false;
    c->blocks[k][c->count[k]++] = block;
    return true;
}

}  // namespace tapeflow
