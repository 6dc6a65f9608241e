// Per-device CUDA state for the g++-compiled files of cuda/: the one stream each device's ops are
// queued on, and the cuBLAS handle bound to it. Every call first makes `device` current
// (without a driver call when it already is).
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <tapeflow/core/device.hpp>

namespace tapeflow::cuda_detail {

/// Makes `device` current for this thread. tapeflow remembers the device it made current per
/// thread and skips the driver call when it is already current: code that mixes tapeflow with its
/// own cudaSetDevice calls must restore the device tapeflow set before the next op.
void make_current(int device);
/// make_current for destructors: failures are ignored (the next checked call reports them).
void make_current_noexcept(int device) noexcept;

/// Makes `device` current and returns its stream (created on first use, non-blocking).
cudaStream_t stream_for(Device device);
/// The cuBLAS handle of `device`, bound to its stream.
cublasHandle_t cublas_for(Device device);

}  // namespace tapeflow::cuda_detail
