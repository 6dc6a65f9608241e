// Reading TensorFlow's own checkpoints (the tensor_bundle format: "<prefix>.index" plus
// "<prefix>.data-NNNNN-of-MMMMM"), as tf.train.load_checkpoint / NewCheckpointReader do.
// Format and names: docs/interchange.md.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <tapeflow/core/dtype.hpp>
#include <tapeflow/core/export.hpp>
#include <tapeflow/core/shape.hpp>
#include <tapeflow/core/tensor.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow::train {

/// The file formats of checkpoints: TensorFlow's tensor_bundle, or tapeflow's safetensors files.
enum class CheckpointFormat { tensorflow, safetensors };

/// Reads a TensorFlow checkpoint written by TensorFlow (any version since the V2 format: plain or
/// Snappy-compressed index blocks, any number of data shards) or by tapeflow.
///
///     auto reader = tf::train::load_checkpoint("export/variables/variables");
///     for (const auto& [key, shape] : reader.get_variable_to_shape_map()) ...
///     tf::Tensor a = reader.get_tensor("a");
///
/// The index is read and fully checked (block CRCs, magic number, every entry) on construction;
/// get_tensor reads one tensor and checks its CRC-32C. int8 and int16 tensors are read as int32
/// (exactly); string tensors with get_tensor_bytes. Copies share the open files; thread-safe.
class CheckpointReader {
public:
    /// `prefix_or_dir`: a checkpoint prefix ("dir/model.ckpt-100", a trailing ".index" is
    /// accepted), or a directory (its latest checkpoint, from the "checkpoint" state file).
    /// NotFoundError when there is no such checkpoint or a data shard is missing, DataLossError
    /// for a corrupt index, UnimplementedError for big-endian or too-new bundles.
    explicit CheckpointReader(const std::string& prefix_or_dir);

    /// The checkpoint's prefix.
    const std::string& prefix() const;
    /// Every key's shape (including string tensors and the object graph).
    std::map<std::string, Shape> get_variable_to_shape_map() const;
    /// The dtype get_tensor returns for each key it can read (strings and types tapeflow lacks,
    /// such as uint16, are left out: see dtype_name).
    std::map<std::string, DType> get_variable_to_dtype_map() const;
    /// TensorFlow's name of the stored dtype of `key` ("float32", "int8", "string", ...).
    std::string dtype_name(const std::string& key) const;
    bool has_tensor(const std::string& key) const;
    /// The tensor (CPU). NotFoundError naming the key and the file when it is not there,
    /// DataLossError naming the key on a CRC or size mismatch, UnimplementedError for strings
    /// (use get_tensor_bytes), partitioned variables and dtypes tapeflow lacks.
    Tensor get_tensor(const std::string& key) const;
    /// The elements (row-major) of a string tensor, e.g. "_CHECKPOINTABLE_OBJECT_GRAPH" (a
    /// serialized TrackableObjectGraph). InvalidArgumentError for a tensor of another dtype.
    std::vector<std::string> get_tensor_bytes(const std::string& key) const;

    struct Impl;

private:
    std::shared_ptr<const Impl> impl_;
};

/// tf.train.load_checkpoint.
CheckpointReader load_checkpoint(const std::string& prefix_or_dir);

}  // namespace tapeflow::train

TAPEFLOW_API_END
