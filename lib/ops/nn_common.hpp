// Helpers shared by the nn family files (nn_activations.cpp, nn_losses.cpp, nn_layers.cpp,
// conv.cpp, pooling.cpp): argument checks with TensorFlow's wording, and the window geometry of
// conv2d and the 2-D pools (TensorFlow's SAME/VALID/explicit padding rules).
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include <tapeflow/core/tensor.hpp>
#include <tapeflow/ops/nn.hpp>

#include "ops/apply.hpp"

namespace tapeflow::nn_detail {

/// InvalidArgumentError unless `x` is defined.
void check_defined(Op op, const Tensor& x, std::string_view what);
/// InvalidArgumentError unless `x` has a floating dtype (TensorFlow's "Value for attr 'T'" error).
void check_float(Op op, const Tensor& x, std::string_view what);
/// InvalidArgumentError unless b has a's dtype.
void check_same_dtype(
    Op op, const Tensor& a, const Tensor& b, std::string_view a_name, std::string_view b_name);

/// Where the spatial and channel dimensions are: "NHWC" or "NCHW" (InvalidArgumentError else).
bool is_nchw(Op op, std::string_view data_format);

/// The geometry of one 2-D window op in NHWC: sizes, strides, dilations and the padding actually
/// applied before/after each spatial dimension (TensorFlow's SAME puts the odd cell after).
struct Window2d {
    int64_t n = 0, h = 0, w = 0, c = 0;  // input
    int64_t kh = 1, kw = 1;              // window (filter) size
    int64_t sh = 1, sw = 1;              // strides
    int64_t dh = 1, dw = 1;              // dilations
    int64_t pad_top = 0, pad_bottom = 0, pad_left = 0, pad_right = 0;
    int64_t oh = 0, ow = 0;  // output
};

/// The two spatial values of a strides/ksize/dilations argument (1, 2 or 4 values; with 4, the
/// batch and channel entries must be 1). `name` is TensorFlow's argument name for messages.
std::array<int64_t, 2> spatial_pair(Op op, const Ints& v, std::string_view name, bool nchw);

/// Output size and padding for "SAME"/"VALID" (InvalidArgumentError for any other string).
void set_padding(Op op, Window2d& win, std::string_view padding);
/// Output size for explicit (before, after) pads of the two spatial dimensions.
void set_explicit_padding(Op op, Window2d& win, const Paddings& pads, bool nchw);

/// Attrs of a window op (read back by its kernels and gradient rows).
Attrs window_attrs(const Window2d& win);
/// The Window2d an op was called with: input shape `in` (NHWC) and its attrs.
TAPEFLOW_PLUGIN_API Window2d window_from(const Shape& in, const Attrs& attrs);

/// NCHW <-> NHWC for the ops that compute in NHWC.
Tensor to_nhwc(const Tensor& x);
Tensor to_nchw(const Tensor& x);

/// TensorFlow's SparseSoftmaxXentWithLogitsOp label check (InvalidArgumentError naming the first
/// label outside [0, num_classes)), for CPU labels: the CPU kernels rely on it.
void check_label_range(const Tensor& labels, int64_t num_classes);

}  // namespace tapeflow::nn_detail
