// Deferred: a computation that fills one Storage the first time its data is read (the storage's
// memory is allocated only then). The element-wise
// fusion (lib/kernels/cpu/fusion.hpp) builds these; Storage::data() runs them, exactly once even
// when several threads read at the same time.
#pragma once

#include <atomic>
#include <mutex>

namespace tapeflow::detail {

class Deferred {
public:
    virtual ~Deferred() = default;

    /// Unless it already ran: allocates the destination (`allocate()` returns it), computes into
    /// it, then lets go of the inputs.
    template <class Allocate>
    void run(const Allocate& allocate) {
        std::call_once(once_, [&] {
            compute(allocate());
            done_.store(true, std::memory_order_release);
            release();
        });
    }
    bool done() const { return done_.load(std::memory_order_acquire); }

protected:
    virtual void compute(void* dst) = 0;
    virtual void release() noexcept = 0;

private:
    std::once_flag once_;
    std::atomic<bool> done_{false};
};

}  // namespace tapeflow::detail
