// tf::train::Saver and the checkpoint helpers: which variables, save (file, state file,
// max_to_keep, stale temporary files), restore (strict for explicit lists, deferred for the default
// Saver).
#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <exception>
#include <filesystem>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <unistd.h>

#include <tapeflow/core/error.hpp>
#include <tapeflow/core/logging.hpp>
#include <tapeflow/distribute.hpp>
#include <tapeflow/train/saver.hpp>

#include "autograd/variable_observers.hpp"
#include "distribute/wire.hpp"
#include "io/file_util.hpp"
#include "train/checkpoint/checkpoint_state.hpp"
#include "train/checkpoint/restore.hpp"

namespace tapeflow::train {
namespace {

namespace fs = std::filesystem;

// Temporary files of saves killed midway ("<file>.tmp.<pid>" of a process that no longer runs).
void remove_stale_temporaries(const std::string& dir, const std::string& stem) {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir.empty() ? "." : dir, ec)) {
        const std::string name = entry.path().filename().string();
        const std::size_t tmp = name.rfind(".tmp.");
        if (!(name.starts_with(stem) || name.starts_with("checkpoint.")) ||
            tmp == std::string::npos)
            continue;
        const std::string pid_text = name.substr(tmp + 5);
        if (pid_text.empty() || pid_text.size() > 9 ||
            !std::all_of(pid_text.begin(), pid_text.end(), ::isdigit))
            continue;
        const pid_t pid = static_cast<pid_t>(std::stol(pid_text));
        if (pid == ::getpid() || (::kill(pid, 0) != 0 && errno == ESRCH))
            fs::remove(entry.path(), ec);
    }
}

}  // namespace

Saver::Saver(SaverOptions options) : mode_(Mode::all_globals), options_(options) {}

Saver::Saver(std::vector<Variable> var_list, SaverOptions options)
    : mode_(Mode::list), list_(std::move(var_list)), options_(options) {
    std::set<std::string> names;
    for (const Variable& v : list_) {
        if (!v.defined())
            throw errors::InvalidArgumentError("Saver: a variable handle in var_list is empty");
        if (!names.insert(v.name()).second) {
            throw errors::InvalidArgumentError(
                fmt::format("Saver: variable '{}' appears twice in var_list", v.name()));
        }
    }
}

Saver::Saver(std::map<std::string, Variable> named, SaverOptions options)
    : mode_(Mode::named), named_(std::move(named)), options_(options) {
    for (const auto& [name, v] : named_) {
        if (!v.defined())
            throw errors::InvalidArgumentError(
                fmt::format("Saver: the variable for '{}' is empty", name));
    }
}

// An async save's thread and what it failed with.
struct BackgroundSave {
    std::thread thread;
    std::exception_ptr error;
    std::vector<std::string> previous;  // the Saver's list before this save, restored if it fails
};

void Saver::finish_quietly() noexcept {
    try {
        wait();
    } catch (const std::exception& e) {  // no caller to raise it to: say so instead
        logging::error("Saver: the last asynchronous save failed: {}", e.what());
    }
}

Saver::~Saver() {
    finish_quietly();
}

Saver::Saver(Saver&&) noexcept = default;

Saver& Saver::operator=(Saver&& other) noexcept {
    if (this != &other) {
        finish_quietly();  // this Saver's own save first (a running thread must be joined)
        mode_ = other.mode_;
        list_ = std::move(other.list_);
        named_ = std::move(other.named_);
        options_ = other.options_;
        last_ = std::move(other.last_);
        pending_ = std::move(other.pending_);
        in_flight_ = std::move(other.in_flight_);
    }
    return *this;
}

std::vector<std::pair<std::string, Variable>> Saver::targets(bool tf_keys) const {
    std::vector<std::pair<std::string, Variable>> out;
    auto key = [tf_keys](const Variable& v) {
        return tf_keys ? detail::checkpoint_key(v) : v.name();
    };
    switch (mode_) {
        case Mode::all_globals:
            for (const Variable& v : global_variables())
                out.emplace_back(key(v), v);
            break;
        case Mode::list:
            for (const Variable& v : list_)
                out.emplace_back(key(v), v);
            break;
        case Mode::named:
            for (const auto& [name, v] : named_)
                out.emplace_back(name, v);
            break;
    }
    return out;
}

