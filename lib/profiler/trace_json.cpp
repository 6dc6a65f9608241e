// trace_json(): pid 1 is the host ("/host:CPU"), each thread a tid (its OS thread id); pid 2 + d
// is GPU d, whose one stream is tid 0. Event categories: "op", "span" (Trace and the framework's
// spans), "chunk" (a thread-pool chunk of an op), "kernel" (an op's kernels on a GPU stream).
#include "profiler/trace_json.hpp"

#include <nlohmann/json.hpp>

namespace tapeflow::profiler::detail {
namespace {

constexpr int kHostPid = 1;

using nlohmann::json;

json metadata(const char* what, int pid, const json& args, const json* tid = nullptr) {
    json m = {{"ph", "M"}, {"pid", pid}, {"name", what}, {"args", args}};
    if (tid != nullptr) m["tid"] = *tid;
    return m;
}

const char* category(EventKind kind) {
    switch (kind) {
        case EventKind::op:
            return "op";
        case EventKind::span:
            return "span";
        case EventKind::chunk:
            return "chunk";
        case EventKind::gpu:
            return "kernel";
    }
    return "span";
}

json complete(const Event& e, int pid, uint64_t tid, int64_t origin_ns) {
    json args = json::object();
    switch (e.kind) {
        case EventKind::op:
            args["op_type"] = e.op_type;
            args["self_us"] = static_cast<double>(e.self_ns) / 1000.0;
            if (e.flops >= 0) args["flops"] = e.flops;
            args["output_bytes"] = e.output_bytes;
            args["memory_in_use_bytes"] = e.mem_bytes;
            if (e.gpu_device >= 0) args["gpu_us"] = e.gpu_us;
            break;
        case EventKind::chunk:
            args["chunk"] = e.chunk;
            args["chunks"] = e.chunks;
            break;
        case EventKind::gpu:
            args["op_type"] = e.op_type;
            break;
        case EventKind::span:
            if (e.step >= 0) args["step_num"] = e.step;
            break;
    }
    return {{"ph", "X"},
            {"pid", pid},
            {"tid", tid},
            {"name", e.name},
            {"cat", category(e.kind)},
            {"ts", static_cast<double>(e.start_ns - origin_ns) / 1000.0},
            {"dur", static_cast<double>(e.end_ns - e.start_ns) / 1000.0},
            {"args", std::move(args)}};
}

}  // namespace

std::string trace_json(const SessionResult& result) {
    json events = json::array();
    events.push_back(metadata("process_name", kHostPid, {{"name", "/host:CPU"}}));
    events.push_back(metadata("process_sort_index", kHostPid, {{"sort_index", 0}}));
    for (const std::unique_ptr<ThreadTrack>& t : result.tracks) {
        const json tid = t->tid;
        events.push_back(metadata("thread_name", kHostPid, {{"name", t->name}}, &tid));
        for (const Event& e : t->events)
            events.push_back(complete(e, kHostPid, t->tid, result.start_ns));
    }
    for (const std::unique_ptr<ThreadTrack>& t : result.gpu_tracks) {
        const int pid = 2 + static_cast<int>(t->tid);
        const json tid = 0;
        events.push_back(
            metadata("process_name", pid, {{"name", "/device:GPU:" + std::to_string(t->tid)}}));
        events.push_back(metadata("process_sort_index", pid, {{"sort_index", pid}}));
        events.push_back(metadata("thread_name", pid, {{"name", t->name}}, &tid));
        for (const Event& e : t->events)
            events.push_back(complete(e, pid, 0, result.start_ns));
    }
    const json trace = {{"displayTimeUnit", "ns"}, {"traceEvents", std::move(events)}};
    return trace.dump();
}

}  // namespace tapeflow::profiler::detail
