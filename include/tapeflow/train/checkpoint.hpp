// TF2's object-based checkpoints: tf::train::Checkpoint (tf.train.Checkpoint), its load status and
// tf::train::CheckpointManager. Keys and the "_CHECKPOINTABLE_OBJECT_GRAPH" entry are TensorFlow's,
// so checkpoints cross between tapeflow and TensorFlow in both directions (docs/checkpoints.md).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include <tapeflow/autograd/variable.hpp>
#include <tapeflow/core/error.hpp>
#include <tapeflow/core/export.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow::errors {
/// A checked expectation failed: CheckpointLoadStatus::assert_consumed (Python's AssertionError
/// in TensorFlow, which has no status code; tapeflow gives it failed_precondition).
class AssertionError : public OpError {
public:
    explicit AssertionError(const std::string& message, const std::string& op_name = "")
        : OpError(Code::failed_precondition, message, op_name) {}
};
}  // namespace tapeflow::errors

namespace tapeflow {
class Module;
namespace keras::optimizers {
class Optimizer;
}
}  // namespace tapeflow

namespace tapeflow::train {

class Optimizer;

namespace ckpt {
struct RestoreState;
}

/// What a restore matched (tf.train.Checkpoint.restore's status object). Copies share one state:
/// restorations deferred until a variable is created (optimizer slots before the first step)
/// update it when they happen.
class CheckpointLoadStatus {
public:
    /// Every object in the checkpoint that has values was matched and restored (deferred ones
    /// included), and every live variable reachable from the root got a value. Raises
    /// tf::errors::AssertionError naming the first paths that fail.
    const CheckpointLoadStatus& assert_consumed() const;
    /// Every live variable reachable from the root now was matched to a saved value (values the
    /// checkpoint has for objects that do not exist are allowed): FailedPreconditionError.
    const CheckpointLoadStatus& assert_existing_objects_matched() const;
    /// Silences the warning about checkpoint values that were never used.
    const CheckpointLoadStatus& expect_partial() const;

    explicit CheckpointLoadStatus(std::shared_ptr<ckpt::RestoreState> state);

private:
    std::shared_ptr<ckpt::RestoreState> state_;
};

/// tf.train.Checkpoint(model=..., optimizer=...).
///
///     tf::train::Checkpoint ckpt({{"model", model}, {"optimizer", optimizer}});
///     ckpt.save("/tmp/run/ckpt");                 // "/tmp/run/ckpt-1"
///     ckpt.restore("/tmp/run/ckpt-1").assert_consumed();
class Checkpoint {
public:
    using ChildVariant = std::variant<Variable,
                                      std::shared_ptr<Module>,
                                      std::shared_ptr<train::Optimizer>,
                                      std::shared_ptr<keras::optimizers::Optimizer>>;
    /// A child: the variant of the API, plus one conversion it cannot make alone: a Keras
    /// optimizer (std::shared_ptr<tf::keras::optimizers::Adam>) is also a tf::train::Optimizer,
    /// which makes the variant's own conversion ambiguous.
    struct Child : ChildVariant {
        using ChildVariant::ChildVariant;
        template <class O>
        requires std::is_convertible_v<O*, keras::optimizers::Optimizer*> Child(
            std::shared_ptr<O> optimizer)  // NOLINT(google-explicit-constructor): as the variant
            : ChildVariant(std::shared_ptr<keras::optimizers::Optimizer>(std::move(optimizer))) {}
    };
    /// The root's children, saved under these names (TF sorts keyword arguments: so does this).
    explicit Checkpoint(std::vector<std::pair<std::string, Child>> children);
    /// tf.train.Checkpoint(root=module, ...): `root` itself is the root of the object graph (as in
    /// a SavedModel's variables/), `children` are added to it.
    explicit Checkpoint(std::shared_ptr<Module> root,
                        std::vector<std::pair<std::string, Child>> children = {});
    ~Checkpoint();
    Checkpoint(const Checkpoint&) = delete;
    Checkpoint& operator=(const Checkpoint&) = delete;

    /// Increments save_counter, writes "<file_prefix>-<save_counter>" and the directory's
    /// "checkpoint" state file; returns the prefix written.
    std::string save(const std::string& file_prefix);
    /// Writes exactly `file_prefix` (no counter, no state file); returns it.
    std::string write(const std::string& file_prefix);
    /// read() that also accepts a directory (its latest checkpoint).
    CheckpointLoadStatus restore(const std::string& save_path);
    /// Restores from the prefix `save_path` by the saved object graph: NotFoundError for a
    /// checkpoint without one, DataLossError for a corrupt one, InvalidArgumentError naming the
    /// path for a shape or dtype mismatch (nothing is assigned then).
    CheckpointLoadStatus read(const std::string& save_path);
    /// The int64 scalar "save_counter" (created on first use, as TensorFlow does).
    Variable save_counter() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

/// tf.train.CheckpointManager: numbered checkpoints in `directory`, the oldest deleted beyond
/// max_to_keep (nullopt: keep all) unless keep_checkpoint_every_n_hours keeps them.
class CheckpointManager {
public:
    CheckpointManager(Checkpoint& checkpoint,
                      std::string directory,
                      std::optional<int> max_to_keep,
                      std::optional<double> keep_checkpoint_every_n_hours = {},
                      std::string checkpoint_name = "ckpt");
    /// Writes "<directory>/<checkpoint_name>-<n>", n = checkpoint_number or else the checkpoint's
    /// incremented save_counter; updates the state file, deletes what falls out; returns the
    /// prefix.
    std::string save(std::optional<int64_t> checkpoint_number = {});
    std::optional<std::string> latest_checkpoint() const;
    /// The managed checkpoints, oldest first.
    std::vector<std::string> checkpoints() const;
    /// Restores the latest checkpoint and returns it, or returns nullopt when there is none.
    std::optional<std::string> restore_or_initialize();

private:
    void sweep();
    void write_state() const;

    Checkpoint& checkpoint_;
    std::string directory_;
    std::optional<int> max_to_keep_;
    std::optional<double> keep_every_n_hours_;
    std::string name_;
    std::string prefix_;
    std::vector<std::pair<std::string, double>> checkpoints_;  // prefix, Unix time saved
    std::optional<std::string> latest_;
    double last_preserved_ = 0;
};

}  // namespace tapeflow::train

TAPEFLOW_API_END
