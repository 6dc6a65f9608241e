// Registry glue of TopKV2 on CUDA (topk_kernels.cu): the CPU kernel's attrs and dtypes.
#include "launch_models.hpp"
#include "ops_cuda.hpp"

namespace tapeflow::cuda_ops {
namespace {

void top_k_kernel(const KernelContext& ctx) {
    const Tensor& x = ctx.inputs[0];
    Tensor& values = ctx.outputs[0];
    const int64_t k = ctx.attrs.get<int64_t>("k");
    if (values.num_elements() == 0) return;
    TAPEFLOW_CUDA_CHECK(cuda_launch::top_k(elem_of(x.dtype()),
                                           x.raw_data(),
                                           values.mutable_raw_data(),
                                           static_cast<int32_t*>(ctx.outputs[1].mutable_raw_data()),
                                           values.num_elements() / k,
                                           x.shape()[-1],
                                           k,
                                           stream_of(ctx)));
}

}  // namespace

void register_sort_cuda(KernelRegistry& r) {
    r.add(Op::top_k, DeviceType::cuda, top_k_kernel, kFloatTypes | kIntTypes);
}

}  // namespace tapeflow::cuda_ops
