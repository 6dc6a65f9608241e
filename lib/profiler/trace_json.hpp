// A stopped session as Chrome's trace-event JSON (the format Perfetto, chrome://tracing and
// TensorBoard's profile plugin's trace viewer read): one process for the host with one track per
// thread, one process per GPU with its stream's kernels.
#pragma once

#include <string>

#include "profiler/collector.hpp"

namespace tapeflow::profiler::detail {

/// {"displayTimeUnit": "ns", "traceEvents": [...]}: metadata events (ph "M": process and thread
/// names) and complete events (ph "X", ts and dur in microseconds from the session's start).
std::string trace_json(const SessionResult& result);

}  // namespace tapeflow::profiler::detail
