// The non-template helpers of tf::data's header: argument checks with TensorFlow's wording,
// parallelism defaults and shuffle seeds.
#include <atomic>
#include <thread>

#include <fmt/core.h>

#include <tapeflow/core/error.hpp>
#include <tapeflow/data.hpp>
#include <tapeflow/random.hpp>

namespace tapeflow::data::detail {

int resolve_parallelism(int64_t value, const char* what) {
    if (value == AUTOTUNE)
        return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    check_argument(value >= 1, what, value, "greater than zero or AUTOTUNE (-1)");
    return static_cast<int>(value);
}

void check_argument(bool ok, const char* what, int64_t value, const char* requirement) {
    if (!ok)
        throw errors::InvalidArgumentError(
            fmt::format("{} must be {}, but got {}.", what, requirement, value));
}

struct EpochCounter {
    std::atomic<uint64_t> next{0};
};

std::shared_ptr<EpochCounter> make_epoch_counter() {
    return std::make_shared<EpochCounter>();
}

uint64_t next_epoch(EpochCounter& counter) {
    return counter.next.fetch_add(1);
}

// One SplitMix64 step from a state that depends on both: nearby inputs (seed, epoch 0, 1, 2...)
// give unrelated generator states.
uint64_t mix_seed(uint64_t seed, uint64_t epoch) {
    SplitMix64 g{seed ^ (0x632be59bd9b4e019ULL * (epoch + 1))};
    return g();
}

// One draw of tf::random's stream, so a shuffle without a seed follows TensorFlow's rule: with a
// global seed, set_seed() replays the same seeds (the op counter restarts); without, random.
uint64_t fresh_seed() {
    const double u = random::uniform({}, 0.0, 1.0, DType::float64).item<double>();
    return static_cast<uint64_t>(u * 9007199254740992.0);  // 53 random bits
}

}  // namespace tapeflow::data::detail
