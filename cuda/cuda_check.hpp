// TAPEFLOW_CUDA_CHECK (for the g++-compiled .cpp files of cuda/): turns a failed CUDA runtime call
// into a tapeflow error with file, line and CUDA's message (ResourceExhaustedError for
// out-of-memory, InternalError otherwise).
#pragma once

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <tapeflow/core/error.hpp>

namespace tapeflow::cuda_detail {

[[noreturn]] inline void throw_cuda_error(cudaError_t status,
                                          const char* call,
                                          const char* file,
                                          int line) {
    const std::string message = fmt::format("CUDA call {} failed at {}:{}: {} ({})",
                                            call,
                                            file,
                                            line,
                                            cudaGetErrorString(status),
                                            cudaGetErrorName(status));
    if (status == cudaErrorMemoryAllocation) throw errors::ResourceExhaustedError(message);
    throw errors::InternalError(message);
}

}  // namespace tapeflow::cuda_detail

#define TAPEFLOW_CUDA_CHECK(call)                             \
    do {                                                      \
        const cudaError_t tapeflow_status_ = (call);          \
        if (tapeflow_status_ != cudaSuccess) {                \
            ::tapeflow::cuda_detail::throw_cuda_error(        \
                tapeflow_status_, #call, __FILE__, __LINE__); \
        }                                                     \
    } while (0)
