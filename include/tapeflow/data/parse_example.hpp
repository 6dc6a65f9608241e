// tf.io.parse_example for a batch of serialized tf.train.Example records: each fixed-length
// feature becomes one tensor [batch, shape...]. The vectorized form tf.data recommends
// (batch the records, then map(parse_example)): no per-record tensors and no stacking.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <tapeflow/core/export.hpp>
#include <tapeflow/core/tensor.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow::io {

/// A feature every record holds with exactly shape.num_elements() values (tf.io.FixedLenFeature).
/// dtype: float32 (a float_list) or int64 (an int64_list). Without a default, a record that
/// lacks the feature is an InvalidArgumentError; with one, the default fills it.
struct FixedLenFeature {
    std::string name;
    Shape shape;
    DType dtype = DType::float32;
    std::optional<std::vector<double>> default_value = {};
};

/// Parses `serialized` Examples into one tensor per feature, of shape [records, shape...], in
/// the order of `features`.
///
///     auto ds = tf::data::TFRecordDataset(files).batch(256).map([](const auto& records) {
///         return tf::io::parse_example(records, {{"x", {4}}, {"label", {}, tf::int64}});
///     });
///
/// A record that is not an Example, or whose feature has another kind or number of values,
/// raises InvalidArgumentError naming the feature and the record's index in the batch.
std::vector<Tensor> parse_example(const std::vector<std::string>& serialized,
                                  const std::vector<FixedLenFeature>& features);

/// tf.io.parse_single_example: one record's features, each of its FixedLenFeature's shape (no
/// batch axis); errors as parse_example's.
std::vector<Tensor> parse_single_example(const std::string& serialized,
                                         const std::vector<FixedLenFeature>& features);

}  // namespace tapeflow::io

TAPEFLOW_API_END
