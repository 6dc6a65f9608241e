// Process-wide unique ids shared by tensors and variables, so a tape can key both in one set.
#pragma once

#include <cstdint>

namespace tapeflow {

/// A new id, never returned before in this process (thread-safe).
int64_t next_unique_id();

}  // namespace tapeflow
