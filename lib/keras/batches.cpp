// Batches for Model.fit / evaluate / predict: row slices of tensors (gathers when shuffled) and
// passes over a tf::data pipeline.
#include "keras/batches.hpp"

#include <algorithm>

#include <fmt/format.h>

#include <tapeflow/core/error.hpp>
#include <tapeflow/ops/array.hpp>
#include <tapeflow/ops/creation.hpp>
#include <tapeflow/ops/math.hpp>
#include <tapeflow/random.hpp>

namespace tapeflow::keras::detail {

void LossTracker::add(const Tensor& loss, const Tensor& x) {
    const double n = x.rank() > 0 ? static_cast<double>(x.shape()[0]) : 1.0;
    const Tensor weighted =
        (loss.dtype() == DType::float32 ? loss : cast(loss, DType::float32)) * n;
    total = total.defined() ? total + weighted : weighted;
    count += n;
}

double LossTracker::mean() const {
    return total.defined() ? total.item<double>() / count : 0.0;
}

callbacks::Logs logs_of(const LossTracker& tracker,
                        const std::vector<std::shared_ptr<metrics::Metric>>& metrics) {
    callbacks::Logs logs{{"loss", tracker.mean()}};
    for (const auto& m : metrics)
        logs[m->name()] = m->result().item<double>();
    return logs;
}

Tensor rows(const Tensor& t, int64_t begin, int64_t count) {
    if (!t.defined()) return t;
    std::vector<int64_t> start(static_cast<std::size_t>(t.rank()), 0), size(start.size(), -1);
    start[0] = begin;
    size[0] = count;
    return slice(t, start, size);
}

TensorBatches::TensorBatches(const std::string& model,
                             std::vector<Tensor> components,
                             int64_t batch_size)
    : components_(std::move(components)), batch_size_(batch_size) {
    if (batch_size <= 0)
        throw errors::InvalidArgumentError(
            fmt::format("Model \"{}\": batch_size must be positive, got {}", model, batch_size));
    const char* names[] = {"x", "y", "sample_weight"};
    for (std::size_t i = 0; i < components_.size(); ++i) {
        const Tensor& c = components_[i];
        if (!c.defined()) {
            if (i < 2)
                throw errors::InvalidArgumentError(
                    fmt::format("Model \"{}\": {} is an undefined tensor", model, names[i]));
            continue;
        }
        if (c.rank() < 1)
            throw errors::InvalidArgumentError(fmt::format(
                "Model \"{}\": {} must have a batch dimension, got a scalar", model, names[i]));
        if (i == 0) rows_ = c.shape()[0];
        if (c.shape()[0] != rows_)
            throw errors::InvalidArgumentError(fmt::format(
                "Model \"{}\": x has {} samples but {} has {} (shapes {} and {}); give every "
                "input one row per sample",
                model,
                rows_,
                names[std::min<std::size_t>(i, 2)],
                c.shape()[0],
                components_[0].shape().debug_string(),
                c.shape().debug_string()));
    }
}

void TensorBatches::shuffle() {
    order_ = random::shuffle(range(0, static_cast<double>(rows_), 1, DType::int64));
    const Device device = components_[0].device();
    if (order_.device() != device) order_ = order_.to(device);
}

bool TensorBatches::next(std::vector<Tensor>& batch) {
    if (position_ >= rows_) {
        position_ = 0;
        return false;
    }
    const int64_t count = std::min(batch_size_, rows_ - position_);
    batch.clear();
    if (order_.defined()) {
        const Tensor index = slice(order_, {position_}, {count});
        for (const Tensor& c : components_)
            batch.push_back(c.defined() ? gather(c, index) : c);
    } else {
        for (const Tensor& c : components_)
            batch.push_back(detail::rows(c, position_, count));
    }
    position_ += count;
    return true;
}

DatasetBatches::DatasetBatches(std::string model, data::Dataset<std::vector<Tensor>> data)
    : model_(std::move(model)), data_(std::move(data)) {}

bool DatasetBatches::next(std::vector<Tensor>& batch) {
    if (!it_) it_.emplace(data_.begin());
    if (*it_ == data_.end()) {
        it_.reset();
        return false;
    }
    batch = **it_;
    ++*it_;
    if (batch.size() != 2 && batch.size() != 3)
        throw errors::InvalidArgumentError(fmt::format(
            "Model \"{}\": a dataset element must be [x, y] or [x, y, sample_weight], got {} "
            "tensors",
            model_,
            batch.size()));
    return true;
}

}  // namespace tapeflow::keras::detail
