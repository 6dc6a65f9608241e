// Keras 3's regression metrics (MeanSquaredError, MeanAbsoluteError), TopKCategoricalAccuracy,
// AUC (confusion counts at evenly spaced thresholds, Riemann sums as keras/src/metrics/
// confusion_metrics.py) and F1Score (keras/src/metrics/f_score_metrics.py). Counts accumulate on
// the inputs' device; AUC's and F1Score's results read them to the host.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include <tapeflow/core/error.hpp>
#include <tapeflow/keras/losses.hpp>
#include <tapeflow/keras/metrics.hpp>
#include <tapeflow/ops/array.hpp>
#include <tapeflow/ops/creation.hpp>
#include <tapeflow/ops/math.hpp>

namespace tapeflow::keras::metrics {

namespace {

constexpr double kEpsilon = 1e-7;  // Keras' backend.epsilon()

Tensor f32(const Tensor& t) {
    return t.dtype() == DType::float32 ? t : cast(t, DType::float32);
}

void accumulate(Tensor& state, const Tensor& value) {
    state = state.defined() ? state + value : value;
}

void check_inputs(const std::string& metric, const Tensor& y_true, const Tensor& y_pred) {
    if (!y_true.defined() || !y_pred.defined())
        throw errors::InvalidArgumentError(
            fmt::format("metric {}: y_true and y_pred must be defined tensors", metric));
}

Tensor squared_error(const Tensor& y_true, const Tensor& y_pred, double) {
    auto [t, p] = losses::detail::squeeze_to_same_rank(f32(y_true), f32(y_pred));
    return reduce_mean(square(p - t), Axes(int64_t{-1}));
}

Tensor absolute_error(const Tensor& y_true, const Tensor& y_pred, double) {
    auto [t, p] = losses::detail::squeeze_to_same_rank(f32(y_true), f32(y_pred));
    return reduce_mean(abs(p - t), Axes(int64_t{-1}));
}

// in_top_k: fewer than k classes score strictly above the true class.
Tensor top_k_accuracy(const Tensor& y_true, const Tensor& y_pred, double k) {
    const Tensor p = f32(y_pred);
    const int64_t classes = p.shape()[-1];
    const Tensor target_mask = one_hot(argmax(y_true, -1), classes);
    const Tensor target = reduce_sum(p * target_mask, Axes(int64_t{-1}), true);
    const Tensor above = reduce_sum(f32(greater(p, target)), Axes(int64_t{-1}));
    return f32(less(above, scalar_like(above, k)));
}

std::vector<double> host(const Tensor& t, std::size_t n) {
    return t.defined() ? f32(t).to_vector<double>() : std::vector<double>(n, 0.0);
}

double divide_no_nan(double a, double b) {
    return b == 0 ? 0.0 : a / b;
}

}  // namespace

MeanSquaredError::MeanSquaredError(std::string name)
    : MeanMetricWrapper(std::move(name), squared_error) {}
MeanAbsoluteError::MeanAbsoluteError(std::string name)
    : MeanMetricWrapper(std::move(name), absolute_error) {}
TopKCategoricalAccuracy::TopKCategoricalAccuracy(int64_t k, std::string name)
    : MeanMetricWrapper(std::move(name), top_k_accuracy, static_cast<double>(k)) {
    if (k < 1)
        throw errors::InvalidArgumentError(
            fmt::format("TopKCategoricalAccuracy: k must be >= 1, got {}", k));
}

// ---- AUC ----

AUC::AUC(AUCOptions options) : Metric(options.name), options_(std::move(options)) {
    if (options_.num_thresholds <= 1)
        throw errors::InvalidArgumentError(
            fmt::format("AUC: num_thresholds must be > 1, got {}", options_.num_thresholds));
    if (options_.curve != "ROC" && options_.curve != "PR")
        throw errors::InvalidArgumentError(
            fmt::format("AUC: curve must be \"ROC\" or \"PR\", got \"{}\"", options_.curve));
    const std::string& m = options_.summation_method;
    if (m != "interpolation" && m != "minoring" && m != "majoring")
        throw errors::InvalidArgumentError(fmt::format(
            "AUC: summation_method must be \"interpolation\", \"minoring\" or \"majoring\", got "
            "\"{}\"",
            m));
    const int64_t n = options_.num_thresholds;
    thresholds_.push_back(0.0 - kEpsilon);
    for (int64_t i = 0; i < n - 2; ++i)
        thresholds_.push_back(static_cast<double>(i + 1) / static_cast<double>(n - 1));
    thresholds_.push_back(1.0 + kEpsilon);
}

void AUC::update_state(const Tensor& y_true, const Tensor& y_pred, const Tensor& sample_weight) {
    check_inputs(name(), y_true, y_pred);
    const int64_t n = options_.num_thresholds;
    const Tensor p = reshape(f32(y_pred), {-1, 1});
    const Tensor label = reshape(f32(not_equal(y_true, zeros_like(y_true))), {-1, 1});
    Tensor w = ones_like(label);
    if (sample_weight.defined()) {
        // One weight per sample, spread over that sample's elements.
        Tensor sw = f32(sample_weight);
        const int64_t per_sample = p.shape()[0] / std::max<int64_t>(1, sw.num_elements());
        sw = reshape(sw, {-1, 1});
        if (per_sample > 1) sw = reshape(tile(sw, {1, per_sample}), {-1, 1});
        w = sw;
    }
    std::vector<float> thr(thresholds_.begin(), thresholds_.end());
    const Tensor t = constant(thr, Shape{1, n});
    const Tensor predicted = f32(greater(p, t));  // [N, T]
    const Tensor not_predicted = ones_like(predicted) - predicted;
    const Tensor pos = label * w, neg = (ones_like(label) - label) * w;
    const Axes rows(int64_t{0});
    accumulate(tp_, reduce_sum(predicted * pos, rows));
    accumulate(fp_, reduce_sum(predicted * neg, rows));
    accumulate(fn_, reduce_sum(not_predicted * pos, rows));
    accumulate(tn_, reduce_sum(not_predicted * neg, rows));
}

Tensor AUC::result() const {
    const auto n = static_cast<std::size_t>(options_.num_thresholds);
    const std::vector<double> tp = host(tp_, n), fp = host(fp_, n), fn = host(fn_, n),
                              tn = host(tn_, n);
    double area = 0;
    if (options_.curve == "PR" && options_.summation_method == "interpolation") {
        // Davis & Goadrich's interpolation, as Keras' interpolate_pr_auc.
        for (std::size_t i = 0; i + 1 < n; ++i) {
            const double dtp = tp[i] - tp[i + 1];
            const double p_a = tp[i] + fp[i], p_b = tp[i + 1] + fp[i + 1];
            const double slope = divide_no_nan(dtp, std::max(p_a - p_b, 0.0));
            const double intercept = tp[i + 1] - slope * p_b;
            const double ratio = p_a > 0 && p_b > 0 ? divide_no_nan(p_a, std::max(p_b, 0.0)) : 1.0;
            area += divide_no_nan(slope * (dtp + intercept * std::log(ratio)),
                                  std::max(tp[i + 1] + fn[i + 1], 0.0));
        }
        return constant(static_cast<float>(area));
    }
    std::vector<double> x(n), y(n);
    for (std::size_t i = 0; i < n; ++i) {
        const double recall = divide_no_nan(tp[i], tp[i] + fn[i]);
        if (options_.curve == "ROC") {
            x[i] = divide_no_nan(fp[i], fp[i] + tn[i]);
            y[i] = recall;
        } else {
            x[i] = recall;
            y[i] = divide_no_nan(tp[i], tp[i] + fp[i]);
        }
    }
    for (std::size_t i = 0; i + 1 < n; ++i) {
        double height = (y[i] + y[i + 1]) / 2;
        if (options_.summation_method == "minoring") height = std::min(y[i], y[i + 1]);
        if (options_.summation_method == "majoring") height = std::max(y[i], y[i + 1]);
        area += (x[i] - x[i + 1]) * height;
    }
    return constant(static_cast<float>(area));
}

void AUC::reset_state() {
    tp_ = fp_ = tn_ = fn_ = Tensor();
}

// ---- F1Score ----

F1Score::F1Score(std::string average,
                 std::optional<double> threshold,
                 std::string name,
                 double beta)
    : Metric(std::move(name)), average_(std::move(average)), threshold_(threshold), beta_(beta) {
    if (!average_.empty() && average_ != "micro" && average_ != "macro" && average_ != "weighted")
        throw errors::InvalidArgumentError(fmt::format(
            "F1Score: average must be \"\" (None), \"micro\", \"macro\" or \"weighted\", got "
            "\"{}\"",
            average_));
    if (!(beta_ > 0))
        throw errors::InvalidArgumentError(fmt::format("F1Score: beta must be > 0, got {}", beta_));
}

void F1Score::update_state(const Tensor& y_true,
                           const Tensor& y_pred,
                           const Tensor& sample_weight) {
    check_inputs(name(), y_true, y_pred);
    if (y_pred.rank() != 2 || y_true.rank() != 2)
        throw errors::InvalidArgumentError(
            fmt::format("metric {}: expects [batch, classes] y_true and y_pred, got {} and {}",
                        name(),
                        y_true.shape().debug_string(),
                        y_pred.shape().debug_string()));
    const Tensor p = f32(y_pred), t = f32(y_true);
    Tensor predicted;
    if (!threshold_) {
        const Tensor top = reduce_max(p, Axes(int64_t{-1}), true);
        predicted = f32(logical_and(greater_equal(p, top), greater(abs(p), scalar_like(p, 1e-9))));
    } else {
        predicted = f32(greater(p, scalar_like(p, *threshold_)));
    }
    Tensor w;
    if (sample_weight.defined()) w = reshape(f32(sample_weight), {-1, 1});
    const bool micro = average_ == "micro";
    auto weighted_sum = [&](const Tensor& v) {
        const Tensor vw = w.defined() ? v * w : v;
        return micro ? reduce_sum(vw) : reduce_sum(vw, Axes(int64_t{0}));
    };
    const Tensor one = ones_like(t);
    accumulate(tp_, weighted_sum(predicted * t));
    accumulate(fp_, weighted_sum(predicted * (one - t)));
    accumulate(fn_, weighted_sum((one - predicted) * t));
    accumulate(weights_, weighted_sum(t));
}

Tensor F1Score::result() const {
    if (!tp_.defined()) return constant(0.0f);
    const std::vector<double> tp = host(tp_, 0), fp = host(fp_, 0), fn = host(fn_, 0),
                              iw = host(weights_, 0);
    const double b2 = beta_ * beta_;
    std::vector<float> f(tp.size());
    double weight_sum = 0;
    for (double v : iw)
        weight_sum += v;
    double weighted = 0, mean = 0;
    for (std::size_t i = 0; i < tp.size(); ++i) {
        const double precision = tp[i] / (tp[i] + fp[i] + kEpsilon);
        const double recall = tp[i] / (tp[i] + fn[i] + kEpsilon);
        const double score = (1 + b2) * (precision * recall) / (b2 * precision + recall + kEpsilon);
        f[i] = static_cast<float>(score);
        mean += score / static_cast<double>(tp.size());
        weighted += score * iw[i] / (weight_sum + kEpsilon);
    }
    if (average_ == "weighted") return constant(static_cast<float>(weighted));
    if (!average_.empty()) return constant(static_cast<float>(mean));
    return constant(f, Shape{static_cast<int64_t>(f.size())});
}

void F1Score::reset_state() {
    tp_ = fp_ = fn_ = weights_ = Tensor();
}

}  // namespace tapeflow::keras::metrics
