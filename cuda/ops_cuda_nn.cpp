// Registry glue of the nn ops on CUDA: activations, softmax, the fused losses, bias_add, conv2d
// and its backprops (im2col/col2im kernels around cuBLAS GEMMs, the CPU's patch-matrix layout and
// chunking), max_pool, avg_pool and avg_pool_grad. Attrs are read as the CPU kernels read them
// (nn_detail::window_from), and the dtype sets are the CPU's.
#include <algorithm>

#include "cublas_loader.hpp"
#include "kernels/shared/elementwise_host.hpp"
#include "ops/nn_common.hpp"
#include "ops_cuda.hpp"

namespace tapeflow::cuda_ops {

cuda_launch::Window window_of(const nn_detail::Window2d& w) {
    cuda_launch::Window v;
    v.n = w.n, v.h = w.h, v.w = w.w, v.c = w.c;
    v.kh = w.kh, v.kw = w.kw, v.sh = w.sh, v.sw = w.sw, v.dh = w.dh, v.dw = w.dw;
    v.pad_top = w.pad_top, v.pad_left = w.pad_left;
    v.oh = w.oh, v.ow = w.ow;
    return v;
}

namespace {

using cuda_launch::Activation;
using cuda_launch::Xent;

constexpr DTypeSet kRealTypes{DType::float32, DType::float64};
constexpr int64_t kPatchBudget = int64_t{1} << 28;  // bytes of patch matrix per chunk (256 MiB)

template <Activation A>
void activation_kernel(const KernelContext& ctx) {
    const Tensor& x = ctx.inputs[0];
    const double alpha = A == Activation::leaky_relu ? ctx.attrs.get<double>("alpha") : 0.0;
    TAPEFLOW_CUDA_CHECK(cuda_launch::activation(A,
                                                alpha,
                                                elem_of(x.dtype()),
                                                x.raw_data(),
                                                ctx.outputs[0].mutable_raw_data(),
                                                x.num_elements(),
                                                stream_of(ctx)));
}

template <Activation A>
void activation_grad_kernel(const KernelContext& ctx) {
    const Tensor& g = ctx.inputs[0];
    const double alpha = A == Activation::leaky_relu ? ctx.attrs.get<double>("alpha") : 0.0;
    TAPEFLOW_CUDA_CHECK(cuda_launch::activation_grad(A,
                                                     alpha,
                                                     elem_of(g.dtype()),
                                                     g.raw_data(),
                                                     ctx.inputs[1].raw_data(),
                                                     ctx.outputs[0].mutable_raw_data(),
                                                     g.num_elements(),
                                                     stream_of(ctx)));
}

template <bool kLog>
void softmax_kernel(const KernelContext& ctx) {
    const Tensor& x = ctx.inputs[0];
    const Shape& s = x.shape();
    const int64_t axis = ctx.attrs.get<int64_t>("axis");
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < s.rank(); ++d) {
        if (d < axis) outer *= s[d];
        if (d > axis) inner *= s[d];
    }
    TAPEFLOW_CUDA_CHECK(cuda_launch::softmax(kLog,
                                             elem_of(x.dtype()),
                                             x.raw_data(),
                                             ctx.outputs[0].mutable_raw_data(),
                                             outer,
                                             s[axis],
                                             inner,
                                             stream_of(ctx)));
}

template <Xent K>
void xent_kernel(const KernelContext& ctx) {
    const Tensor& logits = ctx.inputs[0];
    const Tensor& labels = ctx.inputs[1];
    Tensor& out = ctx.outputs[0];
    const int64_t n = logits.shape().rank() == 0 ? 1 : logits.shape()[-1];
    cudaStream_t stream = stream_of(ctx);
    if (n == 0) {  // empty rows: zero losses (as the CPU)
        if (out.nbytes() > 0)
            TAPEFLOW_CUDA_CHECK(cudaMemsetAsync(out.mutable_raw_data(), 0, out.nbytes(), stream));
        return;
    }
    TAPEFLOW_CUDA_CHECK(cuda_launch::xent(K,
                                          elem_of(logits.dtype()),
                                          logits.raw_data(),
                                          labels.raw_data(),
                                          labels.dtype() == DType::int64,
                                          out.mutable_raw_data(),
                                          logits.num_elements() / n,
                                          n,
                                          stream));
}

void bias_add_kernel(const KernelContext& ctx) {
    const Tensor& x = ctx.inputs[0];
    const Tensor& bias = ctx.inputs[1];
    const int64_t n = x.num_elements();
    if (n == 0) return;
    const int64_t c = bias.num_elements();
    const int64_t inner = ctx.attrs.get<bool>("nchw") ? n / (x.shape()[0] * c) : 1;
    TAPEFLOW_CUDA_CHECK(cuda_launch::bias_add(elem_of(x.dtype()),
                                              x.raw_data(),
                                              bias.raw_data(),
                                              ctx.outputs[0].mutable_raw_data(),
                                              n,
                                              c,
                                              inner,
                                              stream_of(ctx)));
}

// ---- conv2d: the CPU's patch matrix [rows = images*oh*ow, K = kh*kw*c] ----

// Row-major C[m, n] (ldc) = op(A) op(B) + beta C through column-major cuBLAS (C^T = B^T A^T):
// `ta`/`tb` say whether A/B are stored transposed (row-major [k, m] / [n, k]).
void gemm(const KernelContext& ctx,
          DType dtype,
          bool ta,
          bool tb,
          int64_t m,
          int64_t n,
          int64_t k,
          const void* a,
          int64_t lda,
          const void* b,
          int64_t ldb,
          bool accumulate,
          void* c,
          int64_t ldc) {
    const float one_f = 1.F, zero_f = 0.F;
    const double one_d = 1.0, zero_d = 0.0;
    const bool f64 = dtype == DType::float64;
    const void* alpha = f64 ? static_cast<const void*>(&one_d) : &one_f;
    const void* beta = f64 ? (accumulate ? static_cast<const void*>(&one_d) : &zero_d)
                           : (accumulate ? &one_f : &zero_f);
    const cudaDataType_t type = f64 ? CUDA_R_64F : CUDA_R_32F;
    TAPEFLOW_CUBLAS_CHECK(
        cuda_detail::cublas_api().gemm_ex(cuda_detail::cublas_for(ctx.device),
                                          tb ? CUBLAS_OP_T : CUBLAS_OP_N,
                                          ta ? CUBLAS_OP_T : CUBLAS_OP_N,
                                          static_cast<int>(n),
                                          static_cast<int>(m),
                                          static_cast<int>(k),
                                          alpha,
                                          b,
                                          type,
                                          static_cast<int>(ldb),
                                          a,
                                          type,
                                          static_cast<int>(lda),
                                          beta,
                                          c,
                                          type,
                                          static_cast<int>(ldc),
                                          f64 ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F,
                                          CUBLAS_GEMM_DEFAULT));
}

void zero(const KernelContext& ctx, Tensor& t) {
    if (t.nbytes() > 0)
        TAPEFLOW_CUDA_CHECK(cudaMemsetAsync(t.mutable_raw_data(), 0, t.nbytes(), stream_of(ctx)));
}

// Images per chunk so that the chunk's patch matrix stays within kPatchBudget.
int64_t images_per_chunk(const nn_detail::Window2d& w, DType dtype) {
    const int64_t per_image =
        w.oh * w.ow * w.kh * w.kw * w.c * static_cast<int64_t>(dtype_size(dtype));
    return std::clamp<int64_t>(
        kPatchBudget / std::max<int64_t>(per_image, 1), 1, std::max<int64_t>(w.n, 1));
}

const char* at(const Tensor& t, int64_t elements) {
    return static_cast<const char*>(t.raw_data()) +
           elements * static_cast<int64_t>(dtype_size(t.dtype()));
}
char* at_mut(Tensor& t, int64_t elements) {
    return static_cast<char*>(t.mutable_raw_data()) +
           elements * static_cast<int64_t>(dtype_size(t.dtype()));
}

// body(n0, count, rows, patches) for each chunk of `count` images from image n0 (rows =
// count*oh*ow), with a patch matrix of rows x K (reused by every chunk).
template <class Body>
void for_each_chunk(const KernelContext& ctx,
                    const nn_detail::Window2d& w,
                    DType dtype,
                    const Body& body) {
    const int64_t chunk = images_per_chunk(w, dtype);
    Tensor patches =
        Tensor::empty(Shape{chunk * w.oh * w.ow * w.kh * w.kw * w.c}, dtype, ctx.device);
    for (int64_t n0 = 0; n0 < w.n; n0 += chunk) {
        const int64_t count = std::min(chunk, w.n - n0);
        body(n0, count, count * w.oh * w.ow, patches);
    }
}

// The patch matrix of images [n0, n0 + count) of x.
void im2col(const KernelContext& ctx,
            const nn_detail::Window2d& w,
            const Tensor& x,
            int64_t n0,
            int64_t count,
            Tensor& patches) {
    TAPEFLOW_CUDA_CHECK(cuda_launch::im2col(elem_of(x.dtype()),
                                            window_of(w),
                                            at(x, n0 * w.h * w.w * w.c),
                                            count,
                                            patches.mutable_raw_data(),
                                            stream_of(ctx)));
}

// y[rows, O] = patches[rows, K] @ w[K, O], chunk by chunk.
void conv2d_kernel(const KernelContext& ctx) {
    const Tensor& x = ctx.inputs[0];
    const Tensor& filt = ctx.inputs[1];
    Tensor& y = ctx.outputs[0];
    const nn_detail::Window2d w = nn_detail::window_from(x.shape(), ctx.attrs);
    const int64_t o = filt.shape()[3];
    const int64_t k = w.kh * w.kw * w.c;
    if (y.num_elements() == 0) return;
    if (k == 0) return zero(ctx, y);
    for_each_chunk(
        ctx, w, x.dtype(), [&](int64_t n0, int64_t count, int64_t rows, Tensor& patches) {
            im2col(ctx, w, x, n0, count, patches);
            gemm(ctx,
                 x.dtype(),
                 false,
                 false,
                 rows,
                 o,
                 k,
                 patches.raw_data(),
                 k,
                 filt.raw_data(),
                 o,
                 false,
                 at_mut(y, n0 * w.oh * w.ow * o),
                 o);
        });
}

// inputs (filter, dy) -> dx: dpatches = dy @ w^T, then col2im.
void conv2d_backprop_input_kernel(const KernelContext& ctx) {
    const Tensor& filt = ctx.inputs[0];
    const Tensor& dy = ctx.inputs[1];
    Tensor& dx = ctx.outputs[0];
    const nn_detail::Window2d w = nn_detail::window_from(dx.shape(), ctx.attrs);
    const int64_t o = filt.shape()[3];
    const int64_t k = w.kh * w.kw * w.c;
    if (dx.num_elements() == 0) return;
    if (o == 0 || w.oh * w.ow == 0 || k == 0) return zero(ctx, dx);
    for_each_chunk(
        ctx, w, dy.dtype(), [&](int64_t n0, int64_t count, int64_t rows, Tensor& dpatches) {
            gemm(ctx,
                 dy.dtype(),
                 false,
                 true,
                 rows,
                 k,
                 o,
                 at(dy, n0 * w.oh * w.ow * o),
                 o,
                 filt.raw_data(),
                 o,
                 false,
                 dpatches.mutable_raw_data(),
                 k);
            TAPEFLOW_CUDA_CHECK(cuda_launch::col2im(elem_of(dy.dtype()),
                                                    window_of(w),
                                                    dpatches.raw_data(),
                                                    count,
                                                    at_mut(dx, n0 * w.h * w.w * w.c),
                                                    stream_of(ctx)));
        });
}

// inputs (x, dy) -> dw [kh, kw, c, o] = sum over chunks of patches^T @ dy.
void conv2d_backprop_filter_kernel(const KernelContext& ctx) {
    const Tensor& x = ctx.inputs[0];
    const Tensor& dy = ctx.inputs[1];
    Tensor& dw = ctx.outputs[0];
    const nn_detail::Window2d w = nn_detail::window_from(x.shape(), ctx.attrs);
    const int64_t o = dw.shape()[3];
    const int64_t k = w.kh * w.kw * w.c;
    if (dw.num_elements() == 0) return;
    if (w.n * w.oh * w.ow == 0) return zero(ctx, dw);
    for_each_chunk(
        ctx, w, x.dtype(), [&](int64_t n0, int64_t count, int64_t rows, Tensor& patches) {
            im2col(ctx, w, x, n0, count, patches);
            gemm(ctx,
                 x.dtype(),
                 true,
                 false,
                 k,
                 o,
                 rows,
                 patches.raw_data(),
                 k,
                 at(dy, n0 * w.oh * w.ow * o),
                 o,
                 n0 > 0,
                 dw.mutable_raw_data(),
                 o);
        });
}

// ---- pooling ----

void max_pool_kernel(const KernelContext& ctx) {
    const Tensor& x = ctx.inputs[0];
    const cuda_launch::Window w = window_of(nn_detail::window_from(x.shape(), ctx.attrs));
    TAPEFLOW_CUDA_CHECK(
        cuda_launch::max_pool(elem_of(x.dtype()),
                              w,
                              x.raw_data(),
                              ctx.outputs[0].mutable_raw_data(),
                              static_cast<int64_t*>(ctx.outputs[1].mutable_raw_data()),
                              stream_of(ctx)));
}

void avg_pool_kernel(const KernelContext& ctx) {
    const Tensor& x = ctx.inputs[0];
    const cuda_launch::Window w = window_of(nn_detail::window_from(x.shape(), ctx.attrs));
    TAPEFLOW_CUDA_CHECK(cuda_launch::avg_pool(
        elem_of(x.dtype()), w, x.raw_data(), ctx.outputs[0].mutable_raw_data(), stream_of(ctx)));
}

void avg_pool_grad_kernel(const KernelContext& ctx) {
    const Tensor& g = ctx.inputs[0];
    Tensor& dx = ctx.outputs[0];
    const cuda_launch::Window w = window_of(nn_detail::window_from(dx.shape(), ctx.attrs));
    TAPEFLOW_CUDA_CHECK(cuda_launch::avg_pool_grad(
        elem_of(g.dtype()), w, g.raw_data(), dx.mutable_raw_data(), stream_of(ctx)));
}

}  // namespace

