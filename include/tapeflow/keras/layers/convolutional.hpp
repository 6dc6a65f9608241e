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

}  // namespace tapeflow::keras::layers

TAPEFLOW_API_END
