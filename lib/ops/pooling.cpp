// tf::nn::max_pool2d and avg_pool2d. MaxPool also returns, as a second (internal) output, the flat
// index of each window's maximum (the first one on ties), so its gradient is a scatter-add of g
// to those indices (unsorted_segment_sum, whose own gradient is a gather: differentiable again).
// AvgPool's gradient is the AvgPoolGrad op, whose gradient is AvgPool (both linear).
// CPU kernels: lib/kernels/cpu/pool_cpu.cpp.
#include <tapeflow/ops/array.hpp>
#include <tapeflow/ops/creation.hpp>
#include <tapeflow/ops/nn.hpp>

#include "ops/nn_common.hpp"
#include "ops/op_families.hpp"

namespace tapeflow {
namespace {

using nn_detail::Window2d;

Tensor avg_pool_op(const Tensor& x, const Attrs& attrs) {
    const Window2d win = nn_detail::window_from(x.shape(), attrs);
    return apply(
        Op::avg_pool, {x}, OutputSpec{Shape{win.n, win.oh, win.ow, win.c}, x.dtype()}, attrs);
}

Tensor avg_pool_grad(const Tensor& g, const Shape& x_shape, const Attrs& attrs) {
    return apply(Op::avg_pool_grad, {g}, OutputSpec{x_shape, g.dtype()}, attrs);
}

const OpDef kPoolOps[] = {
    {Op::max_pool,
     Save::output,  // g goes to each window's (first) maximum
     [](const GradCtx& c) -> Grads {
         const Shape& xs = c.in_meta[0].shape;
         const Tensor flat = unsorted_segment_sum(
             reshape(c.grad(), {-1}), reshape(c.out[1], {-1}), xs.num_elements());
         return {reshape(flat, xs)};
     },
     kNotBatchable,
     jvp_by_double_vjp},
    {Op::avg_pool,
     Save::nothing,  // g / count spread over each window's non-padding cells
     [](const GradCtx& c) -> Grads {
         return {avg_pool_grad(c.grad(), c.in_meta[0].shape, c.attrs)};
     },
     kNotBatchable,
     jvp_linear},
    {Op::avg_pool_grad,
     Save::nothing,  // linear: its gradient is AvgPool
     [](const GradCtx& c) -> Grads { return {avg_pool_op(c.grad(), c.attrs)}; },
     kNotBatchable,
     jvp_linear},
};

Tensor pool(Op op,
            const Tensor& input,
            const Ints& ksize,
            const Ints& strides,
            std::string_view padding,
            std::string_view data_format) {
    nn_detail::check_float(op, input, "input");
    const bool nchw = nn_detail::is_nchw(op, data_format);
    const Shape& is = input.shape();
    if (is.rank() != 4) op_fail(op, "input must be 4-dimensional, got {}", is.debug_string());
    Window2d win;
    win.n = is[0];
    win.h = nchw ? is[2] : is[1];
    win.w = nchw ? is[3] : is[2];
    win.c = nchw ? is[1] : is[3];
    const auto k = nn_detail::spatial_pair(op, ksize, "ksize", nchw);
    const auto s = nn_detail::spatial_pair(op, strides, "strides", nchw);
    win.kh = k[0];
    win.kw = k[1];
    win.sh = s[0];
    win.sw = s[1];
    nn_detail::set_padding(op, win, padding);
    const Attrs attrs = nn_detail::window_attrs(win);
    const Tensor x = nchw ? nn_detail::to_nhwc(input) : input;
    Tensor y;
    if (op == Op::avg_pool) {
        y = avg_pool_op(x, attrs);
    } else {
        const Shape out{win.n, win.oh, win.ow, win.c};
        const OutputSpec specs[] = {OutputSpec{out, x.dtype()}, OutputSpec{out, DType::int64}};
        const Tensor inputs[] = {x};
        y = apply_multi(op, inputs, specs, attrs)[0];
    }
    return nchw ? nn_detail::to_nchw(y) : y;
}

}  // namespace

std::span<const OpDef> pool_op_defs() {
    return kPoolOps;
}

namespace nn {

Tensor max_pool2d(const Tensor& input,
                  const Ints& ksize,
                  const Ints& strides,
                  std::string_view padding,
                  std::string_view data_format) {
    return pool(Op::max_pool, input, ksize, strides, padding, data_format);
}

Tensor avg_pool2d(const Tensor& input,
                  const Ints& ksize,
                  const Ints& strides,
                  std::string_view padding,
                  std::string_view data_format) {
    return pool(Op::avg_pool, input, ksize, strides, padding, data_format);
}

}  // namespace nn
}  // namespace tapeflow
