// The CUDA kernels as the registry sees them: unpack a KernelContext, call a launcher from the .cu
// files (launch.hpp), check the status. register_cuda_kernels() is the mirror of register_cpu.cpp;
// the families' glue lives in ops_cuda_{elementwise,reduce,array}.cpp. Ops without a CUDA kernel
// yet run through host_fallback (CPU kernel on host copies), listed in fallback_ops below.
#include "ops_cuda.hpp"

#include <array>
#include <cstring>
#include <mutex>

#include "core/dtype_dispatch.hpp"
#include "cuda_backend.hpp"
#include "kernels/shared/philox.hpp"
#include "kernels/shared/random_attrs.hpp"

namespace tapeflow {
namespace cuda_ops {

std::vector<int64_t> row_major_strides(const std::vector<int64_t>& dims) {
    std::vector<int64_t> strides(dims.size(), 1);
    for (std::size_t d = dims.size(); d-- > 1;)
        strides[d - 1] = strides[d] * dims[d];
    return strides;
}

uint64_t value_bits(DType dtype, double value) {
    uint64_t bits = 0;
    visit_dtype(dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T converted = convert_element<T>(value);
        std::memcpy(&bits, &converted, sizeof(T));
    });
    return bits;
}

Tensor upload_ids(const std::vector<int64_t>& ids, Device device) {
    Tensor host = Tensor::empty(Shape{static_cast<int64_t>(ids.size())}, DType::int64);
    if (!ids.empty())
        std::memcpy(host.mutable_raw_data(), ids.data(), ids.size() * sizeof(int64_t));
    return host.to(device);
}

int sm_count(Device device) {
    static std::array<int, 16> counts{};
    static std::array<std::once_flag, 16> once;
    const auto d = static_cast<std::size_t>(device.index());
    std::call_once(once[d], [&] {
        TAPEFLOW_CUDA_CHECK(
            cudaDeviceGetAttribute(&counts[d], cudaDevAttrMultiProcessorCount, device.index()));
    });
    return counts[d];
}

void host_fallback(const KernelContext& ctx) {
    std::vector<Tensor> inputs;
    for (const Tensor& t : ctx.inputs)
        inputs.push_back(t.cpu());  // synchronizes the stream
    std::vector<Tensor> outputs;
    for (const Tensor& t : ctx.outputs)
        outputs.push_back(Tensor::empty(t.shape(), t.dtype()));
    const bool on_input = op_dispatch(ctx.op) == DispatchOn::input || outputs.empty();
    const DType dtype = on_input ? inputs[0].dtype() : outputs[0].dtype();
    const KernelFn cpu_kernel = kernel_registry().find(ctx.op, Device::cpu(), dtype);
    cpu_kernel(KernelContext{ctx.op, Device::cpu(), inputs, outputs, ctx.attrs});
    DeviceBackend* backend = &cuda_backend();
    for (std::size_t i = 0; i < outputs.size(); ++i) {
        backend->copy(ctx.outputs[i].mutable_raw_data(),
                      ctx.device,
                      outputs[i].raw_data(),
                      Device::cpu(),
                      outputs[i].nbytes());
    }
}

namespace {

// (op, dtypes) served by host_fallback: kept in one list so that the parity suite can report it.
struct Fallback {
    Op op;
    DTypeSet dtypes;
};
// float64 normals: TensorFlow's BoxMullerDouble calls glibc's log and sincos, which no device
// function reproduces bit for bit, so the CPU kernel draws them (CPU == GPU == TensorFlow's CPU).
// RNNSequence and its gradient: no CUDA kernel yet (cuda/ops_cuda_fused.cpp).
const std::array<Fallback, 4> kFallbacks{
    {{Op::random_normal, DTypeSet{DType::float64}},
     {Op::truncated_normal, DTypeSet{DType::float64}},
     {Op::rnn_sequence, DTypeSet{DType::float32, DType::float64}},
     {Op::rnn_sequence_grad, DTypeSet{DType::float32, DType::float64}}}};

void identity_kernel(const KernelContext& ctx) {
    const Tensor& x = ctx.inputs[0];
    if (x.nbytes() == 0) return;
    TAPEFLOW_CUDA_CHECK(cudaMemcpyAsync(ctx.outputs[0].mutable_raw_data(),
                                        x.raw_data(),
                                        x.nbytes(),
                                        cudaMemcpyDeviceToDevice,
                                        stream_of(ctx)));
}

// The value is converted on the host (the CPU kernel's conversion), then its bit pattern is
// broadcast by element size: one launcher serves every dtype.
void fill_kernel(const KernelContext& ctx) {
    const Tensor& y = ctx.outputs[0];
    const uint64_t pattern = value_bits(y.dtype(), ctx.attrs.get<double>("value"));
    TAPEFLOW_CUDA_CHECK(cuda_launch::fill_bits(y.mutable_raw_data(),
                                               y.num_elements(),
                                               pattern,
                                               static_cast<int>(dtype_size(y.dtype())),
                                               stream_of(ctx)));
}

// The dims live on the host: written there and copied up (the input's data is never read).
// tf::shape() builds GPU results itself; this entry serves direct apply() calls.
void shape_kernel(const KernelContext& ctx) {
    const auto& dims = ctx.inputs[0].shape().dims();
    const Tensor& y = ctx.outputs[0];
    const std::vector<int32_t> host(dims.begin(), dims.end());
    if (y.nbytes() != host.size() * sizeof(int32_t)) return host_fallback(ctx);
    cuda_backend().copy(y.mutable_raw_data(), ctx.device, host.data(), Device::cpu(), y.nbytes());
}

// The attrs are read as the CPU kernel reads them (random_cpu.cpp), the sampling is shared.
template <cuda_launch::Distribution D>
void random_kernel(const KernelContext& ctx) {
    constexpr auto kDist = D == cuda_launch::Distribution::uniform ? philox::Dist::uniform
                           : D == cuda_launch::Distribution::normal
                               ? philox::Dist::normal
                               : philox::Dist::truncated_normal;
    const Tensor& y = ctx.outputs[0];
    if (uses_host_fallback(ctx.op, y.dtype())) return host_fallback(ctx);
    cuda_launch::RandomParams p;
    p.distribution = D;
    p.seed = static_cast<uint64_t>(ctx.attrs.get<int64_t>("seed"));
    p.seed2 = static_cast<uint64_t>(ctx.attrs.get<int64_t>("seed2"));
    p.offset = static_cast<uint64_t>(ctx.attrs.get<int64_t>("offset"));
    if (y.dtype() == DType::int32 || y.dtype() == DType::int64) {
        const random_attrs::IntRange range = random_attrs::int_range(ctx.attrs);
        p.int_lo = range.lo;
        p.int_range = range.range;
    } else {
        const philox::Affine affine =
            random_attrs::affine(ctx.attrs, kDist, random_attrs::format(y.dtype()));
        p.scale = affine.scale;
        p.shift = affine.shift;
    }
    TAPEFLOW_CUDA_CHECK(cuda_launch::random(
        y.mutable_raw_data(), y.num_elements(), elem_of(y.dtype()), p, stream_of(ctx)));
}

// The permutation depends on the generator and the row count only: drawn on the host with the
// CPU's function, copied up (asynchronously), and the rows gathered on the device.
void random_shuffle_kernel(const KernelContext& ctx) {
    const Tensor& x = ctx.inputs[0];
    const int64_t rows = x.rank() == 0 ? 1 : x.shape()[0];
    if (rows == 0 || x.nbytes() == 0) return;
    const std::vector<int64_t> perm =
        philox::shuffle_permutation(random_attrs::generator(ctx.attrs), rows, x.num_elements());
    const Tensor device_perm = Tensor::empty(Shape{rows}, DType::int64, ctx.device);
    cuda_backend().copy(device_perm.mutable_raw_data(),
                        ctx.device,
                        perm.data(),
                        Device::cpu(),
                        perm.size() * sizeof(int64_t));
    TAPEFLOW_CUDA_CHECK(
        cuda_launch::permute_rows(x.raw_data(),
                                  ctx.outputs[0].mutable_raw_data(),
                                  static_cast<const int64_t*>(device_perm.raw_data()),
                                  rows,
                                  static_cast<int64_t>(x.nbytes()) / rows,
                                  stream_of(ctx)));
}

}  // namespace

bool uses_host_fallback(Op op, DType dtype) {
    for (const Fallback& f : kFallbacks) {
        if (f.op == op && f.dtypes.contains(dtype)) return true;
    }
    return false;
}

}  // namespace cuda_ops

