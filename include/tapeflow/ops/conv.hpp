// More tf::nn convolutions, with TensorFlow's layouts, padding rules and gradients: conv1d,
// conv2d_transpose and depthwise_conv2d (conv2d itself is in ops/nn.hpp). float32/float64 run
// natively, float16/bfloat16 through float32. Errors: InvalidArgumentError naming the op type
// ("[Op:Conv2D]", "[Op:Conv2DBackpropInput]", "[Op:DepthwiseConv2dNative]"), shapes, layouts.
#pragma once

#include <cstdint>
#include <string_view>

#include <tapeflow/core/export.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/ops/nn.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow::nn {

/// 1-D convolution: input [N, W, C] ("NWC") or [N, C, W] ("NCW"), filters [KW, C, O]; padding
/// "SAME" or "VALID" as conv2d's. tf.nn.conv1d: a conv2d over an inserted unit height axis, so the
/// gradients (of every order) are conv2d's.
Tensor conv1d(const Tensor& input,
              const Tensor& filters,
              int64_t stride,
              std::string_view padding,
              std::string_view data_format = "NWC",
              int64_t dilations = 1);

/// Transposed 2-D convolution (tf.nn.conv2d_transpose): the gradient of conv2d with respect to
/// its input, for a conv2d whose input has `output_shape` (4 dims in data_format's order) and
/// whose output has input's shape. filters [KH, KW, out, in] (out = output_shape's channels,
/// in = input's), padding "SAME" or "VALID" split as conv2d splits it. InvalidArgumentError when
/// that conv2d would not give input's spatial size. Gradients: w.r.t. input a conv2d, w.r.t.
/// filters a conv2d filter gradient (TensorFlow's nn_grad.py).
Tensor conv2d_transpose(const Tensor& input,
                        const Tensor& filters,
                        const Shape& output_shape,
                        const Ints& strides,
                        std::string_view padding = "SAME",
                        std::string_view data_format = "NHWC",
                        const Ints& dilations = 1);

/// Depthwise 2-D convolution (DepthwiseConv2dNative): filter [KH, KW, C, M] convolves each input
/// channel c with its own M filters; output channel c * M + m (the multiplier fastest), so the
/// output has C * M channels. strides, padding, data_format and dilations as conv2d's.
Tensor depthwise_conv2d(const Tensor& input,
                        const Tensor& filter,
                        const Ints& strides,
                        std::string_view padding,
                        std::string_view data_format = "NHWC",
                        const Ints& dilations = 1);

}  // namespace tapeflow::nn

TAPEFLOW_API_END
