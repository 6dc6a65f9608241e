// Keras' core layers: Dense, Activation, Dropout, Flatten and Embedding (channels last, Keras 3
// names, defaults and parameter counts: Dense(units) on [..., in] has in x units + units).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <tapeflow/core/export.hpp>
#include <tapeflow/keras/activations.hpp>
#include <tapeflow/keras/initializers.hpp>
#include <tapeflow/keras/layer.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow::keras::layers {

struct DenseOptions {
    std::string activation = "";
    bool use_bias = true;
    Initializer kernel_initializer = initializers::glorot_uniform();
    Initializer bias_initializer = initializers::zeros();
    std::string name = "";
    /// Keras' dtype=: a policy name ("mixed_float16", "float32", ...); "" = the global policy.
    std::string dtype = "";
};

/// activation(x @ kernel + bias) on the last axis; kernel [in, units], bias [units]. Inputs of
/// rank >= 2 (a rank-3 [B, T, in] gives [B, T, units]).
class Dense : public Layer {
public:
    explicit Dense(int64_t units, DenseOptions options = {});
    void build(const Shape& input_shape) override;
    Tensor call(const Tensor& x, bool training) override;
    Config get_config() const override;
    Variable kernel() const { return kernel_; }
    /// Empty handle when use_bias is false.
    Variable bias() const { return bias_; }
    int64_t units() const { return units_; }

private:
    int64_t units_;
    DenseOptions options_;
    activations::Activation activation_;
    Variable kernel_, bias_;
};

/// Applies an activation by name ("relu", "gelu", "softmax", ...; see activations::get).
class Activation : public Layer {
public:
    explicit Activation(std::string activation, std::string name = "");
    Tensor call(const Tensor& x, bool training) override;
    Config get_config() const override;

private:
    std::string activation_name_;
    activations::Activation fn_;
};

/// Identity unless training; when training, zeroes each element with probability `rate` and
/// scales the rest by 1 / (1 - rate). A seed makes the masks reproducible (each call draws a new
/// mask from the seed and a per-layer counter, like Keras' SeedGenerator). rate in [0, 1).
class Dropout : public Layer {
public:
    explicit Dropout(double rate, std::optional<uint64_t> seed = {}, std::string name = "");
    Tensor call(const Tensor& x, bool training) override;
    Config get_config() const override;

private:
    double rate_;
    std::optional<uint64_t> seed_;
    uint64_t calls_ = 0;
};

/// [B, ...] -> [B, product of the rest] ([B] -> [B, 1]).
class Flatten : public Layer {
public:
    explicit Flatten(std::string name = "");
    Tensor call(const Tensor& x, bool training) override;
    Config get_config() const override;
};

struct EmbeddingOptions {
    Initializer embeddings_initializer = initializers::random_uniform();  // Keras' "uniform"
    /// Id 0 is padding: compute_mask gives ids != 0 (bool), which Sequential passes on.
    bool mask_zero = false;
    std::string name = "";
    /// Keras' dtype=: a policy name ("mixed_float16", "float32", ...); "" = the global policy.
    std::string dtype = "";
};

/// embeddings[ids]: integer ids of any shape (floats are cast, as Keras) -> ids.shape +
/// [output_dim]. The gradient of `embeddings` is IndexedSlices (only the looked-up rows), as in
/// Keras/TensorFlow.
class Embedding : public Layer {
public:
    Embedding(int64_t input_dim, int64_t output_dim, EmbeddingOptions options = {});
    void build(const Shape& input_shape) override;
    Tensor call(const Tensor& ids, bool training) override;
    Config get_config() const override;
    /// With mask_zero: not_equal(ids, 0) (bool, the ids' shape); else none.
    Tensor compute_mask(const Tensor& ids, const Tensor& mask) const override;
    Variable embeddings() const { return embeddings_; }

protected:
    bool autocast_weights() const override { return false; }  // Keras: autocast=False

private:
    int64_t input_dim_, output_dim_;
    EmbeddingOptions options_;
    Variable embeddings_;
};

}  // namespace tapeflow::keras::layers

TAPEFLOW_API_END
