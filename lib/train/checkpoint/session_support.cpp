// Shared summary writers per directory, the loss of a result and the current global step.
#include "train/checkpoint/session_support.hpp"

#include <map>
#include <memory>
#include <mutex>

#include <tapeflow/train/training_util.hpp>

namespace tapeflow::train::session {

summary::SummaryWriter shared_writer(const std::string& dir) {
    static std::mutex mutex;
    static std::map<std::string, std::weak_ptr<summary::SummaryWriter::Impl>> writers;
    const std::lock_guard lock(mutex);
    if (auto it = writers.find(dir); it != writers.end()) {
        if (auto impl = it->second.lock()) return summary::SummaryWriter(impl);
    }
    summary::SummaryWriter writer = summary::create_file_writer(dir);
    writers[dir] = writer.impl();
    return writer;
}

summary::SummaryWriter kept_writer(const std::string& dir, std::shared_ptr<void>& keep) {
    summary::SummaryWriter writer = shared_writer(dir);
    keep = writer.impl();
    return writer;
}

std::optional<double> scalar_value(const Tensor& result) {
    if (!result.defined() || result.num_elements() != 1 || result.dtype() == DType::bool_)
        return std::nullopt;
    return result.item<double>();
}

int64_t current_global_step() {
    const std::optional<Variable> step = get_global_step();
    return step ? global_step(*step) : 0;
}

}  // namespace tapeflow::train::session
