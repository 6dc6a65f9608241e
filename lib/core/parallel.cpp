// CPU thread count for kernels (set_num_threads, else OpenMP's OMP_NUM_THREADS or the cores) and
// the thread pool parallel_for runs on.
//
// NOTE [Thread pool]: why not OpenMP's. libgomp's idle threads spin (about 300,000 polls) before
// they sleep, and its static schedule gives each thread one fixed chunk. On a machine where another
// process uses a core, a spinning waiter takes CPU from the thread it waits for, and a chunk whose
// thread is not running holds up the whole op: a small transformer's 100 steps took 16 s on 2
// threads under one competing process, against 1 s on 1 thread (docs/performance.md "Threads").
// OMP_WAIT_POLICY=passive fixes that, but libgomp reads it once, before any library code runs.
// So tapeflow runs its own pool: workers spin briefly (a few microseconds), then sleep on a futex
// (std::atomic::wait); chunks are claimed from a shared counter, so the caller takes any chunk a
// worker has not started, and an op never waits for a thread that is not running unless that
// thread already holds a chunk. The chunk ranges stay those of parallel_for (n, grain and the
// thread count fix them); only which thread runs one changes, which no kernel's result depends on.
#include "core/parallel.hpp"

#include <atomic>
#include <chrono>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <omp.h>

#include <tapeflow/core/error.hpp>
#include <tapeflow/core/threads.hpp>

#include "profiler/hooks.hpp"

namespace tapeflow {
namespace {

std::atomic<int> chosen_threads{0};  // 0: not set, follow OpenMP's ICV (OMP_NUM_THREADS)

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

// How long an idle thread polls before it sleeps: longer than the gap between the kernels of one
// op sequence (a sleeping worker takes 10-50 us to wake), far shorter than a scheduler time slice.
constexpr auto kSpinTime = std::chrono::microseconds(100);

// Polls `ready` with pause instructions until it holds or kSpinTime has passed; returns it.
template <class Ready>
bool spin_until(const Ready& ready) {
    const auto start = std::chrono::steady_clock::now();
    for (;;) {
        for (int i = 0; i < 64; ++i) {
            if (ready()) return true;
            cpu_relax();
        }
        if (std::chrono::steady_clock::now() - start > kSpinTime) return ready();
    }
}

// One job at a time: the chunk counter packs the job's generation with the next chunk to claim,
// so a worker that wakes late for a finished job can never claim a chunk of the next one.
class Pool {
public:
    void run(int64_t chunks, void (*fn)(void*, int64_t), void* ctx) {
        // A kernel inside a chunk (checked first: the caller's own chunks run with busy_ held), or
        // another thread's op holds the pool: run inline, as OpenMP serializes nested regions.
        std::unique_lock lock(busy_, std::defer_lock);
        if (in_chunk || chunks > kMaxChunks || !lock.try_lock()) {
            for (int64_t c = 0; c < chunks; ++c)
                fn(ctx, c);
            return;
        }
        start_workers(static_cast<int>(chunks) - 1);
        fn_ = fn;
        ctx_ = ctx;
        error_ = nullptr;
        done_.store(0, std::memory_order_relaxed);
        const uint32_t gen = (wake_.load(std::memory_order_relaxed) + 1) & kGenMask;
        next_.store(pack(gen, chunks, 0), std::memory_order_release);
        wake_.store(gen, std::memory_order_seq_cst);
        if (sleepers_.load(std::memory_order_seq_cst) > 0) wake_.notify_all();
        work(gen);
        const auto all_done = [&] {
            return done_.load(std::memory_order_acquire) >= chunks;
        };
        if (!spin_until(all_done)) {
            while (!all_done())
                std::this_thread::yield();  // a worker holds a chunk but is not running
        }
        if (error_) std::rethrow_exception(error_);
    }

private:
    static constexpr uint32_t kGenMask = (1u << 24) - 1;
    static constexpr int kChunkBits = 20;
    static constexpr int64_t kMaxChunks = (int64_t{1} << kChunkBits) - 1;
    static uint64_t pack(uint64_t gen, int64_t chunks, int64_t index) {
        return gen << (2 * kChunkBits) | static_cast<uint64_t>(chunks) << kChunkBits |
               static_cast<uint64_t>(index);
    }

