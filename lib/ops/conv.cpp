// The tf::nn convolutions. Two primitive families, each of three ops that are each other's
// gradients as TensorFlow's nn_grad.py wires them (so every order of derivative stays inside the
// kernels): Conv2D with Conv2DBackpropInput/Filter, and DepthwiseConv2dNative with its two
// backprops. conv1d is conv2d over an inserted unit axis (as tf.nn.conv1d), conv2d_transpose
// is Conv2DBackpropInput (tf.nn.conv2d_transpose). The kernels compute in NHWC with the padding
// resolved (attrs ksize/strides/dilations/pads); NCHW is transposed around them.
// CPU kernels: lib/kernels/cpu/conv_cpu.cpp, depthwise_cpu.cpp.
#include <tapeflow/ops/array.hpp>
#include <tapeflow/ops/conv.hpp>
#include <tapeflow/ops/creation.hpp>
#include <tapeflow/ops/nn.hpp>

#include "ops/nn_common.hpp"
#include "ops/op_families.hpp"

namespace tapeflow {
namespace {

using nn_detail::Window2d;

// The three ops of one family: y(x, w), dx(w, dy) and dw(x, dy).
struct Family {
    Op forward, backprop_input, backprop_filter;
    bool depthwise;
};
constexpr Family kConv2d{Op::conv2d, Op::conv2d_backprop_input, Op::conv2d_backprop_filter, false};
constexpr Family kDepthwise{Op::depthwise_conv2d,
                            Op::depthwise_conv2d_backprop_input,
                            Op::depthwise_conv2d_backprop_filter,
                            true};

template <Family F>
Tensor forward(const Tensor& x, const Tensor& w, const Attrs& attrs) {
    const Window2d win = nn_detail::window_from(x.shape(), attrs);
    const int64_t channels = F.depthwise ? w.shape()[2] * w.shape()[3] : w.shape()[3];
    return apply(
        F.forward, {x, w}, OutputSpec{Shape{win.n, win.oh, win.ow, channels}, x.dtype()}, attrs);
}

template <Family F>
Tensor backprop_input(const Shape& x_shape, const Tensor& w, const Tensor& dy, const Attrs& attrs) {
    return apply(F.backprop_input, {w, dy}, OutputSpec{x_shape, dy.dtype()}, attrs);
}

template <Family F>
Tensor backprop_filter(const Tensor& x,
                       const Shape& w_shape,
                       const Tensor& dy,
                       const Attrs& attrs) {
    return apply(F.backprop_filter, {x, dy}, OutputSpec{w_shape, dy.dtype()}, attrs);
}

// y = x * w: (backprop_input(w, g), backprop_filter(x, g))
template <Family F>
Grads forward_grad(const GradCtx& c) {
    Grads g(2);  // an input nobody needs (the first layer's images) costs nothing
    if (c.needs_grad(0)) g[0] = backprop_input<F>(c.in[0].shape(), c.in[1], c.grad(), c.attrs);
    if (c.needs_grad(1)) g[1] = backprop_filter<F>(c.in[0], c.in[1].shape(), c.grad(), c.attrs);
    return g;
}

// dx(w, dy) is bilinear: (backprop_filter(gg, dy), y(gg, w))
template <Family F>
Grads backprop_input_grad(const GradCtx& c) {
    return {backprop_filter<F>(c.grad(), c.in[0].shape(), c.in[1], c.attrs),
            forward<F>(c.grad(), c.in[0], c.attrs)};
}

// dw(x, dy) is bilinear: (backprop_input(gg, dy), y(x, gg))
template <Family F>
Grads backprop_filter_grad(const GradCtx& c) {
    return {backprop_input<F>(c.in[0].shape(), c.grad(), c.in[1], c.attrs),
            forward<F>(c.in[0], c.grad(), c.attrs)};
}

const OpDef kConvOps[] = {
    {Op::conv2d, Save::inputs, forward_grad<kConv2d>, kNotBatchable, jvp_bilinear},
    {Op::conv2d_backprop_input,
     Save::inputs,
     backprop_input_grad<kConv2d>,
     kNotBatchable,
     jvp_bilinear},
    {Op::conv2d_backprop_filter,
     Save::inputs,
     backprop_filter_grad<kConv2d>,
     kNotBatchable,
     jvp_bilinear},
    {Op::depthwise_conv2d, Save::inputs, forward_grad<kDepthwise>, kNotBatchable, jvp_bilinear},
    {Op::depthwise_conv2d_backprop_input,
     Save::inputs,
     backprop_input_grad<kDepthwise>,
     kNotBatchable,
     jvp_bilinear},
    {Op::depthwise_conv2d_backprop_filter,
     Save::inputs,
     backprop_filter_grad<kDepthwise>,
     kNotBatchable,
     jvp_bilinear},
};

bool is_16bit(DType d) {
    return d == DType::float16 || d == DType::bfloat16;
}

// Strides, dilations and padding of a 2-D window whose input sizes are already in `win`.
void set_geometry(Op op,
                  Window2d& win,
                  const Ints& strides,
                  std::string_view padding,
                  const Paddings* explicit_pads,
                  bool nchw,
                  const Ints& dilations) {
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
}

// The input sizes of a 4-D shape in `data_format`.
Window2d window_of_input(const Shape& is, bool nchw) {
    Window2d win;
    win.n = is[0];
    win.h = nchw ? is[2] : is[1];
    win.w = nchw ? is[3] : is[2];
    win.c = nchw ? is[1] : is[3];
    return win;
}

void check_conv_dtypes(Op op, const Tensor& input, const Tensor& filters) {
    nn_detail::check_float(op, input, "input");
    nn_detail::check_float(op, filters, "filters");
    nn_detail::check_same_dtype(op, input, filters, "input", "filters");
}

// The dtypes and ranks of a 2-D convolution; `layout` names the filter's dimensions.
void check_conv_inputs(Op op, const Tensor& input, const Tensor& filters, std::string_view layout) {
    check_conv_dtypes(op, input, filters);
    const Shape& is = input.shape();
    const Shape& fs = filters.shape();
    if (is.rank() != 4) op_fail(op, "input must be 4-dimensional, got {}", is.debug_string());
    if (fs.rank() != 4)
        op_fail(op, "filter must be 4-dimensional ({}): {}", layout, fs.debug_string());
}

// The checks and geometry of conv2d (both overloads) and depthwise_conv2d; `explicit_pads` is
// null for SAME/VALID.
template <Family F>
Tensor conv_impl(const Tensor& input,
                 const Tensor& filters,
                 const Ints& strides,
                 std::string_view padding,
                 const Paddings* explicit_pads,
                 std::string_view data_format,
                 const Ints& dilations) {
    constexpr Op op = F.forward;
    check_conv_inputs(op, input, filters, F.depthwise ? "[H, W, in, multiplier]" : "HWIO");
    const bool nchw = nn_detail::is_nchw(op, data_format);
    const Shape& is = input.shape();
    const Shape& fs = filters.shape();
    Window2d win = window_of_input(is, nchw);
    if (win.c != fs[2]) {
        op_fail(op,
                "input depth must equal filter depth{}: {} vs {} (input {} {}, filter {} {})",
                F.depthwise ? "" : " (grouped convolution is not supported)",
                win.c,
                fs[2],
                is.debug_string(),
                data_format,
                fs.debug_string(),
                F.depthwise ? "[H, W, in, multiplier]" : "HWIO");
    }
    win.kh = fs[0];
    win.kw = fs[1];
    set_geometry(op, win, strides, padding, explicit_pads, nchw, dilations);
    const Attrs attrs = nn_detail::window_attrs(win);
    if (is_16bit(input.dtype())) {
        // The 16-bit floats compute in float32, through casts (which carry the gradient).
        return cast(conv_impl<F>(cast(input, DType::float32),
                                 cast(filters, DType::float32),
                                 strides,
                                 padding,
                                 explicit_pads,
                                 data_format,
                                 dilations),
                    input.dtype());
    }
    if (!nchw) return forward<F>(input, filters, attrs);
    return nn_detail::to_nchw(forward<F>(nn_detail::to_nhwc(input), filters, attrs));
}

}  // namespace

std::span<const OpDef> conv_op_defs() {
    return kConvOps;
}

namespace nn {

Tensor conv2d(const Tensor& input,
              const Tensor& filters,
              const Ints& strides,
              std::string_view padding,
              std::string_view data_format,
              const Ints& dilations) {
    return conv_impl<kConv2d>(input, filters, strides, padding, nullptr, data_format, dilations);
}

Tensor conv2d(const Tensor& input,
              const Tensor& filters,
              const Ints& strides,
              const Paddings& padding,
              std::string_view data_format,
              const Ints& dilations) {
    return conv_impl<kConv2d>(
        input, filters, strides, "EXPLICIT", &padding, data_format, dilations);
}

// tf.nn.conv1d: conv2d over a unit height axis inserted before the width.
Tensor conv1d(const Tensor& input,
              const Tensor& filters,
              int64_t stride,
              std::string_view padding,
              std::string_view data_format,
              int64_t dilations) {
    constexpr Op op = Op::conv2d;
    check_conv_dtypes(op, input, filters);
    const bool ncw = data_format == "NCW";
    if (!ncw && data_format != "NWC") {
        op_fail(op, "conv1d: invalid data format '{}'; expected \"NWC\" or \"NCW\"", data_format);
    }
    const Shape& is = input.shape();
    const Shape& fs = filters.shape();
    if (is.rank() != 3) {
        op_fail(op,
                "conv1d: input must be 3-dimensional ({}), got {}",
                ncw ? "[N, C, W]" : "[N, W, C]",
                is.debug_string());
    }
    if (fs.rank() != 3) {
        op_fail(
            op, "conv1d: filters must be 3-dimensional [W, in, out], got {}", fs.debug_string());
    }
    const int64_t channels = ncw ? is[1] : is[2];
    if (channels != fs[1]) {
        op_fail(op,
                "conv1d: input depth must equal filter depth: {} vs {} (input {} {}, filters {} "
                "[W, in, out])",
                channels,
                fs[1],
                is.debug_string(),
                data_format,
                fs.debug_string());
    }
    const int64_t unit = ncw ? 2 : 1;
    const Tensor y = nn::conv2d(expand_dims(input, unit),
                                expand_dims(filters, 0),
                                {1, stride},
                                padding,
                                ncw ? "NCHW" : "NHWC",
                                {1, dilations});
    return squeeze(y, unit);
}

// tf.nn.conv2d_transpose: the input gradient of the conv2d that maps output_shape to input's
// shape, with that conv2d's padding (SAME split as conv2d splits it).
Tensor conv2d_transpose(const Tensor& input,
                        const Tensor& filters,
                        const Shape& output_shape,
                        const Ints& strides,
                        std::string_view padding,
                        std::string_view data_format,
                        const Ints& dilations) {
    constexpr Op op = Op::conv2d_backprop_input;
    check_conv_inputs(op, input, filters, "[H, W, out, in]");
    const bool nchw = nn_detail::is_nchw(op, data_format);
    const Shape& is = input.shape();
    const Shape& fs = filters.shape();
    if (output_shape.rank() != 4) {
        op_fail(op,
                "output_shape must have 4 dimensions ({}), got {}",
                data_format,
                output_shape.debug_string());
    }
    Window2d win = window_of_input(output_shape, nchw);
    const Window2d in = window_of_input(is, nchw);
    if (win.c != fs[2]) {
        op_fail(op,
                "the channels of output_shape {} must equal the filters' out dimension: {} vs {} "
                "(filters {} are [H, W, out, in])",
                output_shape.debug_string(),
                win.c,
                fs[2],
                fs.debug_string());
    }
    if (in.c != fs[3]) {
        op_fail(op,
                "input depth must equal the filters' in dimension: {} vs {} (input {} {}, "
                "filters {} are [H, W, out, in])",
                in.c,
                fs[3],
                is.debug_string(),
                data_format,
                fs.debug_string());
    }
    if (win.n != in.n) {
        op_fail(op,
                "output_shape {} has batch {} but the input {} has batch {}",
                output_shape.debug_string(),
                win.n,
                is.debug_string(),
                in.n);
    }
    win.kh = fs[0];
    win.kw = fs[1];
    set_geometry(op, win, strides, padding, nullptr, nchw, dilations);
    if (win.oh != in.h || win.ow != in.w) {
        op_fail(op,
                "a conv2d of output_shape {} with filters {} and padding \"{}\" gives [{}, {}] "
                "spatially, but the input {} has [{}, {}]; pick an output_shape whose "
                "convolution has the input's size",
                output_shape.debug_string(),
                fs.debug_string(),
                padding,
                win.oh,
                win.ow,
                is.debug_string(),
                in.h,
                in.w);
    }
    if (is_16bit(input.dtype())) {
        return cast(conv2d_transpose(cast(input, DType::float32),
                                     cast(filters, DType::float32),
                                     output_shape,
                                     strides,
                                     padding,
                                     data_format,
                                     dilations),
                    input.dtype());
    }
    const Attrs attrs = nn_detail::window_attrs(win);
    const Shape nhwc{win.n, win.h, win.w, win.c};
    if (!nchw) return backprop_input<kConv2d>(nhwc, filters, input, attrs);
    return nn_detail::to_nchw(
        backprop_input<kConv2d>(nhwc, filters, nn_detail::to_nhwc(input), attrs));
}

Tensor depthwise_conv2d(const Tensor& input,
                        const Tensor& filter,
                        const Ints& strides,
                        std::string_view padding,
                        std::string_view data_format,
                        const Ints& dilations) {
    return conv_impl<kDepthwise>(input, filter, strides, padding, nullptr, data_format, dilations);
}

}  // namespace nn
}  // namespace tapeflow
