// The CUDA markers around ops on a GPU (NOTE [Profiler GPU timing] in op_scope.cpp), through the
// device backend's record_marker / marker_elapsed_us, so nothing here includes CUDA.
#pragma once

#include <cstdint>

#include <tapeflow/core/device.hpp>

#include "profiler/collector.hpp"

namespace tapeflow::profiler::detail {

/// A marker before an op on `device`, or nullptr (device tracing off, no backend markers). The
/// session's first marker on a device is also its clock reference: recorded and waited for here.
void* gpu_marker_begin(uint64_t session, Device device);
/// The marker after the op.
void* gpu_marker_end(Device device);
void release_gpu_marker(Device device, void* marker) noexcept;

/// Turns the marker pairs of `result`'s op events into their gpu_us and one GPU track per device,
/// then releases every marker and the references. Waits for the markers' work to finish.
void resolve_gpu_events(SessionResult& result);

}  // namespace tapeflow::profiler::detail
