// Dense, Activation, Dropout, Flatten and Embedding: tensor ops only (no host reads), so they run
// on any device.
#include <fmt/format.h>

#include <tapeflow/core/error.hpp>
#include <tapeflow/keras/layers/core.hpp>
#include <tapeflow/ops/array.hpp>
#include <tapeflow/ops/creation.hpp>
#include <tapeflow/ops/math.hpp>
#include <tapeflow/ops/nn.hpp>

namespace tapeflow::keras::layers {

namespace {

void require_positive(int64_t value, const char* what, const char* layer) {
    if (value <= 0)
        throw errors::InvalidArgumentError(
            fmt::format("{}: {} must be a positive integer, got {}", layer, what, value));
}

}  // namespace

// ---- Dense ----

Dense::Dense(int64_t units, DenseOptions options)
    : Layer(options.name, "Dense"), units_(units), options_(std::move(options)) {
    use_dtype_option(options_.dtype);
    require_positive(units, "units", "Dense");
    activation_ = activations::get(options_.activation, name());
}

void Dense::build(const Shape& input_shape) {
    if (input_shape.rank() < 2)
        throw errors::InvalidArgumentError(fmt::format(
            "layer \"{}\" (Dense) needs inputs of rank >= 2 ([batch, ..., features]), got shape "
            "{}; add a batch dimension (expand_dims(x, 0)) or reshape",
            name(),
            input_shape.debug_string()));
    const int64_t in = input_shape[-1];
    kernel_ = add_weight("kernel", {in, units_}, options_.kernel_initializer, variable_dtype());
    if (options_.use_bias)
        bias_ = add_weight("bias", {units_}, options_.bias_initializer, variable_dtype());
    set_input_spec({.min_ndim = 2, .axes = {{-1, in}}});
}

Tensor Dense::call(const Tensor& x, bool) {
    Tensor y;
    if (x.rank() == 2) {
        y = matmul(x, kernel_);
    } else {
        std::vector<int64_t> out = x.shape().dims();
        out.back() = units_;
        y = reshape(matmul(reshape(x, {-1, x.shape()[-1]}), kernel_), Shape(out));
    }
    if (bias_.defined()) y = nn::bias_add(y, bias_);
    return activation_(y);
}

// ---- Activation ----

Activation::Activation(std::string activation, std::string name)
    : Layer(std::move(name), "Activation"),
      activation_name_(activation),
      fn_(activations::get(activation, this->name())) {}

Tensor Activation::call(const Tensor& x, bool) {
    return fn_(x);
}

// ---- Dropout ----

Dropout::Dropout(double rate, std::optional<uint64_t> seed, std::string name)
    : Layer(std::move(name), "Dropout"), rate_(rate), seed_(seed) {
    if (!(rate >= 0 && rate < 1))
        throw errors::InvalidArgumentError(fmt::format(
            "Dropout: rate must be in [0, 1), got {} (layer \"{}\")", rate, this->name()));
}

Tensor Dropout::call(const Tensor& x, bool training) {
    if (!training || rate_ == 0) return x;
    return nn::dropout(x, rate_, detail::next_seed(seed_, calls_));
}

// ---- Flatten ----

Flatten::Flatten(std::string name) : Layer(std::move(name), "Flatten") {}

Tensor Flatten::call(const Tensor& x, bool) {
    if (x.rank() < 1)
        throw errors::InvalidArgumentError(
            fmt::format("layer \"{}\" (Flatten) needs a batch dimension, got a scalar", name()));
    const int64_t batch = x.shape()[0];
    int64_t rest = 1;
    for (int64_t i = 1; i < x.rank(); ++i)
        rest *= x.shape()[i];
    return reshape(x, Shape{batch, rest});
}

// ---- Embedding ----

Embedding::Embedding(int64_t input_dim, int64_t output_dim, EmbeddingOptions options)
    : Layer(options.name, "Embedding"),
      input_dim_(input_dim),
      output_dim_(output_dim),
      options_(std::move(options)) {
    use_dtype_option(options_.dtype);
    require_positive(input_dim, "input_dim", "Embedding");
    require_positive(output_dim, "output_dim", "Embedding");
}

void Embedding::build(const Shape&) {
    embeddings_ = add_weight(
        "embeddings", {input_dim_, output_dim_}, options_.embeddings_initializer, variable_dtype());
}

Tensor Embedding::call(const Tensor& ids, bool) {
    const bool integer = ids.dtype() == DType::int32 || ids.dtype() == DType::int64;
    const Tensor rows = nn::embedding_lookup(embeddings_, integer ? ids : cast(ids, DType::int32));
    // Keras 3: the table does not autocast; the rows looked up are cast to the compute dtype.
    return rows.dtype() == compute_dtype() || !dtype_policy_applies() ? rows
                                                                      : cast(rows, compute_dtype());
}

Tensor Embedding::compute_mask(const Tensor& ids, const Tensor&) const {
    if (!options_.mask_zero) return {};
    return not_equal(ids, zeros_like(ids));
}

}  // namespace tapeflow::keras::layers