void register_nn_cuda(KernelRegistry& r) {
    using ew::dtypes_of;
    using ew::TypeSet;
    constexpr auto kCuda = DeviceType::cuda;
    const DTypeSet sig = dtypes_of(TypeSet::signed_numbers);
    const DTypeSet flt = dtypes_of(TypeSet::floats);
    r.add(Op::relu, kCuda, activation_kernel<Activation::relu>, sig);
    r.add(Op::relu_grad, kCuda, activation_grad_kernel<Activation::relu>, sig);
    r.add(Op::relu6, kCuda, activation_kernel<Activation::relu6>, sig);
    r.add(Op::relu6_grad, kCuda, activation_grad_kernel<Activation::relu6>, sig);
    r.add(Op::elu, kCuda, activation_kernel<Activation::elu>, flt);
    r.add(Op::elu_grad, kCuda, activation_grad_kernel<Activation::elu>, flt);
    r.add(Op::selu, kCuda, activation_kernel<Activation::selu>, flt);
    r.add(Op::selu_grad, kCuda, activation_grad_kernel<Activation::selu>, flt);
    r.add(Op::leaky_relu, kCuda, activation_kernel<Activation::leaky_relu>, flt);
    r.add(Op::leaky_relu_grad, kCuda, activation_grad_kernel<Activation::leaky_relu>, flt);
    r.add(Op::softmax, kCuda, softmax_kernel<false>, kRealTypes);
    r.add(Op::log_softmax, kCuda, softmax_kernel<true>, kRealTypes);
    r.add(Op::softmax_xent, kCuda, xent_kernel<Xent::dense>, kRealTypes);
    r.add(Op::sparse_softmax_xent, kCuda, xent_kernel<Xent::sparse>, kRealTypes);
    r.add(Op::sparse_xent_grad, kCuda, xent_kernel<Xent::sparse_grad>, kRealTypes);
    r.add(Op::bias_add, kCuda, bias_add_kernel, dtypes_of(TypeSet::numbers));
    r.add(Op::conv2d, kCuda, conv2d_kernel, kRealTypes);
    r.add(Op::conv2d_backprop_input, kCuda, conv2d_backprop_input_kernel, kRealTypes);
    r.add(Op::conv2d_backprop_filter, kCuda, conv2d_backprop_filter_kernel, kRealTypes);
    r.add(Op::max_pool, kCuda, max_pool_kernel, kRealTypes);
    r.add(Op::avg_pool, kCuda, avg_pool_kernel, kRealTypes);
    r.add(Op::avg_pool_grad, kCuda, avg_pool_grad_kernel, kRealTypes);
}

}  // namespace tapeflow::cuda_ops
