// Keras' BatchNormalization and LayerNormalization (Keras 3 defaults: epsilon 1e-3, BN momentum
// 0.99; moving statistics are non-trainable weights updated only when training).
#pragma once

#include <cstdint>
#include <string>

#include <tapeflow/core/export.hpp>
#include <tapeflow/keras/initializers.hpp>
#include <tapeflow/keras/layer.hpp>
#include <tapeflow/ops/math.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow::keras::layers {

struct BatchNormalizationOptions {
    int64_t axis = -1;
    double momentum = 0.99;
    double epsilon = 1e-3;
    bool center = true;
    bool scale = true;
    std::string name = "";
    /// Keras' dtype=: a policy name ("mixed_float16", "float32", ...); "" = the global policy.
    std::string dtype = "";
};

/// Training: normalizes with the batch mean and (biased) variance over every axis but `axis`, and
/// updates moving_mean / moving_variance as moving * momentum + batch * (1 - momentum) (Keras 3:
/// no Bessel correction). Inference: normalizes with the moving statistics. Weights: gamma, beta
/// (trainable, when scale / center), moving_mean, moving_variance (non-trainable), each [C].
class BatchNormalization : public Layer {
public:
    explicit BatchNormalization(BatchNormalizationOptions options = {});
    void build(const Shape& input_shape) override;
    Tensor call(const Tensor& x, bool training) override;
    Config get_config() const override;
    Variable gamma() const { return gamma_; }
    Variable beta() const { return beta_; }
    Variable moving_mean() const { return moving_mean_; }
    Variable moving_variance() const { return moving_variance_; }

protected:
    bool autocast_weights() const override { return false; }  // Keras: autocast=False

private:
    BatchNormalizationOptions options_;
    int64_t axis_ = 0;                  // resolved at build
    std::vector<int64_t> reduce_axes_;  // every other axis
    std::vector<int64_t> param_shape_;  // [C] or a broadcastable [1, C, 1, 1]
    Variable gamma_, beta_, moving_mean_, moving_variance_;
};

struct LayerNormalizationOptions {
    Axes axis = -1;
    double epsilon = 1e-3;
    bool center = true;
    bool scale = true;
    std::string name = "";
    /// Keras' dtype=: a policy name ("mixed_float16", "float32", ...); "" = the global policy.
    std::string dtype = "";
};

/// (x - mean) / sqrt(variance + epsilon) * gamma + beta, statistics over `axis` per example;
/// gamma and beta are shaped like those dimensions of the input.
class LayerNormalization : public Layer {
public:
    explicit LayerNormalization(LayerNormalizationOptions options = {});
    void build(const Shape& input_shape) override;
    Tensor call(const Tensor& x, bool training) override;
    Config get_config() const override;
    Variable gamma() const { return gamma_; }
    Variable beta() const { return beta_; }

protected:
    bool autocast_weights() const override { return false; }  // Keras: autocast=False

private:
    LayerNormalizationOptions options_;
    std::vector<int64_t> axes_;  // resolved, sorted
    Variable gamma_, beta_;
};

struct GroupNormalizationOptions {
    int64_t groups = 32;  // -1: one group per channel (instance normalization)
    int64_t axis = -1;
    double epsilon = 1e-3;
    bool center = true;
    bool scale = true;
    Initializer beta_initializer = initializers::zeros();
    Initializer gamma_initializer = initializers::ones();
    std::string name = "";
    std::string dtype = "";
};

/// Splits the `axis` channels into `groups` groups and normalizes each example's group with the
/// mean and (biased) variance over the group's channels and every other non-batch axis, then
/// gamma * x + beta per channel (gamma, beta [C]). groups must divide C (and not exceed it).
class GroupNormalization : public Layer {
public:
    explicit GroupNormalization(GroupNormalizationOptions options = {});
    Config get_config() const override;
    void build(const Shape& input_shape) override;
    Tensor call(const Tensor& x, bool training) override;
    Variable gamma() const { return gamma_; }
    Variable beta() const { return beta_; }

protected:
    bool autocast_weights() const override { return false; }  // Keras: autocast=False

private:
    GroupNormalizationOptions options_;
    int64_t axis_ = 0, groups_ = 0;
    Variable gamma_, beta_;
};

struct UnitNormalizationOptions {
    Axes axis = -1;
    std::string name = "";
};

/// x * rsqrt(max(sum(x^2 over axis), 1e-24)): unit L2 norm along `axis` (Keras' epsilon 1e-12).
class UnitNormalization : public Layer {
public:
    explicit UnitNormalization(UnitNormalizationOptions options = {});
    Config get_config() const override;
    Tensor call(const Tensor& x, bool training) override;

private:
    UnitNormalizationOptions options_;
};

namespace detail {
/// The layer-normalization computation of LayerNormalization (gamma, beta shaped like x's `axes`
/// dimensions, or undefined), as one function of public ops: the place to switch to a fused op.
Tensor layer_norm(const Tensor& x,
                  const Tensor& gamma,
                  const Tensor& beta,
                  const std::vector<int64_t>& axes,
                  double epsilon);
}  // namespace detail

}  // namespace tapeflow::keras::layers

TAPEFLOW_API_END
