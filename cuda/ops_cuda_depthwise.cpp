// Registry glue of DepthwiseConv2dNative and its backprops on CUDA (depthwise_kernels.cu): the
// CPU kernels' attrs (nn_detail::window_from) and dtypes.
#include "launch_models.hpp"
#include "ops/nn_common.hpp"
#include "ops_cuda.hpp"

namespace tapeflow::cuda_ops {
namespace {

constexpr DTypeSet kRealTypes{DType::float32, DType::float64};

void depthwise_kernel(const KernelContext& ctx) {
    const Tensor& x = ctx.inputs[0];
    const Tensor& filt = ctx.inputs[1];
    const auto w = window_of(nn_detail::window_from(x.shape(), ctx.attrs));
    TAPEFLOW_CUDA_CHECK(cuda_launch::depthwise_conv2d(elem_of(x.dtype()),
                                                      w,
                                                      filt.shape()[3],
                                                      x.raw_data(),
                                                      filt.raw_data(),
                                                      ctx.outputs[0].mutable_raw_data(),
                                                      stream_of(ctx)));
}

// inputs (filter, dy) -> dx
void depthwise_backprop_input_kernel(const KernelContext& ctx) {
    const Tensor& filt = ctx.inputs[0];
    const Tensor& dy = ctx.inputs[1];
    Tensor& dx = ctx.outputs[0];
    const auto w = window_of(nn_detail::window_from(dx.shape(), ctx.attrs));
    TAPEFLOW_CUDA_CHECK(cuda_launch::depthwise_backprop_input(elem_of(dy.dtype()),
                                                              w,
                                                              filt.shape()[3],
                                                              filt.raw_data(),
                                                              dy.raw_data(),
                                                              dx.mutable_raw_data(),
                                                              stream_of(ctx)));
}

// inputs (x, dy) -> dw
void depthwise_backprop_filter_kernel(const KernelContext& ctx) {
    const Tensor& x = ctx.inputs[0];
    const Tensor& dy = ctx.inputs[1];
    Tensor& dw = ctx.outputs[0];
    const auto w = window_of(nn_detail::window_from(x.shape(), ctx.attrs));
    TAPEFLOW_CUDA_CHECK(cuda_launch::depthwise_backprop_filter(elem_of(x.dtype()),
                                                               w,
                                                               dw.shape()[3],
                                                               x.raw_data(),
                                                               dy.raw_data(),
                                                               dw.mutable_raw_data(),
                                                               stream_of(ctx)));
}

}  // namespace

void register_depthwise_cuda(KernelRegistry& r) {
    constexpr auto kCuda = DeviceType::cuda;
    r.add(Op::depthwise_conv2d, kCuda, depthwise_kernel, kRealTypes);
    r.add(Op::depthwise_conv2d_backprop_input, kCuda, depthwise_backprop_input_kernel, kRealTypes);
    r.add(
        Op::depthwise_conv2d_backprop_filter, kCuda, depthwise_backprop_filter_kernel, kRealTypes);
}

}  // namespace tapeflow::cuda_ops
