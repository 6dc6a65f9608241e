// TF1's batching input functions (tf.compat.v1.train.batch and shuffle_batch) with their argument
// names, as thin wrappers over tf::data: a queue of `capacity` filled by `num_threads` enqueue
// threads becomes a shuffle buffer (shuffle_batch) and a read-ahead of the batches. Read the result
// with make_one_shot_iterator().get_next(), which raises OutOfRangeError at the end of input, as
// the queue's dequeue did. docs/coming-from-tensorflow.md maps the whole queue API.
#pragma once

#include <cstdint>
#include <optional>

#include <tapeflow/core/export.hpp>
#include <tapeflow/data.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow::train {

struct BatchOptions {
    int64_t batch_size;
    /// Enqueue threads: this many batches are assembled ahead of the consumer.
    int num_threads = 1;
    int64_t capacity = 32;
    /// TF1's default false drops the last, smaller batch.
    bool allow_smaller_final_batch = false;
};

struct ShuffleBatchOptions {
    int64_t batch_size;
    /// Elements the queue holds: the shuffle buffer (elements are drawn uniformly from it).
    int64_t capacity;
    /// TF1's lower bound on the queue's fill before a dequeue; must be below capacity.
    int64_t min_after_dequeue;
    int num_threads = 1;
    std::optional<uint64_t> seed = {};
    bool allow_smaller_final_batch = false;
};

/// tf.compat.v1.train.batch: `batch_size` consecutive elements stacked per batch.
template <class T>
auto batch(const data::Dataset<T>& elements, const BatchOptions& options) {
    data::detail::check_argument(
        options.num_threads >= 1, "num_threads", options.num_threads, ">= 1");
    return elements.batch(options.batch_size, !options.allow_smaller_final_batch)
        .prefetch(options.num_threads);
}

/// tf.compat.v1.train.shuffle_batch: batches of elements drawn at random from a buffer of
/// `capacity` elements.
template <class T>
auto shuffle_batch(const data::Dataset<T>& elements, const ShuffleBatchOptions& options) {
    data::detail::check_argument(options.min_after_dequeue < options.capacity,
                                 "min_after_dequeue",
                                 options.min_after_dequeue,
                                 "< capacity");
    data::detail::check_argument(
        options.num_threads >= 1, "num_threads", options.num_threads, ">= 1");
    return elements.shuffle(options.capacity, options.seed)
        .batch(options.batch_size, !options.allow_smaller_final_batch)
        .prefetch(options.num_threads);
}

}  // namespace tapeflow::train

TAPEFLOW_API_END
