// All-or-nothing restore of live variables and the deferred restore of variables created later.
#include "train/checkpoint/restore.hpp"

#include <filesystem>
#include <mutex>

#include <fmt/format.h>

#include <tapeflow/core/error.hpp>
#include <tapeflow/core/logging.hpp>
#include <tapeflow/train/saver.hpp>

#include "autograd/variable_observers.hpp"

namespace tapeflow::train {

PendingRestore::~PendingRestore() {
    detail::remove_variable_observer(observer_id);
}

namespace ckpt {
namespace {

void check_matches(const CheckpointReader& reader,
                   const TensorEntry& e,
                   const std::string& name,
                   const Variable& v) {
    if (!e.dtype || *e.dtype != v.dtype() || e.shape != v.shape()) {
        throw errors::InvalidArgumentError(
            fmt::format("Cannot restore variable '{}' from {}: the checkpoint's '{}' has shape {} "
                        "and dtype {}, the variable "
                        "has shape {} and dtype {}",
                        v.name(),
                        reader.file(),
                        name,
                        e.shape.str(),
                        e.dtype ? std::string(dtype_name(*e.dtype)) : e.file_dtype,
                        v.shape().str(),
                        dtype_name(v.dtype())));
    }
}

}  // namespace

RestoreOutcome restore_variables(const CheckpointReader& reader,
                                 const std::vector<std::pair<std::string, Variable>>& targets,
                                 bool strict) {
    RestoreOutcome out;
    std::vector<std::pair<Variable, const TensorEntry*>> plan;
    std::set<std::string> used;
    for (const auto& [name, var] : targets) {
        const TensorEntry* e = reader.find(name);
        if (e == nullptr) {
            if (strict) {
                throw errors::NotFoundError(
                    fmt::format("Key {} not found in checkpoint {}", name, reader.file()));
            }
            out.not_in_checkpoint.push_back(name);
            continue;
        }
        check_matches(reader, *e, name, var);
        plan.emplace_back(var, e);
        used.insert(name);
    }
    // Read (and CRC-check) everything before the first assignment: a failure changes nothing.
    std::vector<Tensor> values;
    values.reserve(plan.size());
    for (const auto& [var, e] : plan)
        values.push_back(reader.read(*e));
    for (std::size_t i = 0; i < plan.size(); ++i) {
        Variable var = plan[i].first;
        if (var.device().is_cpu()) {
            detail::replace_variable_value(var,
                                           std::move(values[i]));  // no copy: the tensor is fresh
        } else {
            var.assign(values[i]);
        }
    }
    for (const TensorEntry& e : reader.header().tensors) {
        if (used.count(e.name) == 0) out.not_live.push_back(e.name);
    }
    return out;
}

std::shared_ptr<PendingRestore> defer_restore(std::shared_ptr<CheckpointReader> reader,
                                              const std::vector<std::string>& names) {
    if (names.empty()) return nullptr;
    auto pending = std::make_shared<PendingRestore>();
    pending->reader = std::move(reader);
    pending->names.insert(names.begin(), names.end());
    std::weak_ptr<PendingRestore> weak = pending;
    pending->observer_id = detail::add_variable_observer([weak](Variable& created) {
        const std::shared_ptr<PendingRestore> p = weak.lock();
        if (!p) return;
        const std::string& key =
            p->reader->is_bundle() ? detail::checkpoint_key(created) : created.name();
        {
            const std::lock_guard lock(p->mutex);
            if (p->names.erase(key) == 0) return;
        }
        const TensorEntry* e = p->reader->find(key);
        check_matches(*p->reader, *e, key, created);
        created.assign(p->reader->read(*e));
        logging::debug("Restored {} from {} at its creation", created.name(), p->reader->file());
    });
    return pending;
}

std::string resolve_checkpoint(const std::string& path) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) {
        const std::optional<std::string> latest = latest_checkpoint(path);
        if (!latest)
            throw errors::NotFoundError(fmt::format("No checkpoint found in directory {}", path));
        return *latest;
    }
    return path;
}

}  // namespace ckpt
}  // namespace tapeflow::train