namespace {

// A host copy the background thread owns: later updates of the variable cannot reach it.
Tensor staged_copy(const Tensor& value) {
    Tensor host = value.cpu();
    if (host.impl() != value.impl()) return host;  // a device tensor: cpu() made the copy
    Tensor copy = Tensor::empty(value.shape(), value.dtype());
    const auto nbytes = static_cast<std::size_t>(value.num_elements()) * dtype_size(value.dtype());
    if (nbytes > 0) std::memcpy(copy.mutable_raw_data(), value.raw_data(), nbytes);
    return copy;
}

// Writes the checkpoint file, then the state file naming it, then deletes the expired ones: the
// state file never names a missing or partial checkpoint.
void commit_checkpoint(const std::string& save_path,
                       const std::string& prefix,
                       const std::vector<std::pair<std::string, Tensor>>& tensors,
                       std::optional<int64_t> global_step,
                       CheckpointFormat format,
                       const std::vector<std::string>& kept,
                       const std::vector<std::string>& expired) {
    const std::string dir = ckpt::prefix_dir(prefix);
    ckpt::write_checkpoint(prefix, tensors, global_step, format);
    ckpt::write_checkpoint_state(dir, prefix, kept);
    for (const std::string& old : expired)
        ckpt::remove_checkpoint(old);
    remove_stale_temporaries(dir, fs::path(save_path).filename().string());
}

}  // namespace

std::string Saver::save(const std::string& save_path, std::optional<int64_t> global_step) {
    wait();  // one save at a time, in order; raises an earlier async save's failure
    if (save_path.empty()) throw errors::InvalidArgumentError("Saver.save: save_path is empty");
    const std::string prefix =
        global_step ? fmt::format("{}-{}", save_path, *global_step) : save_path;
    // Distributed training: only the chief writes (docs/distributed.md, Checkpoints).
    if (!distribute::is_chief()) return prefix;
    io::make_dirs(ckpt::prefix_dir(prefix));
    const bool tf_keys = options_.format == CheckpointFormat::tensorflow;
    std::vector<std::pair<std::string, Tensor>> tensors;
    std::set<std::string> keys;
    for (const auto& [key, var] : targets(tf_keys)) {
        if (!keys.insert(key).second) {
            throw errors::InvalidArgumentError(fmt::format(
                "Saver.save: two variables would be saved under the key '{}' (one is '{}')",
                key,
                var.name()));
        }
        tensors.emplace_back(key, options_.async ? staged_copy(var.value()) : var.value());
    }
    std::vector<std::string> kept = last_;
    std::erase(kept, prefix);
    kept.push_back(prefix);
    std::vector<std::string> expired;
    while (options_.max_to_keep > 0 &&
           kept.size() > static_cast<std::size_t>(options_.max_to_keep)) {
        expired.push_back(kept.front());
        kept.erase(kept.begin());
    }
    if (!options_.async) {
        commit_checkpoint(save_path, prefix, tensors, global_step, options_.format, kept, expired);
        last_ = std::move(kept);
        return prefix;
    }
    auto job = std::make_unique<BackgroundSave>();
    job->previous = std::exchange(last_, kept);  // wait() puts it back if the write fails
    BackgroundSave* raw = job.get();
    job->thread = std::thread([raw,
                               save_path,
                               prefix,
                               tensors = std::move(tensors),
                               global_step,
                               format = options_.format,
                               kept = std::move(kept),
                               expired = std::move(expired)] {
        try {
            commit_checkpoint(save_path, prefix, tensors, global_step, format, kept, expired);
        } catch (...) {
            raw->error = std::current_exception();
        }
    });
    in_flight_ = std::move(job);
    return prefix;
}

void Saver::wait() {
    if (!in_flight_) return;
    std::unique_ptr<BackgroundSave> job = std::move(in_flight_);
    job->thread.join();
    if (job->error) {
        last_ = std::move(job->previous);  // the failed checkpoint is not one of ours
        std::rethrow_exception(job->error);
    }
}

