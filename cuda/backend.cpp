// The CUDA device backend: device discovery, the caching device allocator, one stream per device
// and copies (CUDA runtime API calls only, so it is plain C++). "No GPU" shows up as
// cudaErrorInsufficientDriver (no driver) or cudaErrorNoDevice; any failure of cudaGetDeviceCount
// means zero devices, never a crash. See docs/gpu.md for the design.
#include <array>
#include <cstdlib>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "cublas_loader.hpp"
#include "cuda_backend.hpp"
#include "cuda_check.hpp"
#include "cuda_context.hpp"
#include "size_class.hpp"

namespace tapeflow {
namespace {

constexpr int kMaxDevices = 16;

// NOTE [Caching allocator]: freed blocks go to a per-device free list keyed by size class and are
// handed out again without cudaMalloc/cudaFree (both synchronize the device and cost tens of
// microseconds). All of a device's ops run on its one stream, so a block freed by the host while
// kernels that use it are still queued can be reused at once: the next user is queued behind them.
// Copies to the host synchronize that stream. When cudaMalloc fails, the cache is given back and
// the allocation retried once; a second failure is ResourceExhaustedError.
// TAPEFLOW_CUDA_CACHE=0 turns caching off (every free is a cudaFree), for compute-sanitizer runs.
class CudaAllocator final : public Allocator {
public:
    void* allocate(std::size_t nbytes, Device device) override {
        const int d = device.index();
        const std::size_t rounded = cuda_memory::size_class(nbytes);
        PerDevice& pd = per_device_[static_cast<std::size_t>(d)];
        {
            const std::lock_guard lock(mutex_);
            auto it = pd.free.find(rounded);
            if (it != pd.free.end() && !it->second.empty()) {
                void* ptr = it->second.back();
                it->second.pop_back();
                pd.stats.cached_bytes -= static_cast<int64_t>(rounded);
                ++pd.stats.cache_hits;
                return ptr;
            }
        }
        cuda_detail::make_current(d);
        void* ptr = nullptr;
        cudaError_t status = cudaMalloc(&ptr, rounded);
        if (status == cudaErrorMemoryAllocation) {
            (void)cudaGetLastError();  // clear the sticky-free error before retrying
            empty_cache(d);
            status = cudaMalloc(&ptr, rounded);
        }
        if (status == cudaErrorMemoryAllocation) {
            (void)cudaGetLastError();
            size_t free_bytes = 0, total_bytes = 0;
            (void)cudaMemGetInfo(&free_bytes, &total_bytes);
            throw errors::ResourceExhaustedError(fmt::format(
                "OOM when allocating tensor of {} bytes on {} (free {} of {} bytes after emptying "
                "tapeflow's cache)",
                nbytes,
                device.str(),
                free_bytes,
                total_bytes));
        }
        TAPEFLOW_CUDA_CHECK(status);
        const std::lock_guard lock(mutex_);
        pd.stats.reserved_bytes += static_cast<int64_t>(rounded);
        ++pd.stats.malloc_calls;
        return ptr;
    }

    void deallocate(void* ptr, std::size_t nbytes, Device device) noexcept override {
        const std::size_t rounded = cuda_memory::size_class(nbytes);
        PerDevice& pd = per_device_[static_cast<std::size_t>(device.index())];
        if (caching_) {
            const std::lock_guard lock(mutex_);
            try {
                pd.free[rounded].push_back(ptr);
                pd.stats.cached_bytes += static_cast<int64_t>(rounded);
                return;
            } catch (...) {  // no host memory for the list entry: free the block instead
            }
        }
        cuda_detail::make_current_noexcept(device.index());
        cudaFree(ptr);
        const std::lock_guard lock(mutex_);
        pd.stats.reserved_bytes -= static_cast<int64_t>(rounded);
    }

    void empty_cache(int d) {
        PerDevice& pd = per_device_[static_cast<std::size_t>(d)];
        const std::lock_guard lock(mutex_);
        cuda_detail::make_current_noexcept(d);
        cudaDeviceSynchronize();  // queued kernels may still use the blocks
        for (auto& [size, blocks] : pd.free) {
            for (void* p : blocks) {
                cudaFree(p);
                pd.stats.reserved_bytes -= static_cast<int64_t>(size);
            }
        }
        pd.free.clear();
        pd.stats.cached_bytes = 0;
        ++pd.stats.cache_flushes;
    }

    CudaAllocatorStats stats(int d) {
        const std::lock_guard lock(mutex_);
        return per_device_[static_cast<std::size_t>(d)].stats;
    }

private:
    struct PerDevice {
        std::unordered_map<std::size_t, std::vector<void*>> free;
        CudaAllocatorStats stats;
    };
    static bool caching_enabled() {
        const char* env = std::getenv("TAPEFLOW_CUDA_CACHE");
        return env == nullptr || std::string(env) != "0";
    }
    std::mutex mutex_;
    std::array<PerDevice, kMaxDevices> per_device_;
    const bool caching_ = caching_enabled();
};

class CudaBackend final : public DeviceBackend {
public:
    int device_count() override {
        std::call_once(probed_, [this] {
            int count = 0;
            const cudaError_t status = cudaGetDeviceCount(&count);
            if (status != cudaSuccess) {
                reason_ = fmt::format("cudaGetDeviceCount failed: {} ({})",
                                      cudaGetErrorName(status),
                                      cudaGetErrorString(status));
                (void)cudaGetLastError();
                count = 0;
            } else if (count == 0) {
                reason_ = "no CUDA device found";
            }
            count_ = std::min(count, kMaxDevices);
        });
        return count_;
    }
    std::string unavailable_reason() override {
        device_count();
        return reason_;
    }
    Allocator& allocator() override { return allocator_; }
    CudaAllocator& caching_allocator() { return allocator_; }

