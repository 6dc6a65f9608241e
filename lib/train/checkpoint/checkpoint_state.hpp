// The directory's "checkpoint" state file in TensorFlow's text format:
//     model_checkpoint_path: "model.ckpt-200"
//     all_model_checkpoint_paths: "model.ckpt-100"
//     all_model_checkpoint_paths: "model.ckpt-200"
// Paths inside the directory are stored relative to it, as TensorFlow does.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace tapeflow::train::ckpt {

struct CheckpointState {
    std::string model_checkpoint_path;  // as resolved: joined with the directory
    std::vector<std::string> all_model_checkpoint_paths;
    // What tf.train.CheckpointManager records (Unix seconds), parallel to the paths.
    std::vector<double> all_model_checkpoint_timestamps;
    std::optional<double> last_preserved_timestamp;
};

/// The state file of `dir`, paths joined with `dir`; nullopt when there is none. DataLossError
/// when it cannot be parsed.
std::optional<CheckpointState> read_checkpoint_state(const std::string& dir);

/// Writes the state file atomically; the timestamps fields only when given (as TensorFlow).
void write_checkpoint_state(const std::string& dir,
                            const std::string& latest,
                            const std::vector<std::string>& all,
                            const std::vector<double>& all_timestamps = {},
                            std::optional<double> last_preserved_timestamp = {});

/// The directory part of a checkpoint prefix ("" for a bare name).
std::string prefix_dir(const std::string& prefix);

}  // namespace tapeflow::train::ckpt
