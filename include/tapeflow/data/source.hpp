// The machinery under tf::data::Dataset: a Source is one running iteration of a pipeline stage
// (next() gives the next element or nullopt at the end), and OrderedStage runs a function on
// worker threads while handing results back in input order (parallel map and prefetch).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

namespace tapeflow::data::detail {

/// One running iteration of a dataset. Not thread-safe: one consumer calls next().
template <class T>
class Source {
public:
    virtual ~Source() = default;
    /// The next element, or nullopt at the end. Errors of this element are thrown here.
    virtual std::optional<T> next() = 0;
};

template <class T>
using SourcePtr = std::unique_ptr<Source<T>>;

/// Pipeline threads alive right now, in this process (a test hook: after an iterator is
/// destroyed, its threads are gone).
inline std::atomic<int>& live_threads() {
    static std::atomic<int> count{0};
    return count;
}

/// Runs `fn(upstream element)` on `num_workers` threads, at most `capacity` elements ahead of
/// the consumer, and returns the results in input order. One worker at a time pulls from the
/// upstream source (sources are single-consumer); the function calls run concurrently. An error
/// from upstream or from `fn` is kept in its element's slot and rethrown, with its type, when the
/// consumer reaches that element. The destructor stops and joins the workers: each finishes the
/// call it is in and then sees the stop flag, so destroying an iterator midway never hangs.
template <class In, class Out>
class OrderedStage final : public Source<Out> {
public:
    using Fn = std::function<Out(In&&)>;

    OrderedStage(SourcePtr<In> upstream, Fn fn, int num_workers, int64_t capacity)
        : upstream_(std::move(upstream)), fn_(std::move(fn)),
          capacity_(capacity < 1 ? 1 : capacity) {
        workers_.reserve(static_cast<std::size_t>(num_workers));
        for (int i = 0; i < num_workers; ++i) {
            ++live_threads();
            workers_.emplace_back([this] {
                work();
                --live_threads();
            });
        }
    }

    ~OrderedStage() override {
        {
            std::lock_guard lock(mu_);
            stop_ = true;
        }
        space_.notify_all();
        ready_.notify_all();
        for (auto& w : workers_) w.join();
    }

    std::optional<Out> next() override {
        std::unique_lock lock(mu_);
        ready_.wait(lock, [&] {
            return (!slots_.empty() && slots_.front().ready) || (slots_.empty() && input_done_);
        });
        if (slots_.empty()) return std::nullopt;
        Slot slot = std::move(slots_.front());
        slots_.pop_front();
        lock.unlock();
        space_.notify_all();
        if (slot.error) std::rethrow_exception(slot.error);
        return std::move(slot.value);
    }

private:
    struct Slot {
        bool ready = false;
        std::optional<Out> value;
        std::exception_ptr error;
    };

    void work() {
        std::unique_lock lock(mu_);
        for (;;) {
            space_.wait(lock, [&] {
                return stop_ ||
                       (!input_done_ && !pulling_ &&
                        static_cast<int64_t>(slots_.size()) < capacity_);
            });
            if (stop_) return;
            pulling_ = true;
            slots_.emplace_back();
            Slot* slot = &slots_.back();  // deque: stays valid while later slots are added
            lock.unlock();

            std::optional<In> in;
            std::exception_ptr error;
            try {
                in = upstream_->next();
            } catch (...) {
                error = std::current_exception();
            }
            lock.lock();
            pulling_ = false;
            if (!error && !in) {  // end of input: the slot just added is the last one
                slots_.pop_back();
                input_done_ = true;
                lock.unlock();
                ready_.notify_all();
                space_.notify_all();
                lock.lock();
                continue;
            }
            lock.unlock();
            space_.notify_all();  // another worker may pull the next element now

            std::optional<Out> out;
            if (!error) {
                try {
                    out.emplace(fn_(std::move(*in)));
                } catch (...) {
                    error = std::current_exception();
                }
            }
            lock.lock();
            slot->value = std::move(out);
            slot->error = error;
            slot->ready = true;
            ready_.notify_all();
        }
    }

    SourcePtr<In> upstream_;
    Fn fn_;
    int64_t capacity_;
    std::mutex mu_;
    std::condition_variable space_;  // workers: room for another element, or stop
    std::condition_variable ready_;  // consumer: the front slot is done, or the input ended
    std::deque<Slot> slots_;         // in input order; the front is the consumer's next element
    bool pulling_ = false;
    bool input_done_ = false;
    bool stop_ = false;
    std::vector<std::thread> workers_;  // last member: started after everything else exists
};

}  // namespace tapeflow::data::detail
