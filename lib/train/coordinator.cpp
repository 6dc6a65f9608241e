// tf::train::Coordinator (TensorFlow's coordinator.py semantics, without the grace period that
// Python's abandonable threads allow).
#include <tapeflow/core/error.hpp>
#include <tapeflow/train/coordinator.hpp>

namespace tapeflow::train {
namespace {

bool is_out_of_range(const std::exception_ptr& error) {
    try {
        std::rethrow_exception(error);
    } catch (const errors::OutOfRangeError&) {
        return true;
    } catch (...) {
        return false;
    }
}

}  // namespace

Coordinator::Coordinator() : Coordinator(is_out_of_range) {}

Coordinator::Coordinator(std::function<bool(const std::exception_ptr&)> is_clean_stop)
    : is_clean_stop_(std::move(is_clean_stop)) {}

Coordinator::~Coordinator() {
    for (std::thread& t : threads_) {
        if (t.joinable()) t.join();
    }
}

void Coordinator::request_stop() {
    const std::lock_guard lock(mutex_);
    stop_ = true;
    stopped_.notify_all();
}

void Coordinator::request_stop(std::exception_ptr error) {
    const bool clean = !error || (is_clean_stop_ && is_clean_stop_(error));
    const std::lock_guard lock(mutex_);
    if (!clean && !error_) error_ = std::move(error);
    stop_ = true;
    stopped_.notify_all();
}

bool Coordinator::should_stop() const {
    const std::lock_guard lock(mutex_);
    return stop_;
}

void Coordinator::clear_stop() {
    const std::lock_guard lock(mutex_);
    stop_ = false;
    joined_ = false;
    error_ = nullptr;
}

bool Coordinator::wait_for_stop(std::optional<std::chrono::duration<double>> timeout) const {
    std::unique_lock lock(mutex_);
    if (!timeout) {
        stopped_.wait(lock, [&] { return stop_; });
        return true;
    }
    return stopped_.wait_for(lock, *timeout, [&] { return stop_; });
}

void Coordinator::register_thread(std::thread thread) {
    const std::lock_guard lock(mutex_);
    threads_.push_back(std::move(thread));
}

void Coordinator::join(std::vector<std::thread> threads) {
    std::vector<std::thread> registered;
    {
        const std::lock_guard lock(mutex_);
        registered.swap(threads_);
    }
    for (auto* group : {&registered, &threads}) {
        for (std::thread& t : *group) {
            if (t.joinable()) t.join();
        }
    }
    {
        const std::lock_guard lock(mutex_);
        joined_ = true;
    }
    raise_requested_exception();
}

bool Coordinator::joined() const {
    const std::lock_guard lock(mutex_);
    return joined_;
}

void Coordinator::raise_requested_exception() const {
    std::exception_ptr error;
    {
        const std::lock_guard lock(mutex_);
        error = error_;
    }
    if (error) std::rethrow_exception(error);
}

}  // namespace tapeflow::train
