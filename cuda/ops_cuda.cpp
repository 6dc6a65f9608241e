// The CUDA kernels as the registry sees them: unpack a KernelContext, call a launcher from the .cu
// files (launch.hpp), check the status. register_cuda_kernels() is the mirror of register_cpu.cpp;
// ops without a line here raise UnimplementedError on GPU tensors, naming the op and dtype.
#include <cstring>

#include "core/dtype_dispatch.hpp"
#include "cuda_check.hpp"
#include "launch.hpp"
#include "ops/dispatch.hpp"

namespace tapeflow {
namespace {

void identity_kernel(const KernelContext& ctx) {
    const Tensor& x = ctx.inputs[0];
    if (x.nbytes() == 0) return;
    TAPEFLOW_CUDA_CHECK(cudaSetDevice(ctx.device.index()));
    TAPEFLOW_CUDA_CHECK(cudaMemcpy(ctx.outputs[0].mutable_raw_data(), x.raw_data(), x.nbytes(),
                                   cudaMemcpyDeviceToDevice));
}

// The value is converted on the host (the CPU kernel's conversion), then its bit pattern is
// broadcast by element size: one launcher serves every dtype.
void fill_kernel(const KernelContext& ctx) {
    const Tensor& y = ctx.outputs[0];
    uint64_t pattern = 0;
    visit_dtype(y.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T value = convert_element<T>(ctx.attrs.get<double>("value"));
        std::memcpy(&pattern, &value, sizeof(T));
    });
    TAPEFLOW_CUDA_CHECK(cudaSetDevice(ctx.device.index()));
    TAPEFLOW_CUDA_CHECK(cuda_launch::fill_bits(y.mutable_raw_data(), y.num_elements(), pattern,
                                               static_cast<int>(dtype_size(y.dtype()))));
}

template <cuda_launch::Distribution D>
void random_kernel(const KernelContext& ctx) {
    const Tensor& y = ctx.outputs[0];
    const bool uniform = D == cuda_launch::Distribution::uniform;
    const double a = ctx.attrs.get<double>(uniform ? "minval" : "mean");
    const double b = uniform ? ctx.attrs.get<double>("maxval") - a : ctx.attrs.get<double>("stddev");
    TAPEFLOW_CUDA_CHECK(cudaSetDevice(ctx.device.index()));
    TAPEFLOW_CUDA_CHECK(cuda_launch::random(
        y.mutable_raw_data(), y.num_elements(), y.dtype() == DType::float64, D,
        static_cast<uint64_t>(ctx.attrs.get<int64_t>("key")),
        static_cast<uint64_t>(ctx.attrs.get<int64_t>("call")), a, b));
}

}  // namespace

void register_cuda_kernels(KernelRegistry& r) {
    using cuda_launch::Distribution;
    constexpr auto kCuda = DeviceType::cuda;
    constexpr DTypeSet kF32F64{DType::float32, DType::float64};
    r.add(Op::identity, kCuda, identity_kernel, kAllTypes);
    r.add(Op::fill, kCuda, fill_kernel, kAllTypes);
    r.add(Op::random_uniform, kCuda, random_kernel<Distribution::uniform>, kF32F64);
    r.add(Op::random_normal, kCuda, random_kernel<Distribution::normal>, kF32F64);
    r.add(Op::truncated_normal, kCuda, random_kernel<Distribution::truncated_normal>, kF32F64);
}

}  // namespace tapeflow
