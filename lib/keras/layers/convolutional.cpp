// Conv2D, Conv1D and the 2-D pooling layers on tf::nn's conv2d / max_pool2d / avg_pool2d (NHWC).
#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include <tapeflow/core/error.hpp>
#include <tapeflow/keras/layers/convolutional.hpp>
#include <tapeflow/keras/layers/reshaping.hpp>
#include <tapeflow/ops/array.hpp>
#include <tapeflow/ops/conv.hpp>
#include <tapeflow/ops/math.hpp>

namespace tapeflow::keras::layers {

namespace {

// Keras' padding names to TensorFlow's; "causal" only where the layer allows it.
std::string padding_of(std::string padding, const std::string& layer, bool causal_ok) {
    std::transform(padding.begin(), padding.end(), padding.begin(), [](unsigned char c) {
        return static_cast<char>(std::tolower(c));
    });
    if (padding == "valid") return "VALID";
    if (padding == "same") return "SAME";
    if (padding == "causal" && causal_ok) return "causal";
    throw errors::InvalidArgumentError(
        fmt::format("layer \"{}\": unknown padding \"{}\"; use \"valid\" or \"same\"{}",
                    layer,
                    padding,
                    causal_ok ? " or \"causal\"" : ""));
}

// One value or two (h, w), each positive.
std::vector<int64_t> pair_of(const Ints& v, const char* what, const std::string& layer) {
    const auto& values = v.values();
    if ((values.size() != 1 && values.size() != 2) ||
        std::any_of(values.begin(), values.end(), [](int64_t x) { return x <= 0; }))
        throw errors::InvalidArgumentError(
            fmt::format("layer \"{}\": {} must be one or two positive integers, got {} values",
                        layer,
                        what,
                        values.size()));
    return values.size() == 1 ? std::vector<int64_t>{values[0], values[0]} : values;
}

void require_rank(const Shape& shape,
                  int64_t rank,
                  const std::string& layer,
                  const char* cls,
                  const char* layout) {
    if (shape.rank() != rank)
        throw errors::InvalidArgumentError(
            fmt::format("layer \"{}\" ({}) expects inputs of rank {} {}, got shape {}",
                        layer,
                        cls,
                        rank,
                        layout,
                        shape.debug_string()));
}

}  // namespace

// ---- Conv2D ----

Conv2D::Conv2D(int64_t filters, Ints kernel_size, Conv2DOptions options)
    : Layer(options.name, "Conv2D"), filters_(filters), options_(std::move(options)) {
    use_dtype_option(options_.dtype);
    if (filters <= 0)
        throw errors::InvalidArgumentError(
            fmt::format("Conv2D: filters must be positive, got {}", filters));
    kernel_size_ = pair_of(kernel_size, "kernel_size", name());
    pair_of(options_.strides, "strides", name());
    pair_of(options_.dilation_rate, "dilation_rate", name());
    padding_ = padding_of(options_.padding, name(), false);
    activation_ = activations::get(options_.activation, name());
}

void Conv2D::build(const Shape& s) {
    require_rank(s, 4, name(), "Conv2D", "[batch, height, width, channels]");
    kernel_ = add_weight("kernel",
                         {kernel_size_[0], kernel_size_[1], s[3], filters_},
                         options_.kernel_initializer,
                         variable_dtype());
    if (options_.use_bias)
        bias_ = add_weight("bias", {filters_}, options_.bias_initializer, variable_dtype());
    set_input_spec({.ndim = 4, .axes = {{-1, s[3]}}});
}

Tensor Conv2D::call(const Tensor& x, bool) {
    Tensor y = nn::conv2d(x, kernel_, options_.strides, padding_, "NHWC", options_.dilation_rate);
    if (bias_.defined()) y = nn::bias_add(y, bias_);
    return activation_(y);
}

// ---- Conv1D ----

Conv1D::Conv1D(int64_t filters, int64_t kernel_size, Conv2DOptions options)
    : Layer(options.name, "Conv1D"),
      filters_(filters),
      kernel_size_(kernel_size),
      options_(std::move(options)) {
    use_dtype_option(options_.dtype);
    if (filters <= 0 || kernel_size <= 0)
        throw errors::InvalidArgumentError(
            fmt::format("Conv1D: filters and kernel_size must be positive, got {} and {}",
                        filters,
                        kernel_size));
    stride_ = pair_of(options_.strides, "strides", name())[0];
    dilation_ = pair_of(options_.dilation_rate, "dilation_rate", name())[0];
    padding_ = padding_of(options_.padding, name(), true);
    activation_ = activations::get(options_.activation, name());
}

void Conv1D::build(const Shape& s) {
    require_rank(s, 3, name(), "Conv1D", "[batch, steps, channels]");
    kernel_ = add_weight(
        "kernel", {kernel_size_, s[2], filters_}, options_.kernel_initializer, variable_dtype());
    if (options_.use_bias)
        bias_ = add_weight("bias", {filters_}, options_.bias_initializer, variable_dtype());
    set_input_spec({.ndim = 3, .axes = {{-1, s[2]}}});
}

Tensor Conv1D::call(const Tensor& x, bool) {
    Tensor in = x;
    std::string padding = padding_;
    if (padding_ == "causal") {
        in = pad(x, {{0, 0}, {(kernel_size_ - 1) * dilation_, 0}, {0, 0}});
        padding = "VALID";
    }
    const Shape& k = kernel_.shape();
    Tensor y = nn::conv2d(expand_dims(in, 1),
                          reshape(kernel_, Shape{1, k[0], k[1], k[2]}),
                          Ints{1, stride_},
                          padding,
                          "NHWC",
                          Ints{1, dilation_});
    y = squeeze(y, Axes(int64_t{1}));
    if (bias_.defined()) y = nn::bias_add(y, bias_);
    return activation_(y);
}

// ---- pooling ----

Pooling2D::Pooling2D(Ints pool_size,
                     std::optional<Ints> strides,
                     std::string padding,
                     std::string name,
                     std::string_view class_name)
    : Layer(std::move(name), class_name),
      pool_size_(pool_size),
      strides_(strides.value_or(pool_size)) {
    pair_of(pool_size_, "pool_size", this->name());
    pair_of(strides_, "strides", this->name());
    padding_ = padding_of(std::move(padding), this->name(), false);
    set_input_spec({.ndim = 4});
}

MaxPooling2D::MaxPooling2D(Ints pool_size,
                           std::optional<Ints> strides,
                           std::string padding,
                           std::string name)
    : Pooling2D(std::move(pool_size),
                std::move(strides),
                std::move(padding),
                std::move(name),
                "MaxPooling2D") {}

Tensor MaxPooling2D::call(const Tensor& x, bool) {
    return nn::max_pool2d(x, pool_size_, strides_, padding_);
}

AveragePooling2D::AveragePooling2D(Ints pool_size,
                                   std::optional<Ints> strides,
                                   std::string padding,
                                   std::string name)
    : Pooling2D(std::move(pool_size),
                std::move(strides),
                std::move(padding),
                std::move(name),
                "AveragePooling2D") {}

Tensor AveragePooling2D::call(const Tensor& x, bool) {
    return nn::avg_pool2d(x, pool_size_, strides_, padding_);
}

GlobalAveragePooling2D::GlobalAveragePooling2D(std::string name)
    : Layer(std::move(name), "GlobalAveragePooling2D") {
    set_input_spec({.ndim = 4});
}

Tensor GlobalAveragePooling2D::call(const Tensor& x, bool) {
    return reduce_mean(x, {1, 2});
}

// ---- Conv2DTranspose ----

namespace {

// Keras' deconv_output_length.
int64_t transpose_length(int64_t in,
                         int64_t kernel,
                         const std::string& padding,
                         std::optional<int64_t> output_padding,
                         int64_t stride,
                         int64_t dilation) {
    const int64_t k = kernel + (kernel - 1) * (dilation - 1);
    if (!output_padding)
        return padding == "VALID" ? in * stride + std::max<int64_t>(k - stride, 0) : in * stride;
    const int64_t pad = padding == "SAME" ? k / 2 : 0;
    return (in - 1) * stride + k - 2 * pad + *output_padding;
}

void require_positive(int64_t value, const char* what, const char* cls) {
    if (value <= 0)
        throw errors::InvalidArgumentError(
            fmt::format("{}: {} must be positive, got {}", cls, what, value));
}

}  // namespace

Conv2DTranspose::Conv2DTranspose(int64_t filters, Ints kernel_size, Conv2DTransposeOptions options)
    : Layer(options.name, "Conv2DTranspose"), filters_(filters), options_(std::move(options)) {
    use_dtype_option(options_.dtype);
    require_positive(filters, "filters", "Conv2DTranspose");
    kernel_size_ = pair_of(kernel_size, "kernel_size", name());
    strides_ = pair_of(options_.strides, "strides", name());
    dilation_ = pair_of(options_.dilation_rate, "dilation_rate", name());
    padding_ = padding_of(options_.padding, name(), false);
    if (options_.output_padding) {
        const auto& v = options_.output_padding->values();
        std::vector<int64_t> op =
            v.size() == 1 ? std::vector<int64_t>{v[0], v[0]} : std::vector<int64_t>(v);
        if (op.size() != 2 || op[0] < 0 || op[1] < 0 || op[0] >= strides_[0] ||
            op[1] >= strides_[1])
            throw errors::InvalidArgumentError(
                fmt::format("layer \"{}\" (Conv2DTranspose): output_padding must be one or two "
                            "non-negative integers, each less than its stride ({}, {})",
                            name(),
                            strides_[0],
                            strides_[1]));
        output_padding_ = op;
    }
    activation_ = activations::get(options_.activation, name());
}

void Conv2DTranspose::build(const Shape& s) {
    require_rank(s, 4, name(), "Conv2DTranspose", "[batch, height, width, channels]");
    kernel_ = add_weight("kernel",
                         {kernel_size_[0], kernel_size_[1], filters_, s[3]},
                         options_.kernel_initializer,
                         variable_dtype());
    if (options_.use_bias)
        bias_ = add_weight("bias", {filters_}, options_.bias_initializer, variable_dtype());
    set_input_spec({.ndim = 4, .axes = {{-1, s[3]}}});
}

Tensor Conv2DTranspose::call(const Tensor& x, bool) {
    std::vector<int64_t> out{x.shape()[0], 0, 0, filters_};
    for (int i = 0; i < 2; ++i)
        out[1 + i] = transpose_length(
            x.shape()[1 + i],
            kernel_size_[i],
            padding_,
            output_padding_ ? std::optional<int64_t>((*output_padding_)[i]) : std::nullopt,
            strides_[i],
            dilation_[i]);
    Tensor y = nn::conv2d_transpose(
        x, kernel_, Shape(out), options_.strides, padding_, "NHWC", options_.dilation_rate);
    if (bias_.defined()) y = nn::bias_add(y, bias_);
    return activation_(y);
}

// ---- DepthwiseConv2D ----

DepthwiseConv2D::DepthwiseConv2D(Ints kernel_size, DepthwiseConv2DOptions options)
    : Layer(options.name, "DepthwiseConv2D"), options_(std::move(options)) {
    use_dtype_option(options_.dtype);
    require_positive(options_.depth_multiplier, "depth_multiplier", "DepthwiseConv2D");
    kernel_size_ = pair_of(kernel_size, "kernel_size", name());
    pair_of(options_.strides, "strides", name());
    pair_of(options_.dilation_rate, "dilation_rate", name());
    padding_ = padding_of(options_.padding, name(), false);
    activation_ = activations::get(options_.activation, name());
}

void DepthwiseConv2D::build(const Shape& s) {
    require_rank(s, 4, name(), "DepthwiseConv2D", "[batch, height, width, channels]");
    kernel_ = add_weight("kernel",
                         {kernel_size_[0], kernel_size_[1], s[3], options_.depth_multiplier},
                         options_.depthwise_initializer,
                         variable_dtype());
    if (options_.use_bias)
        bias_ = add_weight("bias",
                           {s[3] * options_.depth_multiplier},
                           options_.bias_initializer,
                           variable_dtype());
    set_input_spec({.ndim = 4, .axes = {{-1, s[3]}}});
}

Tensor DepthwiseConv2D::call(const Tensor& x, bool) {
    Tensor y = nn::depthwise_conv2d(
        x, kernel_, options_.strides, padding_, "NHWC", options_.dilation_rate);
    if (bias_.defined()) y = nn::bias_add(y, bias_);
    return activation_(y);
}

// ---- SeparableConv2D ----

SeparableConv2D::SeparableConv2D(int64_t filters, Ints kernel_size, SeparableConv2DOptions options)
    : Layer(options.name, "SeparableConv2D"), filters_(filters), options_(std::move(options)) {
    use_dtype_option(options_.dtype);
    require_positive(filters, "filters", "SeparableConv2D");
    require_positive(options_.depth_multiplier, "depth_multiplier", "SeparableConv2D");
    kernel_size_ = pair_of(kernel_size, "kernel_size", name());
    pair_of(options_.strides, "strides", name());
    pair_of(options_.dilation_rate, "dilation_rate", name());
    padding_ = padding_of(options_.padding, name(), false);
    activation_ = activations::get(options_.activation, name());
}

void SeparableConv2D::build(const Shape& s) {
    require_rank(s, 4, name(), "SeparableConv2D", "[batch, height, width, channels]");
    const int64_t m = options_.depth_multiplier;
    depthwise_kernel_ = add_weight("depthwise_kernel",
                                   {kernel_size_[0], kernel_size_[1], s[3], m},
                                   options_.depthwise_initializer,
                                   variable_dtype());
    pointwise_kernel_ = add_weight("pointwise_kernel",
                                   {1, 1, s[3] * m, filters_},
                                   options_.pointwise_initializer,
                                   variable_dtype());
    if (options_.use_bias)
        bias_ = add_weight("bias", {filters_}, options_.bias_initializer, variable_dtype());
    set_input_spec({.ndim = 4, .axes = {{-1, s[3]}}});
}

Tensor SeparableConv2D::call(const Tensor& x, bool) {
    const Tensor depthwise = nn::depthwise_conv2d(
        x, depthwise_kernel_, options_.strides, padding_, "NHWC", options_.dilation_rate);
    Tensor y = nn::conv2d(depthwise, pointwise_kernel_, 1, "VALID");
    if (bias_.defined()) y = nn::bias_add(y, bias_);
    return activation_(y);
}

// ---- 1-D and global pooling ----

namespace {

// [N, steps, C] (or channels first) pooled as [N, 1, steps, C] by the 2-D pool.
template <class Pool>
Tensor pool1d(const Tensor& x, bool channels_first, Pool&& pool) {
    const Tensor in = channels_first ? transpose(x, {0, 2, 1}) : x;
    Tensor y = squeeze(pool(expand_dims(in, 1)), Axes(int64_t{1}));
    return channels_first ? transpose(y, {0, 2, 1}) : y;
}

int64_t positive(int64_t v, const char* what, const std::string& layer) {
    if (v <= 0)
        throw errors::InvalidArgumentError(
            fmt::format("layer \"{}\": {} must be a positive integer, got {}", layer, what, v));
    return v;
}

}  // namespace

MaxPooling1D::MaxPooling1D(int64_t pool_size, Pooling1DOptions options)
    : Layer(options.name, "MaxPooling1D"), options_(std::move(options)) {
    pool_size_ = positive(pool_size, "pool_size", name());
    strides_ = positive(options_.strides.value_or(pool_size), "strides", name());
    padding_ = padding_of(options_.padding, name(), false);
    channels_first_ = detail::channels_first(options_.data_format, name());
    set_input_spec({.ndim = 3});
}

Tensor MaxPooling1D::call(const Tensor& x, bool) {
    return pool1d(x, channels_first_, [&](const Tensor& in) {
        return nn::max_pool2d(in, Ints{1, pool_size_}, Ints{1, strides_}, padding_);
    });
}

AveragePooling1D::AveragePooling1D(int64_t pool_size, Pooling1DOptions options)
    : Layer(options.name, "AveragePooling1D"), options_(std::move(options)) {
    pool_size_ = positive(pool_size, "pool_size", name());
    strides_ = positive(options_.strides.value_or(pool_size), "strides", name());
    padding_ = padding_of(options_.padding, name(), false);
    channels_first_ = detail::channels_first(options_.data_format, name());
    set_input_spec({.ndim = 3});
}

Tensor AveragePooling1D::call(const Tensor& x, bool) {
    return pool1d(x, channels_first_, [&](const Tensor& in) {
        return nn::avg_pool2d(in, Ints{1, pool_size_}, Ints{1, strides_}, padding_);
    });
}

GlobalMaxPooling2D::GlobalMaxPooling2D(GlobalPoolingOptions options)
    : Layer(options.name, "GlobalMaxPooling2D"), options_(std::move(options)) {
    channels_first_ = detail::channels_first(options_.data_format, name());
    set_input_spec({.ndim = 4});
}

Tensor GlobalMaxPooling2D::call(const Tensor& x, bool) {
    return reduce_max(x, channels_first_ ? Axes({2, 3}) : Axes({1, 2}), options_.keepdims);
}

GlobalAveragePooling1D::GlobalAveragePooling1D(GlobalPoolingOptions options)
    : Layer(options.name, "GlobalAveragePooling1D"), options_(std::move(options)) {
    channels_first_ = detail::channels_first(options_.data_format, name());
    set_input_spec({.ndim = 3});
}

Tensor GlobalAveragePooling1D::call(const Tensor& x, bool) {
    return reduce_mean(x, Axes(int64_t{channels_first_ ? 2 : 1}), options_.keepdims);
}

}  // namespace tapeflow::keras::layers
