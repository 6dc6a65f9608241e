// Keras' convolution and pooling layers, channels last: Conv2D ([N, H, W, C], kernel
// [KH, KW, C, filters]), Conv1D ([N, W, C], kernel [K, C, filters]), MaxPooling2D,
// AveragePooling2D and GlobalAveragePooling2D. padding "valid" or "same" (any case; Conv1D also
// "causal"); an unknown padding raises InvalidArgumentError.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <tapeflow/core/export.hpp>
#include <tapeflow/keras/activations.hpp>
#include <tapeflow/keras/initializers.hpp>
#include <tapeflow/keras/layer.hpp>
#include <tapeflow/ops/nn.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow::keras::layers {

struct Conv2DOptions {
    Ints strides = 1;
    std::string padding = "valid";
    Ints dilation_rate = 1;
    std::string activation = "";
    bool use_bias = true;
    Initializer kernel_initializer = initializers::glorot_uniform();
    Initializer bias_initializer = initializers::zeros();
    std::string name = "";
    /// Keras' dtype=: a policy name ("mixed_float16", "float32", ...); "" = the global policy.
    std::string dtype = "";
};

/// activation(conv2d(x, kernel) + bias). kernel_size, strides and dilation_rate: one value or
/// (h, w).
class Conv2D : public Layer {
public:
    Conv2D(int64_t filters, Ints kernel_size, Conv2DOptions options = {});
    void build(const Shape& input_shape) override;
    Tensor call(const Tensor& x, bool training) override;
    Config get_config() const override;
    Variable kernel() const { return kernel_; }
    Variable bias() const { return bias_; }

private:
    int64_t filters_;
    std::vector<int64_t> kernel_size_;
    Conv2DOptions options_;
    std::string padding_;
    activations::Activation activation_;
    Variable kernel_, bias_;
};

/// The 1-D convolution over [N, W, C] (through conv2d on [N, 1, W, C]); "causal" pads
/// (kernel_size - 1) x dilation on the left. Uses the first value of strides and dilation_rate.
class Conv1D : public Layer {
public:
    Conv1D(int64_t filters, int64_t kernel_size, Conv2DOptions options = {});
    void build(const Shape& input_shape) override;
    Tensor call(const Tensor& x, bool training) override;
    Config get_config() const override;
    Variable kernel() const { return kernel_; }
    Variable bias() const { return bias_; }

private:
    int64_t filters_, kernel_size_, stride_, dilation_;
    Conv2DOptions options_;
    std::string padding_;
    activations::Activation activation_;
    Variable kernel_, bias_;
};

/// The 2-D pooling layers' shared part: window, strides (default: the window, as Keras), padding.
class Pooling2D : public Layer {
protected:
    Pooling2D(Ints pool_size,
              std::optional<Ints> strides,
              std::string padding,
              std::string name,
              std::string_view class_name);
    Ints pool_size_, strides_;
    std::string padding_;
};

/// Max over pool_size windows of [N, H, W, C].
class MaxPooling2D : public Pooling2D {
public:
    explicit MaxPooling2D(Ints pool_size = 2,
                          std::optional<Ints> strides = {},
                          std::string padding = "valid",
                          std::string name = "");
    Tensor call(const Tensor& x, bool training) override;
    Config get_config() const override;
};

/// Mean over pool_size windows ("same" divides by the cells inside the input, as Keras).
class AveragePooling2D : public Pooling2D {
public:
    explicit AveragePooling2D(Ints pool_size = 2,
                              std::optional<Ints> strides = {},
                              std::string padding = "valid",
                              std::string name = "");
    Tensor call(const Tensor& x, bool training) override;
    Config get_config() const override;
};

/// [N, H, W, C] -> [N, C], the mean over H and W.
class GlobalAveragePooling2D : public Layer {
public:
    explicit GlobalAveragePooling2D(std::string name = "");
    Tensor call(const Tensor& x, bool training) override;
    Config get_config() const override;
};

// ---- more convolutions and pooling (issue 31) ----

struct Conv2DTransposeOptions {
    Ints strides = 1;
    std::string padding = "valid";
    /// Extra rows / columns at the end of the output (each < its stride); nullopt = Keras' size
    /// (valid: in * stride + max(kernel - stride, 0); same: in * stride).
    std::optional<Ints> output_padding = std::nullopt;
    Ints dilation_rate = 1;
    std::string activation = "";
    bool use_bias = true;
    Initializer kernel_initializer = initializers::glorot_uniform();
    Initializer bias_initializer = initializers::zeros();
    std::string name = "";
    std::string dtype = "";
};

/// The transposed convolution (tf.nn.conv2d_transpose) of [N, H, W, C]; kernel
/// [KH, KW, filters, C] (Keras' layout), bias [filters]. With output_padding, each output size is
/// (in - 1) * stride + kernel - 2 * pad + output_padding (pad = kernel / 2 for "same", else 0).
class Conv2DTranspose : public Layer {
public:
    Conv2DTranspose(int64_t filters, Ints kernel_size, Conv2DTransposeOptions options = {});
    Config get_config() const override;
    void build(const Shape& input_shape) override;
    Tensor call(const Tensor& x, bool training) override;
    Variable kernel() const { return kernel_; }
    Variable bias() const { return bias_; }

private:
    int64_t filters_;
    std::vector<int64_t> kernel_size_, strides_, dilation_;
    std::optional<std::vector<int64_t>> output_padding_;
    Conv2DTransposeOptions options_;
    std::string padding_;
    activations::Activation activation_;
    Variable kernel_, bias_;
};