void Saver::restore(const std::string& save_path) {
    wait();  // restoring the checkpoint being written reads the finished file
    auto from_file = [&] {
        std::shared_ptr<ckpt::CheckpointReader> reader =
            ckpt::CheckpointReader::open_any(save_path);
        const ckpt::RestoreOutcome outcome =
            ckpt::restore_variables(*reader, targets(reader->is_bundle()), /*strict=*/true);
        pending_.reset();
        if (mode_ == Mode::all_globals) pending_ = ckpt::defer_restore(reader, outcome.not_live);
        return std::string();
    };
    if (distribute::size() == 1) {
        from_file();
        return;
    }
    // Distributed training: the chief reads the file (its errors reach every process), then every
    // process takes the chief's values (docs/distributed.md, Checkpoints).
    distribute::detail::run_on_chief(from_file);
    std::vector<Variable> vars;
    for (const auto& [name, var] : targets(false))
        vars.push_back(var);
    distribute::broadcast_variables(vars, distribute::chief_rank());
}

std::vector<std::string> Saver::last_checkpoints() const {
    return last_;
}

void Saver::recover_last_checkpoints(const std::vector<std::string>& prefixes) {
    wait();
    std::vector<std::string> kept;
    for (const std::string& p : prefixes) {
        const std::string prefix = ckpt::checkpoint_prefix(p);
        if (ckpt::checkpoint_exists(prefix) &&
            std::find(kept.begin(), kept.end(), prefix) == kept.end()) {
            kept.push_back(prefix);
        }
    }
    last_ = std::move(kept);
}

std::optional<std::string> latest_checkpoint(const std::string& dir) {
    const std::optional<ckpt::CheckpointState> state = ckpt::read_checkpoint_state(dir);
    if (!state) return std::nullopt;
    if (ckpt::checkpoint_exists(ckpt::checkpoint_prefix(state->model_checkpoint_path))) {
        return ckpt::checkpoint_prefix(state->model_checkpoint_path);
    }
    // The newest listed checkpoint that still exists (TensorFlow would give up here).
    for (auto it = state->all_model_checkpoint_paths.rbegin();
         it != state->all_model_checkpoint_paths.rend();
         ++it) {
        if (ckpt::checkpoint_exists(ckpt::checkpoint_prefix(*it)))
            return ckpt::checkpoint_prefix(*it);
    }
    return std::nullopt;
}

std::map<std::string, std::pair<Shape, DType>> list_variables(const std::string& path) {
    const auto reader = ckpt::CheckpointReader::open_any(ckpt::resolve_checkpoint(path));
    std::map<std::string, std::pair<Shape, DType>> out;
    for (const ckpt::TensorEntry& e : reader->header().tensors) {
        if (reader->is_bundle() && e.file_dtype == "string") continue;  // e.g. the object graph
        if (!e.dtype) {
            throw errors::UnimplementedError(
                fmt::format("checkpoint {}: tensor '{}' has dtype {}, which "
                            "tapeflow has no dtype for",
                            reader->file(),
                            e.name,
                            e.file_dtype));
        }
        out.emplace(e.name, std::make_pair(e.shape, *e.dtype));
    }
    return out;
}

Tensor load_variable(const std::string& path, const std::string& name) {
    const auto reader = ckpt::CheckpointReader::open_any(ckpt::resolve_checkpoint(path));
    const ckpt::TensorEntry* e = reader->find(name);
    if (e == nullptr)
        throw errors::NotFoundError(
            fmt::format("Key {} not found in checkpoint {}", name, reader->file()));
    return reader->read(*e);
}

std::optional<int64_t> checkpoint_global_step(const std::string& path) {
    const std::string prefix = ckpt::resolve_checkpoint(path);
    if (const auto step = ckpt::CheckpointReader::open_any(prefix)->header().global_step)
        return step;
    // Without a global_step tensor, the step save() put into the name ("model.ckpt-1500"), which
    // safetensors also records in its metadata.
    const std::size_t dash = prefix.rfind('-');
    if (dash == std::string::npos || dash + 1 == prefix.size() || prefix.size() - dash > 19 ||
        prefix.find_first_not_of("0123456789", dash + 1) != std::string::npos ||
        prefix.find('/', dash) != std::string::npos)
        return std::nullopt;
    return std::stoll(prefix.substr(dash + 1));
}

}  // namespace tapeflow::train
