// dlopen-based loading of cuBLAS (see cublas_loader.hpp).
#include "cublas_loader.hpp"

#include <filesystem>
#include <string>

#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <fmt/format.h>

#include <tapeflow/core/error.hpp>

namespace tapeflow::cuda_detail {
namespace {

const std::string kSoname = fmt::format("libcublas.so.{}", CUBLAS_VER_MAJOR);

void* open_cublas() {
    if (void* handle = dlopen(kSoname.c_str(), RTLD_NOW | RTLD_LOCAL)) return handle;
    const std::string first_error = dlerror();
    Dl_info info{};  // next to the CUDA runtime this library was linked with
    if (dladdr(reinterpret_cast<void*>(&cudaGetDeviceCount), &info) != 0 &&
        info.dli_fname != nullptr) {
        const auto path = std::filesystem::path(info.dli_fname).parent_path() / kSoname;
        if (void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) return handle;
    }
    throw errors::InternalError(fmt::format("cannot load cuBLAS ({}): {}", kSoname, first_error));
}

template <class Fn>
void resolve(void* handle, const char* name, Fn& fn) {
    fn = reinterpret_cast<Fn>(dlsym(handle, name));
    if (fn == nullptr) {
        throw errors::InternalError(fmt::format("{} lacks the symbol {}", kSoname, name));
    }
}

CublasApi load() {
    void* handle = open_cublas();  // never closed: handles and kernels live until exit
    CublasApi api;
    resolve(handle, "cublasCreate_v2", api.create);
    resolve(handle, "cublasSetStream_v2", api.set_stream);
    resolve(handle, "cublasGemmEx", api.gemm_ex);
    resolve(handle, "cublasGemmStridedBatchedEx", api.gemm_strided_batched_ex);
    resolve(handle, "cublasGetStatusString", api.status_string);
    return api;
}

}  // namespace

const CublasApi& cublas_api() {
    static const CublasApi api = load();  // a failed load throws and is retried next call
    return api;
}

}  // namespace tapeflow::cuda_detail