    // Everything is queued on the GPU side's stream. Device-to-host copies then wait for it (a host
    // read sees every earlier op's result); host-to-device copies from pageable memory return once
    // the source has been staged, so the caller may free or change it right away.
    void copy(void* dst,
              Device dst_device,
              const void* src,
              Device src_device,
              std::size_t nbytes) override {
        if (nbytes == 0) return;
        const Device gpu = dst_device.is_cuda() ? dst_device : src_device;
        cudaStream_t stream = cuda_detail::stream_for(gpu);
        if (dst_device.is_cuda() && src_device.is_cuda() && dst_device != src_device) {
            // Across GPUs: order after both devices' queued work.
            cuda_synchronize(src_device.index());
            TAPEFLOW_CUDA_CHECK(cudaMemcpyPeerAsync(
                dst, dst_device.index(), src, src_device.index(), nbytes, stream));
            return;
        }
        TAPEFLOW_CUDA_CHECK(cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyDefault, stream));
        if (dst_device.is_cpu()) TAPEFLOW_CUDA_CHECK(cudaStreamSynchronize(stream));
    }

    // The profiler's kernel timing (NOTE [Profiler GPU timing] in lib/profiler/op_scope.cpp): a
    // marker is a cudaEvent recorded on the device's stream (stream_for makes its device
    // current, where the event must be created too).
    void* record_marker(Device device) override {
        cudaStream_t s = cuda_detail::stream_for(device);
        cudaEvent_t event = nullptr;
        TAPEFLOW_CUDA_CHECK(cudaEventCreate(&event));
        TAPEFLOW_CUDA_CHECK(cudaEventRecord(event, s));
        return event;
    }
    double marker_elapsed_us(void* from, void* to) override {
        TAPEFLOW_CUDA_CHECK(cudaEventSynchronize(static_cast<cudaEvent_t>(to)));
        float ms = 0;
        TAPEFLOW_CUDA_CHECK(cudaEventElapsedTime(
            &ms, static_cast<cudaEvent_t>(from), static_cast<cudaEvent_t>(to)));
        return static_cast<double>(ms) * 1000.0;
    }
    void release_marker(void* marker) noexcept override {
        if (marker != nullptr) (void)cudaEventDestroy(static_cast<cudaEvent_t>(marker));
    }

    cudaStream_t stream(int d) {
        std::call_once(stream_once_[static_cast<std::size_t>(d)], [&] {
            cuda_detail::make_current(d);
            TAPEFLOW_CUDA_CHECK(cudaStreamCreateWithFlags(&streams_[static_cast<std::size_t>(d)],
                                                          cudaStreamNonBlocking));
        });
        return streams_[static_cast<std::size_t>(d)];
    }

    cublasHandle_t cublas(int d) {
        std::call_once(cublas_once_[static_cast<std::size_t>(d)], [&] {
            cudaStream_t s = stream(d);
            cublasHandle_t h = nullptr;
            const cuda_detail::CublasApi& api = cuda_detail::cublas_api();
            const cublasStatus_t status = api.create(&h);
            if (status != CUBLAS_STATUS_SUCCESS) {
                throw errors::InternalError(
                    fmt::format("cublasCreate failed on GPU:{}: {}", d, api.status_string(status)));
            }
            api.set_stream(h, s);
            cublas_[static_cast<std::size_t>(d)] = h;
        });
        return cublas_[static_cast<std::size_t>(d)];
    }

private:
    std::once_flag probed_;
    int count_ = 0;
    std::string reason_;
    CudaAllocator allocator_;
    std::array<std::once_flag, kMaxDevices> stream_once_;
    std::array<cudaStream_t, kMaxDevices> streams_{};
    std::array<std::once_flag, kMaxDevices> cublas_once_;
    std::array<cublasHandle_t, kMaxDevices> cublas_{};
};

// Never destroyed: tensors in static objects may be freed after static destructors ran, and the
// CUDA runtime may already be torn down at exit.
CudaBackend& backend() {
    static auto* instance = new CudaBackend;
    return *instance;
}

}  // namespace

DeviceBackend& cuda_backend() {
    return backend();
}

CudaAllocatorStats cuda_allocator_stats(int device) {
    return backend().caching_allocator().stats(device);
}

void cuda_empty_cache(int device) {
    backend().caching_allocator().empty_cache(device);
}

void cuda_synchronize(int device) {
    TAPEFLOW_CUDA_CHECK(cudaStreamSynchronize(cuda_detail::stream_for(Device::cuda(device))));
}

namespace cuda_detail {
namespace {

// The device this thread last made current through tapeflow (-1: none yet). Ops of one device in
// a row then make no cudaSetDevice call: it is a driver call on every op's path otherwise.
thread_local int current_device = -1;

}  // namespace

void make_current(int device) {
    if (current_device == device) return;
    TAPEFLOW_CUDA_CHECK(cudaSetDevice(device));
    current_device = device;
}

void make_current_noexcept(int device) noexcept {
    if (current_device == device) return;
    if (cudaSetDevice(device) == cudaSuccess) {
        current_device = device;
    } else {
        (void)cudaGetLastError();
        current_device = -1;
    }
}

cudaStream_t stream_for(Device device) {
    make_current(device.index());
    return backend().stream(device.index());
}

cublasHandle_t cublas_for(Device device) {
    make_current(device.index());
    return backend().cublas(device.index());
}

}  // namespace cuda_detail
}  // namespace tapeflow
