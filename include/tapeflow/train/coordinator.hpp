// tf::train::Coordinator: TF1's thread coordinator for input loops. Threads (a tf::data prefetch
// does the queue runners' work; your own std::threads) poll should_stop(); any of them, or the
// main loop, calls request_stop(), optionally with the exception that ended it; join() waits for
// the threads and re-raises the first such exception, unless it is a clean stop (OutOfRangeError,
// the end of input).
//
//     tf::train::Coordinator coord;
//     auto it = dataset.make_one_shot_iterator();
//     try {
//         while (!coord.should_stop()) train_step(it.get_next());
//     } catch (const tf::errors::OutOfRangeError&) {
//         fmt::print("Done training -- epoch limit reached\n");
//     }
//     coord.request_stop();
//     coord.join(std::move(threads));
#pragma once

#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include <tapeflow/core/export.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow::train {

class Coordinator {
public:
    /// Clean stops: OutOfRangeError (TensorFlow's default clean_stop_exception_types).
    Coordinator();
    /// `is_clean_stop` says which exceptions passed to request_stop() join() does not re-raise.
    explicit Coordinator(std::function<bool(const std::exception_ptr&)> is_clean_stop);
    Coordinator(const Coordinator&) = delete;
    Coordinator& operator=(const Coordinator&) = delete;
    /// Joins the registered threads that join() did not (so none outlives the coordinator).
    ~Coordinator();

    /// Asks every thread to stop.
    void request_stop();
    /// Asks every thread to stop and keeps `error` (the first one that is not a clean stop) for
    /// join() to re-raise.
    void request_stop(std::exception_ptr error);
    bool should_stop() const;
    /// Forgets the stop request and any kept exception (the coordinator can be used again).
    void clear_stop();
    /// Waits until a stop is requested (at most `timeout` when given); true when one was.
    bool wait_for_stop(std::optional<std::chrono::duration<double>> timeout = {}) const;

    /// Runs `body`; an exception it throws becomes request_stop(exception) instead of propagating
    /// (Python's `with coord.stop_on_exception():`).
    template <class F>
    void stop_on_exception(F&& body) {
        try {
            std::forward<F>(body)();
        } catch (...) {
            request_stop(std::current_exception());
        }
    }

    /// Hands a thread to the coordinator; join() waits for it.
    void register_thread(std::thread thread);
    /// Waits for the registered threads and `threads` to return, then re-raises the exception kept
    /// by request_stop(), if any. C++ threads cannot be abandoned, so there is no grace period:
    /// threads must poll should_stop().
    void join(std::vector<std::thread> threads = {});
    /// True once join() has run.
    bool joined() const;
    /// Re-raises the kept exception now, if there is one.
    void raise_requested_exception() const;

private:
    std::function<bool(const std::exception_ptr&)> is_clean_stop_;
    mutable std::mutex mutex_;
    mutable std::condition_variable stopped_;
    bool stop_ = false;
    bool joined_ = false;
    std::exception_ptr error_;
    std::vector<std::thread> threads_;
};

}  // namespace tapeflow::train

TAPEFLOW_API_END
