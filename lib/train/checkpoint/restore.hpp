// Restoring variables from an open checkpoint: all-or-nothing for the live variables, and deferred
// restore (a variable-creation observer) for names the checkpoint holds that no live variable has
// yet — optimizer slots and EMA shadows created at the first update after a restore.
#pragma once

#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <tapeflow/autograd/variable.hpp>

#include "train/checkpoint/checkpoint_file.hpp"

namespace tapeflow::train {

/// Armed deferred restores; disarmed when destroyed.
struct PendingRestore {
    std::shared_ptr<ckpt::CheckpointReader> reader;
    std::mutex mutex;
    std::set<std::string> names;  // not restored yet (TF1 keys in a TensorFlow checkpoint)
    int64_t observer_id = 0;
    ~PendingRestore();
};

namespace ckpt {

struct RestoreOutcome {
    std::vector<std::string> not_in_checkpoint;  // targets the checkpoint lacks (non-strict)
    std::vector<std::string> not_live;           // checkpoint names no target has
};

/// Checks every target (name in the file, variable) against the checkpoint — NotFoundError for a
/// missing name when `strict`, InvalidArgumentError for a dtype or shape mismatch — reads and
/// CRC-checks all their tensors, and only then assigns them.
RestoreOutcome restore_variables(const CheckpointReader& reader,
                                 const std::vector<std::pair<std::string, Variable>>& targets,
                                 bool strict);

/// Arms a deferred restore of `names` from `reader`; nullptr when `names` is empty.
std::shared_ptr<PendingRestore> defer_restore(std::shared_ptr<CheckpointReader> reader,
                                              const std::vector<std::string>& names);

/// The checkpoint a user path names: a directory's latest checkpoint (its prefix), else `path`
/// (a prefix or a file name, for CheckpointReader::open_any).
std::string resolve_checkpoint(const std::string& path);

}  // namespace ckpt
}  // namespace tapeflow::train
