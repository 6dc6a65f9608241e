// The CUDA device backend: device discovery, device memory and copies (CUDA runtime API calls only,
// so it is plain C++). "No GPU" shows up as cudaErrorInsufficientDriver (no driver) or
// cudaErrorNoDevice; any failure of cudaGetDeviceCount means zero devices, never a crash.
#include <mutex>
#include <string>

#include "cuda_backend.hpp"
#include "cuda_check.hpp"

namespace tapeflow {
namespace {

class CudaAllocator final : public Allocator {
public:
    void* allocate(std::size_t nbytes, Device device) override {
        TAPEFLOW_CUDA_CHECK(cudaSetDevice(device.index()));
        void* ptr = nullptr;
        const cudaError_t status = cudaMalloc(&ptr, nbytes);
        if (status == cudaErrorMemoryAllocation) {
            (void)cudaGetLastError();  // clear the error before reporting it
            throw errors::ResourceExhaustedError(
                fmt::format("OOM when allocating {} bytes on {}", nbytes, device.str()));
        }
        TAPEFLOW_CUDA_CHECK(status);
        return ptr;
    }
    void deallocate(void* ptr, std::size_t /*nbytes*/, Device device) noexcept override {
        cudaSetDevice(device.index());
        cudaFree(ptr);
    }
};

class CudaBackend final : public DeviceBackend {
public:
    int device_count() override {
        std::call_once(probed_, [this] {
            int count = 0;
            const cudaError_t status = cudaGetDeviceCount(&count);
            if (status != cudaSuccess) {
                reason_ = fmt::format("cudaGetDeviceCount failed: {} ({})", cudaGetErrorName(status),
                                      cudaGetErrorString(status));
                (void)cudaGetLastError();
                count = 0;
            } else if (count == 0) {
                reason_ = "no CUDA device found";
            }
            count_ = count;
        });
        return count_;
    }
    std::string unavailable_reason() override {
        device_count();
        return reason_;
    }
    Allocator& allocator() override { return allocator_; }
    void copy(void* dst, Device dst_device, const void* src, Device src_device,
              std::size_t nbytes) override {
        if (nbytes == 0) return;
        const Device gpu = dst_device.is_cuda() ? dst_device : src_device;
        TAPEFLOW_CUDA_CHECK(cudaSetDevice(gpu.index()));
        // Unified addressing lets the runtime infer the direction; the copy is synchronous.
        TAPEFLOW_CUDA_CHECK(cudaMemcpy(dst, src, nbytes, cudaMemcpyDefault));
    }

private:
    std::once_flag probed_;
    int count_ = 0;
    std::string reason_;
    CudaAllocator allocator_;
};

}  // namespace

DeviceBackend& cuda_backend() {
    static CudaBackend backend;
    return backend;
}

}  // namespace tapeflow
