// The profiler's session: one track of events per thread (each thread appends to its own, under a
// lock nobody else takes until stop()), and what stop() hands to the trace writer and the report.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <tapeflow/profiler.hpp>

namespace tapeflow::profiler::detail {

enum class EventKind : uint8_t { op, span, chunk, gpu };

struct Event {
    EventKind kind = EventKind::span;
    std::string name;          // span name; an op's name (name scope + type)
    std::string_view op_type;  // ops, chunks and their GPU kernels: op_type()'s static string
    int64_t start_ns = 0;      // now_ns() clock (GPU kernels: placed on it through a marker)
    int64_t end_ns = 0;
    int64_t self_ns = 0;  // ops: end - start minus the nested ops
    int64_t step = -1;    // Trace(name, step_num)
    int64_t chunk = -1;   // chunks: index of chunks_
    int64_t chunks = 0;
    double flops = -1;  // < 0: unknown
    int64_t output_bytes = 0;
    int64_t mem_bytes = 0;      // tensor memory in use on the op's device at its end
    int gpu_device = -1;        // ops with GPU markers, and gpu events: the CUDA device
    void* gpu_begin = nullptr;  // backend markers until stop() resolves them
    void* gpu_end = nullptr;
    double gpu_us = 0;
};

struct ThreadTrack {
    uint64_t tid = 0;  // the OS thread id
    std::string name;
    std::mutex mutex;
    std::deque<Event> events;  // appends never move the events already there
    bool closed = false;       // stop() took the events; late appends are dropped
};

/// What a stopped session leaves: its tracks (and, once resolve_gpu_events ran, its GPU kernels).
struct SessionResult {
    int64_t start_ns = 0;
    int64_t end_ns = 0;
    int host_level = 0;
    std::vector<std::unique_ptr<ThreadTrack>> tracks;
    /// One per CUDA device with timed kernels (tid: the device index), filled by
    /// resolve_gpu_events.
    std::vector<std::unique_ptr<ThreadTrack>> gpu_tracks;
};

/// The active session's device_tracer_level (0 when none runs).
extern std::atomic<int> g_device_level;

/// The calling thread's track in the session `session`, or nullptr when that session is over.
ThreadTrack* track_for(uint64_t session);
/// Appends `event` to the calling thread's track; false (nothing appended) when `session` is over.
bool append(uint64_t session, Event event);

/// Starts a session; AlreadyExistsError while one runs.
void begin_session(const experimental::ProfilerOptions& options);
/// Ends the active session; UnavailableError (TF's wording) when none runs.
SessionResult end_session();

}  // namespace tapeflow::profiler::detail
