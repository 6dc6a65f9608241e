// The session: start / stop, the per-thread tracks, and the spans and chunks of hooks.hpp.
//
// NOTE [Profiler cost]: with no session, every hook is one relaxed load of g_host_level. With one,
// a thread finds its track through a thread_local (the session id tells a stale one), and appends
// under the track's own mutex, which only stop() contends: ops on different threads never share a
// lock. stop() clears g_host_level first, then closes each track under its mutex; an op that was
// in flight and finishes later sees its track closed (or the session id changed) and drops its
// event.
#include "profiler/collector.hpp"

#include <chrono>

#include <fmt/format.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <tapeflow/core/error.hpp>

#include "profiler/hooks.hpp"
#include "profiler/op_scope.hpp"

namespace tapeflow::profiler::detail {

std::atomic<int> g_host_level{0};
std::atomic<int> g_device_level{0};

namespace {

struct Session {
    uint64_t id = 0;
    experimental::ProfilerOptions options;
    int64_t start_ns = 0;
    std::mutex mutex;  // guards tracks
    std::vector<std::shared_ptr<ThreadTrack>> tracks;
};

std::mutex g_session_mutex;  // guards g_session and the id counter
std::shared_ptr<Session> g_session;
std::atomic<uint64_t> g_session_id{0};  // the active session's id, 0 when none
uint64_t g_last_id = 0;

thread_local std::shared_ptr<ThreadTrack> t_track;
thread_local uint64_t t_track_session = 0;

uint64_t os_thread_id() {
    return static_cast<uint64_t>(::syscall(SYS_gettid));
}

std::string thread_name(uint64_t tid) {
    char buf[64] = {};
    if (pthread_getname_np(pthread_self(), buf, sizeof buf) != 0 || buf[0] == '\0')
        return fmt::format("thread {}", tid);
    if (tid == static_cast<uint64_t>(::getpid())) return fmt::format("{} (main)", buf);
    return fmt::format("{} ({})", buf, tid);
}

}  // namespace

int64_t now_ns() noexcept {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

uint64_t session_id() noexcept {
    return g_session_id.load(std::memory_order_acquire);
}

ThreadTrack* track_for(uint64_t session) {
    if (session == 0) return nullptr;
    if (t_track_session == session) return t_track.get();
    std::shared_ptr<Session> s;
    {
        const std::lock_guard lock(g_session_mutex);
        s = g_session;
    }
    if (!s || s->id != session) return nullptr;
    auto track = std::make_shared<ThreadTrack>();
    track->tid = os_thread_id();
    track->name = thread_name(track->tid);
    {
        const std::lock_guard lock(s->mutex);
        s->tracks.push_back(track);
    }
    t_track = std::move(track);
    t_track_session = session;
    return t_track.get();
}

bool append(uint64_t session, Event event) {
    ThreadTrack* track = track_for(session);
    if (track == nullptr) return false;
    const std::lock_guard lock(track->mutex);
    if (track->closed) return false;
    track->events.push_back(std::move(event));
    return true;
}

void record_span(std::string name, int64_t start_ns, uint64_t session, int64_t step) noexcept {
    try {
        Event e;
        e.kind = EventKind::span;
        e.name = std::move(name);
        e.start_ns = start_ns;
        e.end_ns = now_ns();
        e.step = step;
        append(session, std::move(e));
    } catch (...) {  // std::bad_alloc: the span is lost, the program goes on
    }
}

void begin_session(const experimental::ProfilerOptions& options) {
    if (options.host_tracer_level < 0 || options.host_tracer_level > 3) {
        throw errors::InvalidArgumentError(fmt::format(
            "profiler: host_tracer_level must be in [0, 3], got {}", options.host_tracer_level));
    }
    if (options.device_tracer_level < 0 || options.device_tracer_level > 1) {
        throw errors::InvalidArgumentError(fmt::format(
            "profiler: device_tracer_level must be 0 or 1, got {}", options.device_tracer_level));
    }
    const std::lock_guard lock(g_session_mutex);
    if (g_session) throw errors::AlreadyExistsError("Another profiler is running.");
    auto s = std::make_shared<Session>();
    s->id = ++g_last_id;
    s->options = options;
    s->start_ns = now_ns();
    g_session = s;
    g_session_id.store(s->id, std::memory_order_release);
    g_device_level.store(options.device_tracer_level, std::memory_order_relaxed);
    g_host_level.store(options.host_tracer_level, std::memory_order_relaxed);
}

SessionResult end_session() {
    std::shared_ptr<Session> s;
    {
        const std::lock_guard lock(g_session_mutex);
        if (!g_session) {
            throw errors::UnavailableError(
                "Cannot export profiling results. No profiler is running.");
        }
        g_host_level.store(0, std::memory_order_relaxed);
        g_device_level.store(0, std::memory_order_relaxed);
        g_session_id.store(0, std::memory_order_release);
        s = std::move(g_session);
    }
    SessionResult result;
    result.start_ns = s->start_ns;
    result.end_ns = now_ns();
    result.host_level = s->options.host_tracer_level;
    const std::lock_guard lock(s->mutex);
    for (const std::shared_ptr<ThreadTrack>& t : s->tracks) {
        auto copy = std::make_unique<ThreadTrack>();
        const std::lock_guard track_lock(t->mutex);
        t->closed = true;
        copy->tid = t->tid;
        copy->name = t->name;
        copy->events = std::move(t->events);
        result.tracks.push_back(std::move(copy));
    }
    return result;
}

ChunkTracer::ChunkTracer(void (*run)(void*, int64_t), void* ctx, int64_t chunks)
    : run_(run),
      ctx_(ctx),
      chunks_(chunks),
      op_type_(OpScope::current_op_type()),
      caller_tid_(os_thread_id()),
      session_(session_id()) {}

void ChunkTracer::run_chunk(void* tracer, int64_t chunk) {
    const auto& self = *static_cast<const ChunkTracer*>(tracer);
    const int64_t start = now_ns();
    self.run_(self.ctx_, chunk);
    Event e;
    e.kind = EventKind::chunk;
    e.op_type = self.op_type_;
    e.name = self.op_type_.empty() ? std::string("parallel_for") : std::string(self.op_type_);
    e.start_ns = start;
    e.end_ns = now_ns();
    e.chunk = chunk;
    e.chunks = self.chunks_;
    ThreadTrack* track = track_for(self.session_);
    if (track == nullptr) return;
    const std::lock_guard lock(track->mutex);
    if (track->closed) return;
    if (track->tid != self.caller_tid_ && track->events.empty() &&
        track->name.find("pool worker") == std::string::npos) {
        track->name = fmt::format("tapeflow pool worker ({})", track->tid);
    }
    track->events.push_back(std::move(e));
}

}  // namespace tapeflow::profiler::detail
