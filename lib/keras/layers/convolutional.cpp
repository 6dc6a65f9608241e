// Conv2D, Conv1D and the 2-D pooling layers on tf::nn's conv2d / max_pool2d / avg_pool2d (NHWC).
#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include <tapeflow/core/error.hpp>
#include <tapeflow/keras/layers/convolutional.hpp>
#include <tapeflow/ops/array.hpp>
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

}  // namespace tapeflow::keras::layers
