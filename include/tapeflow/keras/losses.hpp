// tf::keras::losses: Keras 3's loss classes. A loss maps (y_true, y_pred) to per-sample values
// (the last axis reduced), multiplies by sample_weight and reduces: sum_over_batch_size (sum /
// number of per-sample values, Keras' default), sum, or none. from_logits uses TensorFlow's fused
// softmax / sigmoid cross-entropy ops; probabilities are clipped to [1e-7, 1 - 1e-7] as Keras.
#pragma once

#include <cstdint>
#include <string>

#include <tapeflow/core/export.hpp>
#include <tapeflow/core/tensor.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow::keras::losses {

enum class Reduction { sum_over_batch_size, sum, none };

/// The base: subclass and override call() (per-sample losses) for your own.
class Loss {
public:
    Loss(std::string name, Reduction reduction);
    virtual ~Loss();
    /// call(y_true, y_pred) weighted by sample_weight (broadcast; a trailing size-1 axis is
    /// squeezed, as Keras) and reduced. Mismatched shapes raise InvalidArgumentError naming the
    /// loss and both shapes.
    Tensor operator()(const Tensor& y_true,
                      const Tensor& y_pred,
                      const Tensor& sample_weight = {}) const;
    /// The per-sample losses.
    virtual Tensor call(const Tensor& y_true, const Tensor& y_pred) const = 0;
    const std::string& name() const { return name_; }
    Reduction reduction() const { return reduction_; }

private:
    std::string name_;
    Reduction reduction_;
};

struct CrossentropyOptions {
    bool from_logits = false;
    double label_smoothing = 0;
    int64_t axis = -1;
    Reduction reduction = Reduction::sum_over_batch_size;
};

/// -sum(y_true * log(y_pred)) over `axis`; y_true one-hot (smoothed: y (1 - ls) + ls / classes).
class CategoricalCrossentropy : public Loss {
public:
    explicit CategoricalCrossentropy(CrossentropyOptions options = {});
    Tensor call(const Tensor& y_true, const Tensor& y_pred) const override;

private:
    CrossentropyOptions options_;
};

/// y_true integer class ids of shape y_pred.shape[:-1] (or with a trailing 1; floats are cast).
/// Keras 3 has no label smoothing here: a nonzero label_smoothing raises InvalidArgumentError.
class SparseCategoricalCrossentropy : public Loss {
public:
    explicit SparseCategoricalCrossentropy(CrossentropyOptions options = {});
    Tensor call(const Tensor& y_true, const Tensor& y_pred) const override;

private:
    CrossentropyOptions options_;
};

/// mean over the last axis of -(y log p + (1 - y) log(1 - p)); smoothed y (1 - ls) + ls / 2.
class BinaryCrossentropy : public Loss {
public:
    explicit BinaryCrossentropy(CrossentropyOptions options = {});
    Tensor call(const Tensor& y_true, const Tensor& y_pred) const override;

private:
    CrossentropyOptions options_;
};

/// mean((y_pred - y_true)^2) over the last axis.
class MeanSquaredError : public Loss {
public:
    explicit MeanSquaredError(Reduction reduction = Reduction::sum_over_batch_size);
    Tensor call(const Tensor& y_true, const Tensor& y_pred) const override;
};

/// mean(|y_pred - y_true|) over the last axis.
class MeanAbsoluteError : public Loss {
public:
    explicit MeanAbsoluteError(Reduction reduction = Reduction::sum_over_batch_size);
    Tensor call(const Tensor& y_true, const Tensor& y_pred) const override;
};

/// mean over the last axis of 0.5 e^2 where |e| <= delta, else delta (|e| - 0.5 delta).
class Huber : public Loss {
public:
    explicit Huber(double delta = 1.0, Reduction reduction = Reduction::sum_over_batch_size);
    Tensor call(const Tensor& y_true, const Tensor& y_pred) const override;

private:
    double delta_;
};

namespace detail {
/// Keras' squeeze_or_expand_to_same_rank: drops a trailing size-1 axis of the higher-rank one.
std::pair<Tensor, Tensor> squeeze_to_same_rank(const Tensor& a, const Tensor& b);
}  // namespace detail

}  // namespace tapeflow::keras::losses

TAPEFLOW_API_END