struct DepthwiseConv2DOptions {
    Ints strides = 1;
    std::string padding = "valid";
    int64_t depth_multiplier = 1;
    Ints dilation_rate = 1;
    std::string activation = "";
    bool use_bias = true;
    Initializer depthwise_initializer = initializers::glorot_uniform();
    Initializer bias_initializer = initializers::zeros();
    std::string name = "";
    std::string dtype = "";
};

/// Each input channel convolved with its own depth_multiplier filters (tf.nn.depthwise_conv2d):
/// kernel [KH, KW, C, depth_multiplier] (Keras 3 names it "kernel"), bias [C * depth_multiplier];
/// output channel c * depth_multiplier + m.
class DepthwiseConv2D : public Layer {
public:
    explicit DepthwiseConv2D(Ints kernel_size, DepthwiseConv2DOptions options = {});
    Config get_config() const override;
    void build(const Shape& input_shape) override;
    Tensor call(const Tensor& x, bool training) override;
    Variable kernel() const { return kernel_; }
    Variable bias() const { return bias_; }

private:
    std::vector<int64_t> kernel_size_;
    DepthwiseConv2DOptions options_;
    std::string padding_;
    activations::Activation activation_;
    Variable kernel_, bias_;
};

struct SeparableConv2DOptions {
    Ints strides = 1;
    std::string padding = "valid";
    Ints dilation_rate = 1;
    int64_t depth_multiplier = 1;
    std::string activation = "";
    bool use_bias = true;
    Initializer depthwise_initializer = initializers::glorot_uniform();
    Initializer pointwise_initializer = initializers::glorot_uniform();
    Initializer bias_initializer = initializers::zeros();
    std::string name = "";
    std::string dtype = "";
};

/// A depthwise convolution (depthwise_kernel [KH, KW, C, depth_multiplier], with the strides,
/// padding and dilation) then a 1x1 convolution (pointwise_kernel [1, 1, C * depth_multiplier,
/// filters]), plus bias [filters]: tf.nn.separable_conv2d.
class SeparableConv2D : public Layer {
public:
    SeparableConv2D(int64_t filters, Ints kernel_size, SeparableConv2DOptions options = {});
    Config get_config() const override;
    void build(const Shape& input_shape) override;
    Tensor call(const Tensor& x, bool training) override;
    Variable depthwise_kernel() const { return depthwise_kernel_; }
    Variable pointwise_kernel() const { return pointwise_kernel_; }
    Variable bias() const { return bias_; }

private:
    int64_t filters_;
    std::vector<int64_t> kernel_size_;
    SeparableConv2DOptions options_;
    std::string padding_;
    activations::Activation activation_;
    Variable depthwise_kernel_, pointwise_kernel_, bias_;
};

struct Pooling1DOptions {
    std::optional<int64_t> strides = std::nullopt;  // default: pool_size
    std::string padding = "valid";
    std::string data_format = "channels_last";  // [N, steps, C]; "channels_first": [N, C, steps]
    std::string name = "";
};

/// Max over pool_size windows of the steps axis.
class MaxPooling1D : public Layer {
public:
    explicit MaxPooling1D(int64_t pool_size = 2, Pooling1DOptions options = {});
    Config get_config() const override;
    Tensor call(const Tensor& x, bool training) override;

private:
    int64_t pool_size_, strides_;
    Pooling1DOptions options_;
    std::string padding_;
    bool channels_first_ = false;
};

/// Mean over pool_size windows of the steps axis ("same" divides by the cells inside the input).
class AveragePooling1D : public Layer {
public:
    explicit AveragePooling1D(int64_t pool_size = 2, Pooling1DOptions options = {});
    Config get_config() const override;
    Tensor call(const Tensor& x, bool training) override;

private:
    int64_t pool_size_, strides_;
    Pooling1DOptions options_;
    std::string padding_;
    bool channels_first_ = false;
};

struct GlobalPoolingOptions {
    std::string data_format = "channels_last";
    bool keepdims = false;
    std::string name = "";
};

/// [N, H, W, C] -> [N, C] (keepdims: [N, 1, 1, C]), the maximum over H and W.
class GlobalMaxPooling2D : public Layer {
public:
    explicit GlobalMaxPooling2D(GlobalPoolingOptions options = {});
    Config get_config() const override;
    Tensor call(const Tensor& x, bool training) override;

private:
    GlobalPoolingOptions options_;
    bool channels_first_ = false;
};

/// [N, steps, C] -> [N, C] (keepdims: [N, 1, C]), the mean over the steps.
class GlobalAveragePooling1D : public Layer {
public:
    explicit GlobalAveragePooling1D(GlobalPoolingOptions options = {});
    Config get_config() const override;
    Tensor call(const Tensor& x, bool training) override;

private:
    GlobalPoolingOptions options_;
    bool channels_first_ = false;
};

}  // namespace tapeflow::keras::layers

TAPEFLOW_API_END
