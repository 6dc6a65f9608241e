// The non-template helpers of tf::data's header: argument checks with TensorFlow's wording,
// parallelism defaults and shuffle seeds.
#include <tapeflow/core/error.hpp>
#include <tapeflow/data.hpp>
#include <tapeflow/random.hpp>

#include <atomic>
#include <random>
#include <thread>

#include <fmt/core.h>

namespace tapeflow::data::detail {

int resolve_parallelism(int64_t value, const char* what) {
    if (value == AUTOTUNE) return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    check_argument(value >= 1, what, value, "greater than zero or AUTOTUNE (-1)");
    return static_cast<int>(value);
}

void check_argument(bool ok, const char* what, int64_t value, const char* requirement) {
    if (!ok)
        throw errors::InvalidArgumentError(
            fmt::format("{} must be {}, but got {}.", what, requirement, value));
}

// splitmix64: spreads nearby inputs (seed, epoch 0, 1, 2...) over unrelated generator states.
uint64_t mix_seed(uint64_t seed, uint64_t epoch) {
    uint64_t z = seed + 0x9e3779b97f4a7c15ULL * (epoch + 1);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

uint64_t fresh_seed() {
    static std::atomic<uint64_t> counter{0};
    if (auto global = random::get_global_seed()) return mix_seed(*global, 1000 + counter++);
    std::random_device device;
    return (static_cast<uint64_t>(device()) << 32) ^ device();
}

}  // namespace tapeflow::data::detail
