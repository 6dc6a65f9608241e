// Internal to Model: batches of tensors (sliced, or gathered in a shuffled order), batches from a
// tf::data pipeline, the batch-size-weighted loss mean and the logs read from them.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <tapeflow/keras/model.hpp>

namespace tapeflow::keras::detail {

/// FailedPreconditionError ("You must call compile() before fit ...") unless compiled.
void require_compiled(const Model& model, std::string_view what);

/// Keras' loss tracker: the mean of the batches' losses weighted by their sizes, summed on the
/// device (read only when logged).
struct LossTracker {
    Tensor total;
    double count = 0;
    void add(const Tensor& loss, const Tensor& x);
    double mean() const;
};

/// {"loss": the tracker's mean, "<metric>": each result}, read from the device.
callbacks::Logs logs_of(const LossTracker& tracker,
                        const std::vector<std::shared_ptr<metrics::Metric>>& metrics);

/// Consecutive batches of the rows of `components` (undefined ones stay undefined); checks that
/// their first dimensions agree and batch_size > 0 (InvalidArgumentError naming the model).
class TensorBatches {
public:
    TensorBatches(const std::string& model, std::vector<Tensor> components, int64_t batch_size);
    /// The next pass visits the rows in a new random order (tf::random, so set_seed fixes it).
    void shuffle();
    /// The next batch; false (and rewound) at the end of a pass.
    bool next(std::vector<Tensor>& batch);
    int64_t rows() const { return rows_; }
    int64_t steps() const { return (rows_ + batch_size_ - 1) / batch_size_; }

private:
    std::vector<Tensor> components_;
    int64_t batch_size_, rows_ = 0, position_ = 0;
    Tensor order_;  // undefined: in order
};

/// One pass over a dataset of [x, y] or [x, y, sample_weight] per call sequence; restarts after
/// returning false.
class DatasetBatches {
public:
    DatasetBatches(std::string model, data::Dataset<std::vector<Tensor>> data);
    bool next(std::vector<Tensor>& batch);

private:
    std::string model_;
    data::Dataset<std::vector<Tensor>> data_;
    std::optional<data::Dataset<std::vector<Tensor>>::Iterator> it_;
};

/// Rows [begin, begin + count) of t (undefined stays undefined).
Tensor rows(const Tensor& t, int64_t begin, int64_t count);

}  // namespace tapeflow::keras::detail
