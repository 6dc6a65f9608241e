// The tfprof-style report of a stopped session: its op events summed per op type and per op name.
#pragma once

#include <tapeflow/profiler.hpp>

#include "profiler/collector.hpp"

namespace tapeflow::profiler::detail {

Profile build_profile(const SessionResult& result);

}  // namespace tapeflow::profiler::detail
