// GPU markers and their resolution into kernel times (NOTE [Profiler GPU timing], op_scope.cpp).
#include "profiler/gpu_markers.hpp"

#include <array>
#include <map>
#include <mutex>

#include <fmt/format.h>

#include "core/backend.hpp"
#include "profiler/hooks.hpp"

namespace tapeflow::profiler::detail {
namespace {

constexpr int kMaxDevices = 16;

// The clock reference of one device in one session: a marker and the host time it had passed.
struct Reference {
    uint64_t session = 0;
    void* marker = nullptr;
    int64_t host_ns = 0;
};

std::mutex g_ref_mutex;
std::array<Reference, kMaxDevices> g_refs;

DeviceBackend* backend_of(Device device) {
    return device.is_cpu() ? nullptr : find_backend(device.type());
}

}  // namespace

void* gpu_marker_begin(uint64_t session, Device device) {
    if (g_device_level.load(std::memory_order_relaxed) < 1) return nullptr;
    if (device.index() < 0 || device.index() >= kMaxDevices) return nullptr;
    DeviceBackend* backend = backend_of(device);
    if (backend == nullptr) return nullptr;
    {
        const std::lock_guard lock(g_ref_mutex);
        Reference& ref = g_refs[static_cast<std::size_t>(device.index())];
        if (ref.session != session) {
            if (ref.marker != nullptr) backend->release_marker(ref.marker);  // an older session's
            ref = Reference{};
            void* marker = backend->record_marker(device);
            if (marker == nullptr) return nullptr;
            backend->marker_elapsed_us(marker, marker);  // waits until the stream has reached it
            ref = Reference{session, marker, now_ns()};
        }
    }
    return backend->record_marker(device);
}

void* gpu_marker_end(Device device) {
    DeviceBackend* backend = backend_of(device);
    return backend != nullptr ? backend->record_marker(device) : nullptr;
}

void release_gpu_marker(Device device, void* marker) noexcept {
    DeviceBackend* backend = backend_of(device);
    if (backend != nullptr && marker != nullptr) backend->release_marker(marker);
}

void resolve_gpu_events(SessionResult& result) {
    const std::lock_guard lock(g_ref_mutex);
    std::map<int, std::unique_ptr<ThreadTrack>> tracks;
    for (const std::unique_ptr<ThreadTrack>& track : result.tracks) {
        for (Event& e : track->events) {
            if (e.gpu_begin == nullptr) continue;
            const Device device = Device::cuda(e.gpu_device);
            DeviceBackend* backend = backend_of(device);
            const Reference& ref = g_refs[static_cast<std::size_t>(e.gpu_device)];
            if (e.gpu_end != nullptr && ref.marker != nullptr) {
                const double offset_us = backend->marker_elapsed_us(ref.marker, e.gpu_begin);
                e.gpu_us = backend->marker_elapsed_us(e.gpu_begin, e.gpu_end);
                std::unique_ptr<ThreadTrack>& gpu = tracks[e.gpu_device];
                if (!gpu) {
                    gpu = std::make_unique<ThreadTrack>();
                    gpu->tid = static_cast<uint64_t>(e.gpu_device);
                    gpu->name = fmt::format("/device:GPU:{} stream", e.gpu_device);
                }
                Event k;
                k.kind = EventKind::gpu;
                k.name = e.name;
                k.op_type = e.op_type;
                k.start_ns = ref.host_ns + static_cast<int64_t>(offset_us * 1000.0);
                k.end_ns = k.start_ns + static_cast<int64_t>(e.gpu_us * 1000.0);
                k.gpu_device = e.gpu_device;
                k.gpu_us = e.gpu_us;
                gpu->events.push_back(std::move(k));
            }
            backend->release_marker(e.gpu_begin);
            if (e.gpu_end != nullptr) backend->release_marker(e.gpu_end);
            e.gpu_begin = e.gpu_end = nullptr;
        }
    }
    for (auto& [device, track] : tracks)
        result.gpu_tracks.push_back(std::move(track));
    for (std::size_t d = 0; d < g_refs.size(); ++d) {
        Reference& ref = g_refs[d];
        if (ref.marker != nullptr) {
            if (DeviceBackend* backend = backend_of(Device::cuda(static_cast<int>(d))))
                backend->release_marker(ref.marker);
        }
        ref = Reference{};
    }
}

}  // namespace tapeflow::profiler::detail
