// DLPack: tensors shared with other libraries (PyTorch, JAX, CuPy, NumPy, ...) without a copy, on
// the CPU and on CUDA GPUs. The standard C structs and enums of dlpack/dlpack.h (v0.8, ABI 1) are
// declared here under their own names in the global namespace, behind dlpack.h's include guard,
// so that this header and dlpack.h can both be included, in either order (the first one wins:
// include dlpack.h first for its DLPack 1.x additions, such as DLManagedTensorVersioned).
//
//     DLManagedTensor* m = tf::experimental::dlpack::to_dlpack(x);   // x's buffer, kept alive
//     tf::Tensor y = tf::experimental::dlpack::from_dlpack(m);       // the same buffer again
#pragma once

#include <cstddef>
#include <cstdint>

#include <tapeflow/core/export.hpp>
#include <tapeflow/core/tensor.hpp>

TAPEFLOW_API_BEGIN

#ifndef DLPACK_DLPACK_H_
#define DLPACK_DLPACK_H_

#ifndef DLPACK_EXTERN_C
#ifdef __cplusplus
#define DLPACK_EXTERN_C extern "C"
#else
#define DLPACK_EXTERN_C
#endif
#endif

#define DLPACK_VERSION 80
#define DLPACK_ABI_VERSION 1
#ifndef DLPACK_DLL
#define DLPACK_DLL
#endif

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
typedef enum : int32_t {
#else
typedef enum {
#endif
    kDLCPU = 1,
    kDLCUDA = 2,
    kDLCUDAHost = 3,
    kDLOpenCL = 4,
    kDLVulkan = 7,
    kDLMetal = 8,
    kDLVPI = 9,
    kDLROCM = 10,
    kDLROCMHost = 11,
    kDLExtDev = 12,
    kDLCUDAManaged = 13,
    kDLOneAPI = 14,
    kDLWebGPU = 15,
    kDLHexagon = 16,
} DLDeviceType;

typedef struct {
    DLDeviceType device_type;
    int32_t device_id;
} DLDevice;

typedef enum {
    kDLInt = 0U,
    kDLUInt = 1U,
    kDLFloat = 2U,
    kDLOpaqueHandle = 3U,
    kDLBfloat = 4U,
    kDLComplex = 5U,
    kDLBool = 6U,
} DLDataTypeCode;

typedef struct {
    uint8_t code;
    uint8_t bits;
    uint16_t lanes;
} DLDataType;

typedef struct {
    void* data;
    DLDevice device;
    int32_t ndim;
    DLDataType dtype;
    int64_t* shape;
    int64_t* strides;
    uint64_t byte_offset;
} DLTensor;

typedef struct DLManagedTensor {
    DLTensor dl_tensor;
    void* manager_ctx;
    void (*deleter)(struct DLManagedTensor* self);
} DLManagedTensor;

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // DLPACK_DLPACK_H_

namespace tapeflow::experimental::dlpack {

/// `tensor` as a DLManagedTensor sharing its buffer (no copy; CPU or CUDA): the buffer stays alive
/// until the consumer calls the returned tensor's deleter, exactly once. Shape and strides are
/// row-major (compact); byte_offset is 0. Every tapeflow dtype has a DLPack type (bool is kDLBool,
/// bfloat16 kDLBfloat). A GPU tensor's pending ops are waited for first (the consumer reads the
/// memory on its own streams).
DLManagedTensor* to_dlpack(const Tensor& tensor);

/// A tensor over the memory `managed` describes, taking ownership: its deleter is called when the
/// last tensor (or view) referring to the memory goes, and also when this function throws. CPU and
/// CUDA memory (kDLCPU, kDLCUDAHost as CPU memory, kDLCUDA; not kDLCUDAManaged), byte_offset
/// honoured, no copy when the strides are compact (or null). Non-compact strides: CPU data is
/// copied into a compact tensor (and the deleter called at once); CUDA data is refused. A dtype
/// without a tapeflow dtype (lanes != 1, complex, int8, uint16, ...), another device type, or a
/// null pointer: InvalidArgumentError naming it. GPU memory must be ready: the producer's work on
/// it finished (e.g. torch.cuda.synchronize()), as the DLPack capsule protocol has no stream.
Tensor from_dlpack(DLManagedTensor* managed);

}  // namespace tapeflow::experimental::dlpack

TAPEFLOW_API_END
