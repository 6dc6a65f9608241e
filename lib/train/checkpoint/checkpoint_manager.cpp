// tf::train::CheckpointManager, as TensorFlow's checkpoint_management.py: numbered saves through
// Checkpoint::write, the state file with all_model_checkpoint_paths and their timestamps, and the
// sweep that deletes the oldest beyond max_to_keep unless keep_checkpoint_every_n_hours keeps one
// per interval (kept ones leave the state file, as in TF, so that it does not grow forever).
#include <algorithm>
#include <chrono>
#include <filesystem>

#include <fmt/format.h>

#include <tapeflow/core/error.hpp>
#include <tapeflow/ops/creation.hpp>
#include <tapeflow/train/checkpoint.hpp>

#include "train/checkpoint/checkpoint_state.hpp"
#include "train/checkpoint/tensor_bundle.hpp"

namespace tapeflow::train {
namespace {

namespace fs = std::filesystem;

double now_seconds() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

// "<prefix>.index" and every "<prefix>.data-NNNNN-of-MMMMM".
void delete_checkpoint_files(const std::string& prefix) {
    std::error_code ec;
    fs::remove(ckpt::bundle::index_file_name(prefix), ec);
    const fs::path p(prefix);
    const fs::path dir = p.parent_path().empty() ? fs::path(".") : p.parent_path();
    const std::string stem = p.filename().string() + ".data-";
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
        const std::string name = entry.path().filename().string();
        if (name.starts_with(stem) && name.size() == stem.size() + 14 &&
            name.compare(stem.size() + 5, 4, "-of-") == 0)
            fs::remove(entry.path(), ec);
    }
}

}  // namespace

CheckpointManager::CheckpointManager(Checkpoint& checkpoint,
                                     std::string directory,
                                     std::optional<int> max_to_keep,
                                     std::optional<double> keep_checkpoint_every_n_hours,
                                     std::string checkpoint_name)
    : checkpoint_(checkpoint),
      directory_(std::move(directory)),
      max_to_keep_(max_to_keep),
      keep_every_n_hours_(keep_checkpoint_every_n_hours),
      name_(std::move(checkpoint_name)) {
    if (directory_.empty())
        throw errors::InvalidArgumentError("CheckpointManager: the directory is empty");
    if (max_to_keep_ && *max_to_keep_ <= 0) {
        throw errors::InvalidArgumentError(fmt::format(
            "CheckpointManager: expected a positive max_to_keep or none, got {}", *max_to_keep_));
    }
    if (keep_every_n_hours_ && !(*keep_every_n_hours_ > 0)) {
        throw errors::InvalidArgumentError(
            fmt::format("CheckpointManager: keep_checkpoint_every_n_hours must be positive, got {}",
                        *keep_every_n_hours_));
    }
    prefix_ = (fs::path(directory_) / name_).string();
    const double now = now_seconds();
    last_preserved_ = now;
    // Pick up what an earlier run recorded, so that its checkpoints are swept too (TF's rule:
    // only those newer than the last preserved one; a Saver's state has no timestamps, so its
    // checkpoints are left alone).
    if (const auto state = ckpt::read_checkpoint_state(directory_)) {
        latest_ = state->model_checkpoint_path;
        last_preserved_ = std::min(state->last_preserved_timestamp.value_or(0.0), now);
        const auto& paths = state->all_model_checkpoint_paths;
        const auto& stamps = state->all_model_checkpoint_timestamps;
        for (std::size_t i = 0; i < paths.size(); ++i) {
            const double t = std::min(i < stamps.size() ? stamps[i] : last_preserved_, now);
            if (t > last_preserved_) checkpoints_.emplace_back(paths[i], t);
        }
    }
}

std::string CheckpointManager::save(std::optional<int64_t> checkpoint_number) {
    Variable counter = checkpoint_.save_counter();
    counter.assign_add(constant(int64_t{1}));
    const int64_t number = checkpoint_number ? *checkpoint_number : counter.value().item<int64_t>();
    const std::string path = checkpoint_.write(fmt::format("{}-{}", prefix_, number));
    // A path saved again moves to the end of the queue.
    std::erase_if(checkpoints_, [&](const auto& c) { return c.first == path; });
    checkpoints_.emplace_back(path, now_seconds());
    latest_ = path;
    // The state names the new checkpoint before anything is deleted (a crash while deleting still
    // finds it), and once more without the deleted ones.
    write_state();
    sweep();
    write_state();
    return path;
}

void CheckpointManager::sweep() {
    if (!max_to_keep_) return;
    while (checkpoints_.size() > static_cast<std::size_t>(*max_to_keep_)) {
        const auto [path, stamp] = checkpoints_.front();
        checkpoints_.erase(checkpoints_.begin());
        if (keep_every_n_hours_ && stamp - *keep_every_n_hours_ * 3600.0 >= last_preserved_) {
            last_preserved_ = stamp;  // kept on disk, no longer listed
            continue;
        }
        delete_checkpoint_files(path);
    }
}

void CheckpointManager::write_state() const {
    std::vector<std::string> paths;
    std::vector<double> stamps;
    for (const auto& [path, stamp] : checkpoints_) {
        paths.push_back(path);
        stamps.push_back(stamp);
    }
    ckpt::write_checkpoint_state(directory_, latest_.value_or(""), paths, stamps, last_preserved_);
}

std::optional<std::string> CheckpointManager::latest_checkpoint() const {
    return latest_;
}

std::vector<std::string> CheckpointManager::checkpoints() const {
    std::vector<std::string> out;
    for (const auto& c : checkpoints_)
        out.push_back(c.first);
    return out;
}

std::optional<std::string> CheckpointManager::restore_or_initialize() {
    if (!latest_) return std::nullopt;
    checkpoint_.restore(*latest_);
    return latest_;
}

}  // namespace tapeflow::train
