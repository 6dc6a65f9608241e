// tf::nn::conv2d and its gradient ops Conv2DBackpropInput and Conv2DBackpropFilter, as
// TensorFlow's nn_grad.py wires them: each of the three is the gradient of the other two, so
// every order of derivative stays inside these kernels. The kernels compute in NHWC with the
// padding already resolved (attrs ksize/strides/dilations/pads); NCHW is transposed around them.
// CPU kernels: lib/kernels/cpu/conv_cpu.cpp.
#include <tapeflow/ops/array.hpp>
#include <tapeflow/ops/creation.hpp>
#include <tapeflow/ops/nn.hpp>

#include "ops/nn_common.hpp"
#include "ops/op_families.hpp"

namespace tapeflow {
namespace {

using nn_detail::Window2d;

DType dtype_of(const Tensor& t) {
    return t.dtype();
}

Tensor conv2d_op(const Tensor& x, const Tensor& w, const Attrs& attrs) {
    const Window2d win = nn_detail::window_from(x.shape(), attrs);
    return apply(Op::conv2d, {x, w}, OutputSpec{Shape{win.n, win.oh, win.ow, w.shape()[3]}, dtype_of(x)},
                 attrs);
}

Tensor backprop_input(const Shape& x_shape, const Tensor& w, const Tensor& dy, const Attrs& attrs) {
    return apply(Op::conv2d_backprop_input, {w, dy}, OutputSpec{x_shape, dtype_of(dy)}, attrs);
}

Tensor backprop_filter(const Tensor& x, const Shape& w_shape, const Tensor& dy, const Attrs& attrs) {
    return apply(Op::conv2d_backprop_filter, {x, dy}, OutputSpec{w_shape, dtype_of(dy)}, attrs);
}

const OpDef kConvOps[] = {
    {Op::conv2d,
     Save::inputs,  // y = x * w: (backprop_input(w, g), backprop_filter(x, g))
     [](const GradCtx& c) -> Grads {
         Grads g(2);  // an input nobody needs (the first layer's images) costs nothing
         if (c.needs_grad(0)) g[0] = backprop_input(c.in[0].shape(), c.in[1], c.grad(), c.attrs);
         if (c.needs_grad(1)) g[1] = backprop_filter(c.in[0], c.in[1].shape(), c.grad(), c.attrs);
         return g;
     }},
    {Op::conv2d_backprop_input,
     Save::inputs,  // dx(w, dy) is bilinear: (backprop_filter(gg, dy), conv2d(gg, w))
     [](const GradCtx& c) -> Grads {
         return {backprop_filter(c.grad(), c.in[0].shape(), c.in[1], c.attrs),
                 conv2d_op(c.grad(), c.in[0], c.attrs)};
     }},
    {Op::conv2d_backprop_filter,
     Save::inputs,  // dw(x, dy) is bilinear: (backprop_input(gg, dy), conv2d(x, gg))
     [](const GradCtx& c) -> Grads {
         return {backprop_input(c.in[0].shape(), c.grad(), c.in[1], c.attrs),
                 conv2d_op(c.in[0], c.grad(), c.attrs)};
     }},
};

// The checks and geometry of both public overloads; `explicit_pads` is null for SAME/VALID.
Tensor conv2d_impl(const Tensor& input, const Tensor& filters, const Ints& strides,
                   std::string_view padding, const Paddings* explicit_pads,
                   std::string_view data_format, const Ints& dilations) {
    constexpr Op op = Op::conv2d;
    nn_detail::check_float(op, input, "input");
    nn_detail::check_float(op, filters, "filters");
    nn_detail::check_same_dtype(op, input, filters, "input", "filters");
    const bool nchw = nn_detail::is_nchw(op, data_format);
    const Shape& is = input.shape();
    const Shape& fs = filters.shape();
    if (is.rank() != 4) op_fail(op, "input must be 4-dimensional, got {}", is.debug_string());
    if (fs.rank() != 4) op_fail(op, "filter must be 4-dimensional: {}", fs.debug_string());
    Window2d win;
    win.n = is[0];
    win.h = nchw ? is[2] : is[1];
    win.w = nchw ? is[3] : is[2];
    win.c = nchw ? is[1] : is[3];
    if (win.c != fs[2]) {
        op_fail(op,
                "input depth must equal filter depth (grouped convolution is not supported): {} "
                "vs {} (input {} {}, filter {} HWIO)",
                win.c,
                fs[2],
                is.debug_string(),
                data_format,
                fs.debug_string());
    }
    win.kh = fs[0];
    win.kw = fs[1];
    const auto s = nn_detail::spatial_pair(op, strides, "strides", nchw);
    const auto d = nn_detail::spatial_pair(op, dilations, "dilations", nchw);
    win.sh = s[0];
    win.sw = s[1];
    win.dh = d[0];
    win.dw = d[1];
    if (explicit_pads != nullptr) {
        nn_detail::set_explicit_padding(op, win, *explicit_pads, nchw);
    } else {
        nn_detail::set_padding(op, win, padding);
    }
    const Attrs attrs = nn_detail::window_attrs(win);
    if (input.dtype() == DType::float16 || input.dtype() == DType::bfloat16) {
        // The 16-bit floats compute in float32, through casts (which carry the gradient).
        return cast(conv2d_impl(cast(input, DType::float32), cast(filters, DType::float32),
                                strides, padding, explicit_pads, data_format, dilations),
                    input.dtype());
    }
    if (!nchw) return conv2d_op(input, filters, attrs);
    return nn_detail::to_nchw(conv2d_op(nn_detail::to_nhwc(input), filters, attrs));
}

}  // namespace

std::span<const OpDef> conv_op_defs() {
    return kConvOps;
}

namespace nn {

Tensor conv2d(const Tensor& input, const Tensor& filters, const Ints& strides,
              std::string_view padding, std::string_view data_format, const Ints& dilations) {
    return conv2d_impl(input, filters, strides, padding, nullptr, data_format, dilations);
}

Tensor conv2d(const Tensor& input, const Tensor& filters, const Ints& strides,
              const Paddings& padding, std::string_view data_format, const Ints& dilations) {
    return conv2d_impl(input, filters, strides, "EXPLICIT", &padding, data_format, dilations);
}

}  // namespace nn
}  // namespace tapeflow