void register_cuda_kernels(KernelRegistry& r) {
    using namespace cuda_ops;
    using cuda_launch::Distribution;
    constexpr auto kCuda = DeviceType::cuda;
    r.add(Op::identity, kCuda, identity_kernel, kAllTypes);
    r.add(Op::fill, kCuda, fill_kernel, kAllTypes);
    // Same dtype sets as the CPU.
    r.add(Op::random_uniform,
          kCuda,
          random_kernel<Distribution::uniform>,
          kFloatTypes | DTypeSet{DType::int32, DType::int64});
    r.add(Op::random_normal, kCuda, random_kernel<Distribution::normal>, kFloatTypes);
    r.add(Op::truncated_normal, kCuda, random_kernel<Distribution::truncated_normal>, kFloatTypes);
    r.add(Op::random_shuffle, kCuda, random_shuffle_kernel, kAllTypes);
    r.add(Op::shape, kCuda, shape_kernel, kAllTypes);
    register_elementwise_cuda(r);
    register_reduce_cuda(r);
    register_matmul_cuda(r);
    register_array_cuda(r);
    register_nn_cuda(r);
    register_training_cuda(r);
    register_sort_cuda(r);
    register_depthwise_cuda(r);
    register_fused_cuda(r);
}

}  // namespace tapeflow
