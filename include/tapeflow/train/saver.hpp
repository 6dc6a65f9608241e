// Checkpoints: tf::train::Saver writes variables in TensorFlow's checkpoint format (or one
// safetensors file) per save (atomically), keeps the directory's "checkpoint" state file and the
// last max_to_keep checkpoints; restore() checks every name, shape, dtype and CRC before changing
// anything.
// Format and names: docs/checkpoints.md.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <tapeflow/autograd/variable.hpp>
#include <tapeflow/core/export.hpp>
#include <tapeflow/core/shape.hpp>
#include <tapeflow/core/tensor.hpp>
#include <tapeflow/train/checkpoint_reader.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow::train {

struct SaverOptions {
    /// How many of this Saver's checkpoints to keep; older files are deleted after each save.
    /// 0 (or less) keeps all of them.
    int max_to_keep = 5;
    /// TensorFlow's tensor_bundle ("<prefix>.index" + "<prefix>.data-00000-of-00001", what
    /// tf.train.Saver and tf.train.load_checkpoint use, with TF1's keys for optimizer slots and
    /// state), or one safetensors file "<prefix>.safetensors". Restoring reads either.
    CheckpointFormat format = CheckpointFormat::tensorflow;
    /// Writes in the background (TensorFlow's CheckpointOptions(enable_async=True), PyTorch's
    /// async_save): save() copies the variables' values to host memory and returns; a background
    /// thread then writes the file (temporary file, fsync, rename), and only after that updates
    /// the state file and deletes old checkpoints, so latest_checkpoint() never names a file that
    /// is not complete and durable. One save runs at a time: the next save(), wait(), restore() and
    /// the destructor wait for it; a failure is raised by the next save() or wait().
    bool async = false;
};

struct PendingRestore;  // internal (lib/train/checkpoint/pending_restore.hpp)
struct BackgroundSave;  // internal (lib/train/checkpoint/saver.cpp)

/// Saves and restores variables.
///
///     tf::train::Saver saver;                                   // every global variable
///     std::string prefix = saver.save("ckpt/model", step);      // "ckpt/model-<step>"
///     saver.restore(*tf::train::latest_checkpoint("ckpt"));
///
/// The default Saver covers every live variable at the time of each save/restore (weights,
/// optimizer slots and state, EMA shadows, the global step). Its restore() also restores variables
/// created later, as long as the Saver lives: optimizer slots appear at the first update and then
/// take their checkpointed values (TensorFlow 2's deferred restoration). Savers built from a list
/// or a map cover exactly those variables (the map's keys are the names in the file).
class Saver {
public:
    Saver(SaverOptions options = {});
    Saver(std::vector<Variable> var_list, SaverOptions options = {});
    Saver(std::map<std::string, Variable> named, SaverOptions options = {});
    ~Saver();
    Saver(Saver&&) noexcept;
    Saver& operator=(Saver&&) noexcept;
    Saver(const Saver&) = delete;
    Saver& operator=(const Saver&) = delete;

    /// Writes the checkpoint "<save_path>-<step>" ("<save_path>" without a step: its ".index" and
    /// ".data-00000-of-00001" files, or its ".safetensors" file) with temporary files, fsync and
    /// rename, then the "checkpoint" state file of its directory, then deletes checkpoints beyond
    /// max_to_keep. Returns the prefix. With SaverOptions::async the writing happens in the
    /// background (see there). In TensorFlow's format a variable is saved under TF1's key: its
    /// name, but tf::train optimizers' slots and state take TF1's keys ("w/Adam", "w/Adam_1",
    /// "beta1_power"; docs/checkpoints.md).
    std::string save(const std::string& save_path, std::optional<int64_t> global_step = {});
    /// Blocks until the last save() is durable and named by the state file; raises its error, if
    /// it failed. Returns at once for synchronous Savers.
    void wait();
    /// Restores from a prefix (either format, detected from the files), a ".index" or a
    /// ".safetensors" file name. NotFoundError (file or variable
    /// missing), InvalidArgumentError (shape or dtype differs), DataLossError (corrupt file), each
    /// naming the variable or file; on any error no variable changes.
    void restore(const std::string& save_path);
    /// This Saver's checkpoints (prefixes), oldest first.
    std::vector<std::string> last_checkpoints() const;
    /// Adopts existing checkpoints (prefixes, oldest first) as this Saver's, so that max_to_keep
    /// also deletes them (TensorFlow's recover_last_checkpoints; a resumed job uses it). Prefixes
    /// whose file no longer exists are dropped.
    void recover_last_checkpoints(const std::vector<std::string>& prefixes);

private:
    /// (key in the file, variable): TF1 keys for the TensorFlow format, names for safetensors.
    std::vector<std::pair<std::string, Variable>> targets(bool tf_keys) const;
    void finish_quietly() noexcept;  // wait(), logging a failure instead of raising it

    enum class Mode { all_globals, list, named };
    Mode mode_;
    std::vector<Variable> list_;
    std::map<std::string, Variable> named_;
    SaverOptions options_;
    std::vector<std::string> last_;
    std::shared_ptr<PendingRestore> pending_;
    std::unique_ptr<BackgroundSave> in_flight_;  // the running async save, if any
};

/// The prefix of the newest checkpoint named by "<dir>/checkpoint", or nullopt when there is no
/// state file or its checkpoint file is missing.
std::optional<std::string> latest_checkpoint(const std::string& dir);

/// Name -> (shape, dtype) of every tensor in a checkpoint (a prefix of either format, a ".index" or
/// ".safetensors" file, or a directory: its latest checkpoint). Tensors of dtypes tapeflow lacks
/// (strings) raise UnimplementedError.
std::map<std::string, std::pair<Shape, DType>> list_variables(const std::string& path);

/// One tensor of a checkpoint, CRC-checked (NotFoundError when it has no tensor `name`).
Tensor load_variable(const std::string& path, const std::string& name);

/// The global step a checkpoint was saved with ("global_step" in a safetensors file's metadata, the
/// scalar "global_step" tensor of a TensorFlow checkpoint, else the "-<step>" that save() appended
/// to the prefix), if any.
std::optional<int64_t> checkpoint_global_step(const std::string& path);

}  // namespace tapeflow::train

TAPEFLOW_API_END
