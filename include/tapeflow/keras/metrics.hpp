// tf::keras::metrics: Keras 3's stateful metrics. update_state accumulates (on the device of its
// inputs, no host reads), result() gives the value as a scalar tensor, reset_state() starts over.
#pragma once

#include <optional>
#include <string>
#include <vector>

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

/// mean((y_true - y_pred)^2) over the last axis, averaged over samples (Keras' metric).
class MeanSquaredError : public MeanMetricWrapper {
public:
    explicit MeanSquaredError(std::string name = "mean_squared_error");
    bool higher_is_better() const override { return false; }
};
/// mean(|y_true - y_pred|) over the last axis, averaged over samples.
class MeanAbsoluteError : public MeanMetricWrapper {
public:
    explicit MeanAbsoluteError(std::string name = "mean_absolute_error");
    bool higher_is_better() const override { return false; }
};
/// Fraction of samples whose true class (argmax of the one-hot y_true) is among the k highest
/// scores of y_pred (ties at the boundary count as in, as tf.math.in_top_k).
class TopKCategoricalAccuracy : public MeanMetricWrapper {
public:
    explicit TopKCategoricalAccuracy(int64_t k = 5,
                                     std::string name = "top_k_categorical_accuracy");
};

/// Keras' AUC: confusion counts at num_thresholds thresholds (0 - 1e-7, i / (n - 1) for
/// i = 1..n-2, 1 + 1e-7; a prediction above a threshold is positive), then a Riemann sum of the
/// curve ("ROC": recall against the false positive rate; "PR": precision against recall) with
/// summation_method "interpolation" (trapezoids; for PR, Davis & Goadrich's interpolation as
/// Keras), "minoring" or "majoring". Labels are positive when nonzero; every element counts (no
/// multi_label).
struct AUCOptions {
    int64_t num_thresholds = 200;
    std::string curve = "ROC";
    std::string summation_method = "interpolation";
    std::string name = "auc";
};
class AUC : public Metric {
public:
    explicit AUC(AUCOptions options = {});
    void update_state(const Tensor& y_true,
                      const Tensor& y_pred,
                      const Tensor& sample_weight = {}) override;
    Tensor result() const override;
    void reset_state() override;
    bool higher_is_better() const override { return true; }
    const std::vector<double>& thresholds() const { return thresholds_; }

private:
    AUCOptions options_;
    std::vector<double> thresholds_;
    Tensor tp_, fp_, tn_, fn_;  // [num_thresholds]; undefined = 0
};

/// Keras' F1Score (FBetaScore with beta 1) on [batch, classes] one-hot / multi-label targets:
/// threshold nullopt: the highest score of each row is positive (when above 1e-9); else
/// y_pred > threshold. average "" (per class: result() is [classes]), "micro", "macro" or
/// "weighted". f = (1 + beta^2) p r / (beta^2 p + r + 1e-7), p = tp / (tp + fp + 1e-7),
/// r = tp / (tp + fn + 1e-7).
class F1Score : public Metric {
public:
    explicit F1Score(std::string average = "",
                     std::optional<double> threshold = {},
                     std::string name = "f1_score",
                     double beta = 1.0);
    void update_state(const Tensor& y_true,
                      const Tensor& y_pred,
                      const Tensor& sample_weight = {}) override;
    Tensor result() const override;
    void reset_state() override;
    bool higher_is_better() const override { return true; }

private:
    std::string average_;
    std::optional<double> threshold_;
    double beta_;
    Tensor tp_, fp_, fn_, weights_;  // undefined = 0
};

}  // namespace tapeflow::keras::metrics

TAPEFLOW_API_END
