// cuBLAS, loaded on first use. Linking libcublas made every process that loads libtapeflow map
// and touch about 210 MiB (libcublasLt's initializers), GPU or not; now only a process that runs
// a matmul on a GPU pays that, once.
#pragma once

#include <cublas_v2.h>

namespace tapeflow::cuda_detail {

/// The cuBLAS entry points tapeflow calls (the _v2 ABI that cublas_v2.h's names map to). The gemm
/// types are spelled out: C++ overloads of cublasGemmEx (a legacy computeType) hide them.
struct CublasApi {
    using GemmEx = cublasStatus_t (*)(cublasHandle_t,
                                      cublasOperation_t,
                                      cublasOperation_t,
                                      int,
                                      int,
                                      int,
                                      const void*,
                                      const void*,
                                      cudaDataType,
                                      int,
                                      const void*,
                                      cudaDataType,
                                      int,
                                      const void*,
                                      void*,
                                      cudaDataType,
                                      int,
                                      cublasComputeType_t,
                                      cublasGemmAlgo_t);
    using GemmStridedBatchedEx = cublasStatus_t (*)(cublasHandle_t,
                                                    cublasOperation_t,
                                                    cublasOperation_t,
                                                    int,
                                                    int,
                                                    int,
                                                    const void*,
                                                    const void*,
                                                    cudaDataType,
                                                    int,
                                                    long long,
                                                    const void*,
                                                    cudaDataType,
                                                    int,
                                                    long long,
                                                    const void*,
                                                    void*,
                                                    cudaDataType,
                                                    int,
                                                    long long,
                                                    int,
                                                    cublasComputeType_t,
                                                    cublasGemmAlgo_t);
    decltype(&cublasCreate_v2) create = nullptr;
    decltype(&cublasSetStream_v2) set_stream = nullptr;
    GemmEx gemm_ex = nullptr;
    GemmStridedBatchedEx gemm_strided_batched_ex = nullptr;
    decltype(&cublasGetStatusString) status_string = nullptr;
};

/// Loads libcublas.so.<major> (the library path, then the directory of the CUDA runtime
/// tapeflow was linked with) on the first call. InternalError naming the library and dlerror()
/// when it or one of its symbols is missing.
const CublasApi& cublas_api();

}  // namespace tapeflow::cuda_detail
