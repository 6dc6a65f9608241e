// Keras 3's metrics. State is kept as float32 scalar tensors on the inputs' device (accumulated by
// tensor ops, so training never waits for a metric); undefined state stands for zero.
#include <fmt/format.h>

#include <tapeflow/core/error.hpp>
#include <tapeflow/keras/losses.hpp>
#include <tapeflow/keras/metrics.hpp>
#include <tapeflow/ops/array.hpp>
#include <tapeflow/ops/creation.hpp>
#include <tapeflow/ops/math.hpp>

namespace tapeflow::keras::metrics {

namespace {

Tensor f32(const Tensor& t) {
    return t.dtype() == DType::float32 ? t : cast(t, DType::float32);
}

void accumulate(Tensor& state, const Tensor& value) {
    state = state.defined() ? state + value : value;
}

Tensor value_or_zero(const Tensor& t) {
    return t.defined() ? t : constant(0.0f);
}

void check_inputs(const std::string& metric, const Tensor& y_true, const Tensor& y_pred) {
    if (!y_true.defined() || !y_pred.defined())
        throw errors::InvalidArgumentError(
            fmt::format("metric {}: y_true and y_pred must be defined tensors", metric));
}

Tensor accuracy(const Tensor& y_true, const Tensor& y_pred, double) {
    auto [t, p] = losses::detail::squeeze_to_same_rank(y_true, y_pred);
    return f32(equal(t.dtype() == p.dtype() ? t : cast(t, p.dtype()), p));
}

Tensor binary_accuracy(const Tensor& y_true, const Tensor& y_pred, double threshold) {
    auto [t, p] = losses::detail::squeeze_to_same_rank(y_true, y_pred);
    const Tensor predicted = cast(greater(p, scalar_like(p, threshold)), t.dtype());
    return f32(equal(t, predicted));
}

Tensor categorical_accuracy(const Tensor& y_true, const Tensor& y_pred, double) {
    return f32(equal(argmax(y_true, -1), argmax(y_pred, -1)));
}

Tensor sparse_categorical_accuracy(const Tensor& y_true, const Tensor& y_pred, double) {
    Tensor t = y_true;
    if (t.rank() == y_pred.rank() && t.rank() > 0 && t.shape()[-1] == 1)
        t = squeeze(t, Axes(int64_t{-1}));
    return f32(equal(t.dtype() == DType::int64 ? t : cast(t, DType::int64), argmax(y_pred, -1)));
}

}  // namespace

Metric::Metric(std::string name) : name_(std::move(name)) {}
Metric::~Metric() = default;

// ---- Mean ----

Mean::Mean(std::string name) : Metric(std::move(name)) {}

void Mean::update_state(const Tensor& values, const Tensor& sample_weight) {
    if (!values.defined())
        throw errors::InvalidArgumentError(fmt::format("metric {}: undefined values", name()));
    Tensor v = f32(values);
    if (v.rank() > 1) {
        std::vector<int64_t> rest;
        for (int64_t i = 1; i < v.rank(); ++i)
            rest.push_back(i);
        v = reduce_mean(v, rest);
    }
    if (!sample_weight.defined()) {
        accumulate(total_, reduce_sum(v));
        accumulate(count_, scalar_like(v, static_cast<double>(v.num_elements())));
        return;
    }
    auto [vv, w] = losses::detail::squeeze_to_same_rank(v, f32(sample_weight));
    while (w.rank() < vv.rank())
        w = expand_dims(w, -1);
    if (w.rank() > vv.rank())
        throw errors::InvalidArgumentError(
            fmt::format("metric {}: sample_weight of shape {} does not fit values of shape {}",
                        name(),
                        sample_weight.shape().debug_string(),
                        values.shape().debug_string()));
    w = broadcast_to(w, vv.shape());
    accumulate(total_, reduce_sum(vv * w));
    accumulate(count_, reduce_sum(w));
}

void Mean::update_state(const Tensor&, const Tensor& y_pred, const Tensor& sample_weight) {
    update_state(y_pred, sample_weight);
}

Tensor Mean::result() const {
    return total_.defined() ? divide_no_nan(total_, count_) : constant(0.0f);
}

void Mean::reset_state() {
    total_ = Tensor();
    count_ = Tensor();
}

// ---- accuracies ----

MeanMetricWrapper::MeanMetricWrapper(std::string name, Fn fn, double threshold)
    : Metric(name), fn_(fn), threshold_(threshold), mean_(std::move(name)) {}

void MeanMetricWrapper::update_state(const Tensor& y_true,
                                     const Tensor& y_pred,
                                     const Tensor& sample_weight) {
    check_inputs(name(), y_true, y_pred);
    mean_.update_state(fn_(y_true, y_pred, threshold_), sample_weight);
}

Accuracy::Accuracy(std::string name) : MeanMetricWrapper(std::move(name), accuracy) {}
BinaryAccuracy::BinaryAccuracy(double threshold, std::string name)
    : MeanMetricWrapper(std::move(name), binary_accuracy, threshold) {}
CategoricalAccuracy::CategoricalAccuracy(std::string name)
    : MeanMetricWrapper(std::move(name), categorical_accuracy) {}
SparseCategoricalAccuracy::SparseCategoricalAccuracy(std::string name)
    : MeanMetricWrapper(std::move(name), sparse_categorical_accuracy) {}

// ---- precision and recall ----

ConfusionCounts::ConfusionCounts(std::string name, double threshold)
    : Metric(std::move(name)), threshold_(threshold) {}

void ConfusionCounts::update_state(const Tensor& y_true,
                                   const Tensor& y_pred,
                                   const Tensor& sample_weight) {
    check_inputs(name(), y_true, y_pred);
    auto [t, p] = losses::detail::squeeze_to_same_rank(y_true, y_pred);
    const Tensor predicted = greater(p, scalar_like(p, threshold_));
    const Tensor truth = not_equal(t, zeros_like(t));
    Tensor w = sample_weight.defined() ? f32(sample_weight) : Tensor();
    if (w.defined()) {
        while (w.rank() < p.rank())
            w = expand_dims(w, -1);
        w = broadcast_to(w, p.shape());
    }
    auto count = [&](const Tensor& a, const Tensor& b) {
        const Tensor hits = f32(logical_and(a, b));
        return reduce_sum(w.defined() ? hits * w : hits);
    };
    accumulate(tp_, count(predicted, truth));
    accumulate(fp_, count(predicted, logical_not(truth)));
    accumulate(fn_, count(logical_not(predicted), truth));
}

void ConfusionCounts::reset_state() {
    tp_ = Tensor();
    fp_ = Tensor();
    fn_ = Tensor();
}

Precision::Precision(double threshold, std::string name)
    : ConfusionCounts(std::move(name), threshold) {}

Tensor Precision::result() const {
    const Tensor tp = value_or_zero(tp_);
    return divide_no_nan(tp, tp + value_or_zero(fp_));
}

Recall::Recall(double threshold, std::string name) : ConfusionCounts(std::move(name), threshold) {}

Tensor Recall::result() const {
    const Tensor tp = value_or_zero(tp_);
    return divide_no_nan(tp, tp + value_or_zero(fn_));
}

}  // namespace tapeflow::keras::metrics
