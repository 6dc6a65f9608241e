// The machinery under tf::data::Dataset: a Source is one running iteration of a pipeline stage
// (next() gives the next element or nullopt at the end), and OrderedStage runs a function on
// worker threads while handing results back in input order (parallel map and prefetch). The
// threads and their locking live in lib/data (StageEngine), so this header stays light.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include <tapeflow/core/export.hpp>

TAPEFLOW_API_BEGIN

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

/// Pipeline threads alive right now in this process (a test hook: after an iterator is
/// destroyed, its threads are gone).
int live_threads();

/// What a StageEngine's workers do with slot `i` of the stage's ring of `capacity` slots.
class StageHooks {
public:
    /// Pulls the next upstream element (or its error) into slot i; false at the end of input.
    /// Never called by two workers at once.
    virtual bool pull(std::size_t i) = 0;
    /// Turns slot i's input into its output (or error). Runs concurrently on different slots.
    virtual void compute(std::size_t i) = 0;

protected:
    ~StageHooks() = default;
};

/// The threads and ordering of an OrderedStage (lib/data/stage_engine.cpp): `workers` threads
/// claim slots in input order, at most `capacity` ahead of the consumer; the consumer takes
/// slots back in the same order. stop() makes each worker finish the call it is in and exit,
/// then joins them, so destroying an iterator midway never hangs.
class StageEngine {
public:
    StageEngine(StageHooks& hooks, int workers, int64_t capacity);
    ~StageEngine();  // stop()
    StageEngine(const StageEngine&) = delete;
    StageEngine& operator=(const StageEngine&) = delete;

    /// Waits until the next element in order is done: its slot, or nullopt at the end.
    std::optional<std::size_t> wait_next();
    /// The consumer has taken the slot that wait_next() returned; it may be reused.
    void release();
    void stop();

private:
    struct State;
    std::unique_ptr<State> state_;
};

/// Runs `fn(upstream element)` on `num_workers` threads, at most `capacity` elements ahead of
/// the consumer, and returns the results in input order. An error from upstream or from `fn` is
/// kept in its element's slot and rethrown, with its type, when the consumer reaches it.
template <class In, class Out>
class OrderedStage final : public Source<Out>, private StageHooks {
public:
    using Fn = std::function<Out(In&&)>;

    OrderedStage(SourcePtr<In> upstream, Fn fn, int num_workers, int64_t capacity)
        : upstream_(std::move(upstream)),
          fn_(std::move(fn)),
          slots_(static_cast<std::size_t>(capacity < 1 ? 1 : capacity)),
          engine_(*this, num_workers, static_cast<int64_t>(slots_.size())) {}

    ~OrderedStage() override { engine_.stop(); }  // before the slots and upstream go

    std::optional<Out> next() override {
        auto i = engine_.wait_next();
        if (!i) return std::nullopt;
        Slot& slot = slots_[*i];
        std::optional<Out> value = std::move(slot.value);
        std::exception_ptr error = std::move(slot.error);
        slot.value.reset();
        slot.error = nullptr;
        engine_.release();
        if (error) std::rethrow_exception(error);
        return value;
    }

private:
    struct Slot {
        std::optional<In> input;
        std::optional<Out> value;
        std::exception_ptr error;
    };

    bool pull(std::size_t i) override {
        try {
            slots_[i].input = upstream_->next();
            return slots_[i].input.has_value();
        } catch (...) {
            slots_[i].error = std::current_exception();
            return true;
        }
    }

    void compute(std::size_t i) override {
        Slot& slot = slots_[i];
        if (slot.error) return;
        try {
            slot.value.emplace(fn_(std::move(*slot.input)));
        } catch (...) {
            slot.error = std::current_exception();
        }
        slot.input.reset();
    }

    SourcePtr<In> upstream_;
    Fn fn_;
    std::vector<Slot> slots_;
    StageEngine engine_;  // last: its threads start once everything above exists
};

}  // namespace tapeflow::data::detail

TAPEFLOW_API_END
