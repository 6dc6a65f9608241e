// The CUDA backend's interface to the core, in plain C++ (no CUDA headers), so lib/ can use it.
#pragma once

#include "core/backend.hpp"

namespace tapeflow {

/// The CUDA device backend (memory, copies). Safe to call on machines without a GPU or driver:
/// device_count() is then 0 and unavailable_reason() says why.
DeviceBackend& cuda_backend();

}  // namespace tapeflow
