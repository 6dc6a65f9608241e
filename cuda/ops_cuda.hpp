// Internal helpers of the registry glue (ops_cuda*.cpp): the launch-status check, the stream of a
// kernel's device, the Elem of a DType, index plans of row-major tensors, and the host fallback.
#pragma once

#include <vector>

#include "cuda_check.hpp"
#include "cuda_context.hpp"
#include "launch.hpp"
#include "ops/dispatch.hpp"

namespace tapeflow::nn_detail {
struct Window2d;  // ops/nn_common.hpp
}

namespace tapeflow::cuda_ops {

// cuda_launch::Elem mirrors DType (the .cu files cannot include the public dtype header).
#define TAPEFLOW_SAME_ELEM(e, d) \
    static_assert(static_cast<int>(cuda_launch::Elem::e) == static_cast<int>(DType::d), #e);
TAPEFLOW_SAME_ELEM(f32, float32)
TAPEFLOW_SAME_ELEM(f64, float64)
TAPEFLOW_SAME_ELEM(i32, int32)
TAPEFLOW_SAME_ELEM(i64, int64)
TAPEFLOW_SAME_ELEM(u8, uint8)
TAPEFLOW_SAME_ELEM(b8, bool_)
TAPEFLOW_SAME_ELEM(f16, float16)
TAPEFLOW_SAME_ELEM(bf16, bfloat16)
#undef TAPEFLOW_SAME_ELEM
static_assert(static_cast<int>(cuda_launch::Elem::bf16) + 1 == kNumDTypes,
              "cuda_launch::Elem lists every DType, in DType's order");

/// The launchers' Window of a CPU window geometry (ops_cuda_nn.cpp).
cuda_launch::Window window_of(const nn_detail::Window2d& w);

inline cuda_launch::Elem elem_of(DType dtype) {
    return static_cast<cuda_launch::Elem>(dtype);
}

inline cudaStream_t stream_of(const KernelContext& ctx) {
    return cuda_detail::stream_for(ctx.device);
}

/// Row-major element strides of `dims`.
std::vector<int64_t> row_major_strides(const std::vector<int64_t>& dims);

/// The bit pattern of `value` converted to `dtype` (the CPU's conversion), for the fill kernels.
uint64_t value_bits(DType dtype, double value);

/// `ids` as an int64 tensor on `device` (index lists computed on the host).
Tensor upload_ids(const std::vector<int64_t>& ids, Device device);

/// Multiprocessors of `device` (cached).
int sm_count(Device device);

/// Runs the op's CPU kernel on host copies of the inputs and copies the outputs back: correct
/// and slow, for ops (and dtypes) that have no CUDA kernel yet. Listed by the parity suite.
void host_fallback(const KernelContext& ctx);
/// Whether (op, dtype) runs through host_fallback on the GPU.
bool uses_host_fallback(Op op, DType dtype);

/// Raises InternalError (ResourceExhaustedError for CUBLAS_STATUS_ALLOC_FAILED) for a failed cuBLAS
/// call.
void cublas_check(cublasStatus_t status, const char* call, const char* file, int line);
#define TAPEFLOW_CUBLAS_CHECK(call) \
    ::tapeflow::cuda_ops::cublas_check((call), #call, __FILE__, __LINE__)

void register_elementwise_cuda(KernelRegistry& r);
void register_reduce_cuda(KernelRegistry& r);  // ops_cuda_reduce.cpp
void register_matmul_cuda(KernelRegistry& r);  // ops_cuda_matmul.cpp
void register_array_cuda(KernelRegistry& r);
void register_nn_cuda(KernelRegistry& r);
void register_training_cuda(KernelRegistry& r);
void register_sort_cuda(KernelRegistry& r);       // ops_cuda_sort.cpp
void register_depthwise_cuda(KernelRegistry& r);  // ops_cuda_depthwise.cpp
void register_fused_cuda(KernelRegistry& r);      // ops_cuda_fused.cpp

}  // namespace tapeflow::cuda_ops

namespace tapeflow {
/// Registers every CUDA kernel: called by libtapeflow when it loads the plugin (cuda/plugin.cpp).
void register_cuda_kernels(KernelRegistry& registry);
}  // namespace tapeflow
