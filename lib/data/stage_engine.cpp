// StageEngine: the worker threads, ring-slot bookkeeping and waiting behind parallel map and
// prefetch. Slot i of sequence number s is s % capacity; a worker claims the next sequence number
// (one puller at a time, since sources are single-consumer), computes outside the lock, and marks
// the slot done; the consumer waits for the oldest one.
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include <tapeflow/data/source.hpp>

namespace tapeflow::data::detail {
namespace {
std::atomic<int> g_live_threads{0};
constexpr int kSpins = 200;
}  // namespace

int live_threads() {
    return g_live_threads.load();
}

struct StageEngine::State {
    StageHooks& hooks;
    std::size_t capacity;
    std::mutex mu;
    std::condition_variable space;  // workers: a slot is free, or stop
    std::condition_variable ready;  // consumer: the oldest slot is done, or the input ended
    std::vector<char> done;         // per slot: its element is finished
    uint64_t head = 0;              // the consumer's next sequence number
    uint64_t claimed = 0;           // sequence numbers handed to workers so far
    uint64_t end = UINT64_MAX;      // the sequence number where the input ended
    bool pulling = false;
    bool stop = false;
    std::vector<std::thread> threads;

    State(StageHooks& h, std::size_t cap) : hooks(h), capacity(cap), done(cap, 0) {}

    void work() {
        std::unique_lock lock(mu);
        for (;;) {
            space.wait(lock, [&] {
                return stop || (end == UINT64_MAX && !pulling && claimed - head < capacity);
            });
            if (stop) return;
            pulling = true;
            const uint64_t seq = claimed++;
            const std::size_t i = seq % capacity;
            lock.unlock();
            const bool got = hooks.pull(i);
            lock.lock();
            pulling = false;
            if (!got) {
                end = seq;
                --claimed;
                lock.unlock();
                ready.notify_all();
                space.notify_all();
                lock.lock();
                continue;
            }
            lock.unlock();
            space.notify_all();  // another worker may pull the next element now
            hooks.compute(i);
            lock.lock();
            done[i] = 1;
            if (seq == head) ready.notify_all();
        }
    }
};

StageEngine::StageEngine(StageHooks& hooks, int workers, int64_t capacity)
    : state_(std::make_unique<State>(hooks, static_cast<std::size_t>(capacity))) {
    for (int w = 0; w < workers; ++w) {
        ++g_live_threads;
        state_->threads.emplace_back([s = state_.get()] {
            s->work();
            --g_live_threads;
        });
    }
}

StageEngine::~StageEngine() {
    stop();
}

void StageEngine::stop() {
    {
        std::lock_guard lock(state_->mu);
        if (state_->stop) return;
        state_->stop = true;
    }
    state_->space.notify_all();
    state_->ready.notify_all();
    for (auto& t : state_->threads)
        t.join();
}

std::optional<std::size_t> StageEngine::wait_next() {
    State& s = *state_;
    auto ready = [&] {
        return s.head == s.end || s.done[s.head % s.capacity];
    };
    std::unique_lock lock(s.mu);
    // A short polite spin before sleeping: when the workers keep up, the next element is usually
    // a few microseconds away, and a futex sleep + wake-up costs tens of microseconds on a VM.
    for (int spin = 0; spin < kSpins && !ready(); ++spin) {
        lock.unlock();
        std::this_thread::yield();
        lock.lock();
    }
    s.ready.wait(lock, ready);
    if (s.head == s.end) return std::nullopt;
    return static_cast<std::size_t>(s.head % s.capacity);
}

void StageEngine::release() {
    State& s = *state_;
    {
        std::lock_guard lock(s.mu);
        s.done[s.head % s.capacity] = 0;
        ++s.head;
    }
    s.space.notify_all();
}

}  // namespace tapeflow::data::detail