    // Claims and runs chunks of job `gen` until none is left.
    void work(uint32_t gen) {
        constexpr uint64_t kChunkMask = (uint64_t{1} << kChunkBits) - 1;
        uint64_t t = next_.load(std::memory_order_acquire);
        for (;;) {
            const int64_t index = static_cast<int64_t>(t & kChunkMask);
            const int64_t chunks = static_cast<int64_t>((t >> kChunkBits) & kChunkMask);
            if ((t >> (2 * kChunkBits)) != gen || index >= chunks) return;
            if (!next_.compare_exchange_weak(t, t + 1, std::memory_order_acq_rel)) continue;
            // A claimed chunk keeps its job alive: the caller waits for done_ == chunks.
            in_chunk = true;
            try {
                fn_(ctx_, index);
            } catch (...) {
                const std::lock_guard lock(error_mutex_);
                if (!error_) error_ = std::current_exception();
            }
            in_chunk = false;
            done_.fetch_add(1, std::memory_order_release);
            t = next_.load(std::memory_order_acquire);
        }
    }

    void worker() {
        uint32_t seen = 0;
        for (;;) {
            uint32_t now = seen;
            spin_until([&] { return (now = wake_.load(std::memory_order_acquire)) != seen; });
            if (now == seen) {
                sleepers_.fetch_add(1, std::memory_order_seq_cst);
                while ((now = wake_.load(std::memory_order_seq_cst)) == seen)
                    wake_.wait(seen, std::memory_order_seq_cst);
                sleepers_.fetch_sub(1, std::memory_order_relaxed);
            }
            seen = now;
            work(now);
        }
    }

    // Called with busy_ held. Workers live until the process ends (they sleep when idle).
    void start_workers(int wanted) {
        while (static_cast<int>(workers_) < wanted) {
            std::thread([this] { worker(); }).detach();
            ++workers_;
        }
    }

    std::mutex busy_;
    std::size_t workers_ = 0;
    std::atomic<uint32_t> wake_{0};  // the current job's generation; workers wait on it
    std::atomic<uint64_t> next_{0};  // generation | chunk count | next chunk to claim
    std::atomic<int64_t> done_{0};
    std::atomic<int> sleepers_{0};
    void (*fn_)(void*, int64_t) = nullptr;
    void* ctx_ = nullptr;
    std::mutex error_mutex_;
    std::exception_ptr error_;
    static thread_local bool in_chunk;
};

thread_local bool Pool::in_chunk = false;

Pool& pool() {
    static auto* p = new Pool;  // never destroyed: its workers may still sleep at exit
    return *p;
}

}  // namespace

namespace detail {
void run_chunks(int64_t chunks, void (*run)(void* ctx, int64_t chunk), void* ctx) {
    if (profiler::detail::framework_traced()) [[unlikely]] {  // each chunk on its thread's track
        profiler::detail::ChunkTracer tracer(run, ctx, chunks);
        pool().run(chunks, &profiler::detail::ChunkTracer::run_chunk, &tracer);
        return;
    }
    pool().run(chunks, run, ctx);
}
}  // namespace detail

int cpu_threads() {
    const int chosen = chosen_threads.load(std::memory_order_relaxed);
    return chosen > 0 ? chosen : omp_get_max_threads();
}

int num_threads() {
    return cpu_threads();
}

void set_num_threads(int n) {
    if (n < 1) {
        throw errors::InvalidArgumentError(
            fmt::format("set_num_threads: the thread count must be at least 1, got {}", n));
    }
    chosen_threads.store(n, std::memory_order_relaxed);
}

}  // namespace tapeflow
