// The transport-independent part of NOTE [Deadlines] (transport.hpp): the timeout setting, the
// polling wait, and the "broken" state a peer failure leaves behind.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include <tapeflow/core/error.hpp>

#include "distribute/transport.hpp"

namespace tapeflow::distribute {
namespace {

constexpr double kDefaultTimeoutSeconds = 300;

double timeout_from_env() {
    const char* env = std::getenv("TAPEFLOW_DIST_TIMEOUT_S");
    if (env == nullptr || *env == '\0') return kDefaultTimeoutSeconds;
    char* end = nullptr;
    const double value = std::strtod(env, &end);
    if (end == env || *end != '\0' || !(value > 0)) {
        throw errors::InvalidArgumentError(fmt::format(
            "TAPEFLOW_DIST_TIMEOUT_S must be a positive number of seconds, got '{}'", env));
    }
    return value;
}

std::atomic<double>& timeout_setting() {
    static std::atomic<double> seconds{timeout_from_env()};
    return seconds;
}

struct Broken {
    std::mutex mutex;
    std::optional<std::string> reason;
};

Broken& broken() {
    static auto* b = new Broken;  // never destroyed: read by the exit-time finalize
    return *b;
}

}  // namespace

double timeout_seconds() {
    return timeout_setting().load();
}

void set_timeout_seconds(double seconds) {
    if (!(seconds > 0)) {
        throw errors::InvalidArgumentError(fmt::format(
            "the distribute timeout must be a positive number of seconds, got {}", seconds));
    }
    timeout_setting().store(seconds);
}

namespace detail {

void mark_broken(const std::string& reason) {
    Broken& b = broken();
    const std::lock_guard lock(b.mutex);
    if (!b.reason) b.reason = reason;
}

std::optional<std::string> broken_reason() {
    Broken& b = broken();
    const std::lock_guard lock(b.mutex);
    return b.reason;
}

void check_not_broken() {
    if (auto reason = broken_reason()) {
        throw errors::UnavailableError("the process group is unusable after an earlier failure: " +
                                       *reason);
    }
}

void wait_until(const std::function<bool()>& done, std::string_view what) {
    using Clock = std::chrono::steady_clock;
    const double limit = timeout_seconds();
    const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                             std::chrono::duration<double>(limit));
    // Spin on done(): MPI progresses only inside its calls, and giving the core away (yield)
    // costs a scheduler round trip per poll on a busy machine. Only when this machine runs more
    // processes than it has cores, or after a millisecond of spinning, is the core yielded to
    // the peers that must run for the operation to complete. The clock is read every 64 polls.
    static const bool oversubscribed =
        transport_local_size() >
        static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    const auto spin_until = Clock::now() + std::chrono::milliseconds(1);
    bool yielding = oversubscribed;
    for (uint64_t polls = 0;; ++polls) {
        if (done()) return;
        if (polls % 64 == 63) {
            const auto now = Clock::now();
            if (now > deadline) break;
            yielding = yielding || now > spin_until;
        }
        if (yielding) std::this_thread::yield();
    }
    const std::string message = fmt::format(
        "{} did not complete within {} s on rank {} of {}: a peer process died, hangs, or does not "
        "make the same collective calls in the same order (timeout: TAPEFLOW_DIST_TIMEOUT_S)",
        what,
        limit,
        transport_rank(),
        transport_size());
    mark_broken(message);
    throw errors::UnavailableError(message);
}

void wait(Pending& pending, std::string_view what) {
    wait_until([&] { return pending.test(); }, what);
}

}  // namespace detail
}  // namespace tapeflow::distribute
