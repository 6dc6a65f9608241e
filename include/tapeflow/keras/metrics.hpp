// tf::keras::metrics: Keras 3's stateful metrics. update_state accumulates (on the device of its
// inputs, no host reads), result() gives the value as a scalar tensor, reset_state() starts over.
#pragma once

#include <string>

#include <tapeflow/core/export.hpp>
#include <tapeflow/core/tensor.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow::keras::metrics {

class Metric {
public:
    explicit Metric(std::string name);
    virtual ~Metric();
    virtual void update_state(const Tensor& y_true,
                              const Tensor& y_pred,
                              const Tensor& sample_weight = {}) = 0;
    /// A scalar; 0 before any update.
    virtual Tensor result() const = 0;
    virtual void reset_state() = 0;
    const std::string& name() const { return name_; }
    /// Keras' metric direction ("up": higher is better), used by EarlyStopping / ModelCheckpoint.
    virtual bool higher_is_better() const { return false; }

private:
    std::string name_;
};

/// The weighted mean of values: sum(values x weight) / sum(weight) (per sample: values of rank > 1
/// are first averaged over their other axes, as Keras' reduce_to_samplewise_values).
class Mean : public Metric {
public:
    explicit Mean(std::string name = "mean");
    void update_state(const Tensor& values, const Tensor& sample_weight = {});
    /// As a metric of a model: the mean of y_pred (y_true unused).
    void update_state(const Tensor& y_true,
                      const Tensor& y_pred,
                      const Tensor& sample_weight) override;
    Tensor result() const override;
    void reset_state() override;

private:
    Tensor total_, count_;  // undefined = 0
};

/// A Mean of per-sample values fn(y_true, y_pred) (Keras' MeanMetricWrapper).
class MeanMetricWrapper : public Metric {
public:
    using Fn = Tensor (*)(const Tensor& y_true, const Tensor& y_pred, double threshold);
    MeanMetricWrapper(std::string name, Fn fn, double threshold = 0.5);
    void update_state(const Tensor& y_true,
                      const Tensor& y_pred,
                      const Tensor& sample_weight = {}) override;
    Tensor result() const override { return mean_.result(); }
    void reset_state() override { mean_.reset_state(); }
    bool higher_is_better() const override { return true; }

private:
    Fn fn_;
    double threshold_;
    Mean mean_;
};

/// Fraction of y_pred equal to y_true.
class Accuracy : public MeanMetricWrapper {
public:
    explicit Accuracy(std::string name = "accuracy");
};
/// Fraction of (y_pred > threshold) equal to y_true.
class BinaryAccuracy : public MeanMetricWrapper {
public:
    explicit BinaryAccuracy(double threshold = 0.5, std::string name = "binary_accuracy");
};
/// Fraction of argmax(y_pred) equal to argmax(y_true) (one-hot labels).
class CategoricalAccuracy : public MeanMetricWrapper {
public:
    explicit CategoricalAccuracy(std::string name = "categorical_accuracy");
};
/// Fraction of argmax(y_pred) equal to the integer label y_true ([B] or [B, 1]).
class SparseCategoricalAccuracy : public MeanMetricWrapper {
public:
    explicit SparseCategoricalAccuracy(std::string name = "sparse_categorical_accuracy");
};

/// Counts of true/false positives/negatives at threshold 0.5 (y_pred > 0.5 is positive; y_true
/// nonzero is positive), weighted; the base of Precision and Recall.
class ConfusionCounts : public Metric {
public:
    ConfusionCounts(std::string name, double threshold);
    void update_state(const Tensor& y_true,
                      const Tensor& y_pred,
                      const Tensor& sample_weight = {}) override;
    void reset_state() override;
    bool higher_is_better() const override { return true; }

protected:
    Tensor tp_, fp_, fn_;  // undefined = 0

private:
    double threshold_;
};

/// tp / (tp + fp), 0 when nothing was predicted positive.
class Precision : public ConfusionCounts {
public:
    explicit Precision(double threshold = 0.5, std::string name = "precision");
    Tensor result() const override;
};
/// tp / (tp + fn), 0 when there were no positives.
class Recall : public ConfusionCounts {
public:
    explicit Recall(double threshold = 0.5, std::string name = "recall");
    Tensor result() const override;
};

}  // namespace tapeflow::keras::metrics

TAPEFLOW_API_END
