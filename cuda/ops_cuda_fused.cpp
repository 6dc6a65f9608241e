// Registry glue of the fused transformer ops on CUDA: LayerNorm and LayerNormGrad
// (layer_norm_kernels.cu) and DotProductAttention and its backward (attention_kernels.cu). Attrs
// and operands are read as the CPU kernels read them; heads larger than the tiled kernels take
// (cuda_launch::kMaxAttentionHead) run through the host fallback, as RNNSequence and its gradient
// do (no CUDA kernel yet).
#include <algorithm>

#include "launch_fused.hpp"
#include "ops/attention_operands.hpp"
#include "ops_cuda.hpp"

namespace tapeflow::cuda_ops {
namespace {

DType stats_dtype(DType dtype) {
    return dtype == DType::float64 ? DType::float64 : DType::float32;
}

void layer_norm_kernel(const KernelContext& ctx) {
    const Tensor& x = ctx.inputs[0];
    TAPEFLOW_CUDA_CHECK(cuda_launch::layer_norm(elem_of(x.dtype()),
                                                x.raw_data(),
                                                ctx.inputs[1].raw_data(),
                                                ctx.inputs[2].raw_data(),
                                                ctx.attrs.get<double>("epsilon"),
                                                ctx.outputs[0].mutable_raw_data(),
                                                ctx.outputs[1].mutable_raw_data(),
                                                ctx.outputs[2].mutable_raw_data(),
                                                x.shape()[0],
                                                x.shape()[1],
                                                stream_of(ctx)));
}

void layer_norm_grad_kernel(const KernelContext& ctx) {
    const Tensor& x = ctx.inputs[1];
    const int64_t rows = x.shape()[0];
    const int64_t cols = x.shape()[1];
    Tensor scratch = Tensor::empty(Shape({2 * cols * cuda_launch::layer_norm_grad_partials(rows)}),
                                   stats_dtype(x.dtype()),
                                   ctx.device);
    TAPEFLOW_CUDA_CHECK(cuda_launch::layer_norm_grad(elem_of(x.dtype()),
                                                     ctx.inputs[0].raw_data(),
                                                     x.raw_data(),
                                                     ctx.inputs[2].raw_data(),
                                                     ctx.inputs[3].raw_data(),
                                                     ctx.inputs[4].raw_data(),
                                                     ctx.outputs[0].mutable_raw_data(),
                                                     ctx.outputs[1].mutable_raw_data(),
                                                     ctx.outputs[2].mutable_raw_data(),
                                                     scratch.mutable_raw_data(),
                                                     rows,
                                                     cols,
                                                     stream_of(ctx)));
}

void set_strides(const Shape& s, int64_t (&st)[4]) {
    const std::array<int64_t, 4> v = broadcast_strides4(s);
    std::copy(v.begin(), v.end(), st);
}

// The call's geometry; `first` is the index of the bias (or mask) among the inputs.
cuda_launch::AttentionParams params_of(const KernelContext& ctx,
                                       const Tensor& q,
                                       const Tensor& k,
                                       std::size_t first) {
    cuda_launch::AttentionParams p;
    p.b = q.shape()[0], p.t = q.shape()[1], p.n = q.shape()[2], p.h = q.shape()[3];
    p.s = k.shape()[1];
    p.scale = ctx.attrs.get<double>("scale");
    p.causal = ctx.attrs.get<bool>("causal");
    std::size_t next = first;
    if (ctx.attrs.get<bool>("has_bias")) {
        p.bias = ctx.inputs[next].raw_data();
        set_strides(ctx.inputs[next++].shape(), p.bias_st);
    }
    if (ctx.attrs.get<bool>("has_mask")) {
        p.mask = static_cast<const bool*>(ctx.inputs[next].raw_data());
        set_strides(ctx.inputs[next].shape(), p.mask_st);
    }
    return p;
}

void attention_kernel(const KernelContext& ctx) {
    const Tensor& q = ctx.inputs[0];
    if (q.shape()[3] > cuda_launch::kMaxAttentionHead) return host_fallback(ctx);
    const cuda_launch::AttentionParams p = params_of(ctx, q, ctx.inputs[1], 3);
    TAPEFLOW_CUDA_CHECK(cuda_launch::attention(elem_of(q.dtype()),
                                               p,
                                               q.raw_data(),
                                               ctx.inputs[1].raw_data(),
                                               ctx.inputs[2].raw_data(),
                                               ctx.outputs[0].mutable_raw_data(),
                                               ctx.outputs[1].mutable_raw_data(),
                                               stream_of(ctx)));
}

void attention_grad_kernel(const KernelContext& ctx) {
    const Tensor& q = ctx.inputs[1];
    if (q.shape()[3] > cuda_launch::kMaxAttentionHead) return host_fallback(ctx);
    const cuda_launch::AttentionParams p = params_of(ctx, q, ctx.inputs[2], 6);
    Tensor scratch = Tensor::empty(Shape({p.b * p.n * p.t}), stats_dtype(q.dtype()), ctx.device);
    void* dbias = ctx.attrs.get<bool>("want_dbias") ? ctx.outputs[3].mutable_raw_data() : nullptr;
    TAPEFLOW_CUDA_CHECK(cuda_launch::attention_grad(elem_of(q.dtype()),
                                                    p,
                                                    ctx.inputs[0].raw_data(),
                                                    q.raw_data(),
                                                    ctx.inputs[2].raw_data(),
                                                    ctx.inputs[3].raw_data(),
                                                    ctx.inputs[4].raw_data(),
                                                    ctx.inputs[5].raw_data(),
                                                    ctx.outputs[0].mutable_raw_data(),
                                                    ctx.outputs[1].mutable_raw_data(),
                                                    ctx.outputs[2].mutable_raw_data(),
                                                    dbias,
                                                    scratch.mutable_raw_data(),
                                                    stream_of(ctx)));
}

}  // namespace

void register_fused_cuda(KernelRegistry& r) {
    constexpr auto kCuda = DeviceType::cuda;
    r.add(Op::layer_norm, kCuda, layer_norm_kernel, kFloatTypes);
    r.add(Op::layer_norm_grad, kCuda, layer_norm_grad_kernel, kFloatTypes);
    r.add(Op::attention, kCuda, attention_kernel, kFloatTypes);
    r.add(Op::attention_grad, kCuda, attention_grad_kernel, kFloatTypes);
    // The recurrent sequence op (lib/ops/rnn.cpp) has no CUDA kernel yet: the CPU kernel on host
    // copies. The Keras layers run their op loop on the GPU instead (rnn::uses_fused).
    const DTypeSet rnn_types{DType::float32, DType::float64};
    r.add(Op::rnn_sequence, kCuda, host_fallback, rnn_types);
    r.add(Op::rnn_sequence_grad, kCuda, host_fallback, rnn_types);
}

}  // namespace tapeflow::cuda_ops
