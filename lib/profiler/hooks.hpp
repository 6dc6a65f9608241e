// What the code the profiler observes calls: one relaxed atomic load decides, and nothing else runs
// while no profiler session is active. Only the standard library here: core's thread pool
// includes it. Spans and chunks are recorded by collector.cpp.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

namespace tapeflow::profiler::detail {

/// 0 while no session runs, else the session's host_tracer_level (1-3).
extern std::atomic<int> g_host_level;

inline int host_level() noexcept {
    return g_host_level.load(std::memory_order_relaxed);
}
/// Ops, backward walks, optimizer updates and the pool's chunks: host_tracer_level >= 2.
inline bool framework_traced() noexcept {
    return host_level() >= 2;
}

int64_t now_ns() noexcept;
/// The active session's id (0: none): a span begun in one session is not closed in another.
uint64_t session_id() noexcept;

/// Records a span [start_ns, now) on the calling thread's track, unless the session changed. A
/// span that cannot be stored (out of memory) is dropped: spans end in destructors.
void record_span(std::string name, int64_t start_ns, uint64_t session, int64_t step = -1) noexcept;

/// A span of the framework (the backward walk, an optimizer update) while the object lives; the
/// name is built only when the profiler runs.
class FrameworkSpan {
public:
    template <class MakeName>
    explicit FrameworkSpan(MakeName&& make_name) {
        if (framework_traced()) [[unlikely]] {
            name_ = std::forward<MakeName>(make_name)();
            session_ = session_id();
            start_ns_ = now_ns();
        }
    }
    ~FrameworkSpan() {
        if (start_ns_ >= 0) [[unlikely]]
            record_span(std::move(name_), start_ns_, session_);
    }
    FrameworkSpan(const FrameworkSpan&) = delete;
    FrameworkSpan& operator=(const FrameworkSpan&) = delete;

private:
    std::string name_;
    int64_t start_ns_ = -1;
    uint64_t session_ = 0;
};

/// Wraps the thread pool's chunk function of one parallel job: each chunk is recorded on the track
/// of the thread that runs it, named after the op the job belongs to (the caller's innermost op).
class ChunkTracer {
public:
    ChunkTracer(void (*run)(void*, int64_t), void* ctx, int64_t chunks);
    /// The pool's chunk function: `tracer` is a ChunkTracer.
    static void run_chunk(void* tracer, int64_t chunk);

private:
    void (*run_)(void*, int64_t);
    void* ctx_;
    int64_t chunks_;
    std::string_view op_type_;  // static storage (op_type()); "" outside any op
    uint64_t caller_tid_;
    uint64_t session_;
};

}  // namespace tapeflow::profiler::detail
