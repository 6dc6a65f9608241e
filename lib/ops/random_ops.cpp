// tf::random: seed resolution (TensorFlow's global seed + op seed rules) and the random ops.
// The kernels only see a Philox key and a call number; every rule about seeds lives here.
#include <tapeflow/random.hpp>

#include <map>
#include <mutex>
#include <random>
#include <utility>

#include "ops/apply.hpp"
#include "ops/op_families.hpp"

namespace tapeflow::random {
namespace {

// TensorFlow's DEFAULT_GRAPH_SEED: the global seed used when only an op seed is given.
constexpr uint64_t kDefaultGlobalSeed = 87654321;

uint64_t splitmix64(uint64_t x) {
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

struct SeedState {
    std::mutex mutex;
    std::optional<uint64_t> global_seed;
    uint64_t op_counter = 0;                           // op seeds handed out since set_seed
    std::map<std::pair<uint64_t, uint64_t>, uint64_t> calls;   // calls so far per (seed, op seed)
};

SeedState& state() {
    static SeedState s;
    return s;
}

// The Philox key and call number for the next op with `op_seed`, recorded as attributes.
Attrs next_stream(std::optional<uint64_t> op_seed) {
    SeedState& s = state();
    const std::lock_guard lock(s.mutex);
    uint64_t seed = 0;
    uint64_t seed2 = 0;
    if (s.global_seed) {
        seed = *s.global_seed;
        seed2 = op_seed ? *op_seed : s.op_counter++;
    } else if (op_seed) {
        seed = kDefaultGlobalSeed;
        seed2 = *op_seed;
    } else {  // neither seed: non-deterministic, as in TensorFlow
        std::random_device device;
        seed = (static_cast<uint64_t>(device()) << 32) | device();
        seed2 = (static_cast<uint64_t>(device()) << 32) | device();
    }
    // Only seeded streams can repeat; random seeds need no call count (and must not grow the map).
    const bool seeded = s.global_seed.has_value() || op_seed.has_value();
    const uint64_t call = seeded ? s.calls[{seed, seed2}]++ : 0;
    const uint64_t key = splitmix64(seed ^ splitmix64(seed2));
    return Attrs()
        .set("key", static_cast<int64_t>(key))
        .set("call", static_cast<int64_t>(call))
        .set("seed", static_cast<int64_t>(seed))
        .set("seed2", static_cast<int64_t>(seed2));
}

void check_float(Op op, DType dtype) {
    if (!is_floating(dtype)) {
        op_fail(op, "dtype must be a floating type (float16, bfloat16, float32, float64), got {}",
                dtype_name(dtype));
    }
}

void check_stddev(Op op, double stddev) {
    if (!(stddev >= 0)) op_fail(op, "stddev must be non-negative, got {}", stddev);
}

}  // namespace

void set_seed(uint64_t seed) {
    SeedState& s = state();
    const std::lock_guard lock(s.mutex);
    s.global_seed = seed;
    s.op_counter = 0;
    s.calls.clear();
}

std::optional<uint64_t> get_global_seed() {
    SeedState& s = state();
    const std::lock_guard lock(s.mutex);
    return s.global_seed;
}

Tensor normal(const Shape& shape, double mean, double stddev, DType dtype,
              std::optional<uint64_t> seed) {
    check_float(Op::random_normal, dtype);
    check_stddev(Op::random_normal, stddev);
    return apply(Op::random_normal, {}, {shape, dtype},
                 next_stream(seed).set("mean", mean).set("stddev", stddev));
}

Tensor truncated_normal(const Shape& shape, double mean, double stddev, DType dtype,
                        std::optional<uint64_t> seed) {
    check_float(Op::truncated_normal, dtype);
    check_stddev(Op::truncated_normal, stddev);
    return apply(Op::truncated_normal, {}, {shape, dtype},
                 next_stream(seed).set("mean", mean).set("stddev", stddev));
}

Tensor uniform(const Shape& shape, double minval, double maxval, DType dtype,
               std::optional<uint64_t> seed) {
    if (dtype == DType::int32 || dtype == DType::int64) {
        if (!(minval < maxval)) {
            op_fail(Op::random_uniform, "Need minval < maxval: {} >= {}", minval, maxval);
        }
    } else if (!is_floating(dtype)) {
        op_fail(Op::random_uniform,
                "dtype must be a floating type, int32 or int64, got {}", dtype_name(dtype));
    } else if (!(minval <= maxval)) {
        op_fail(Op::random_uniform, "Need minval <= maxval: {} > {}", minval, maxval);
    }
    return apply(Op::random_uniform, {}, {shape, dtype},
                 next_stream(seed).set("minval", minval).set("maxval", maxval));
}

Tensor shuffle(const Tensor& value, std::optional<uint64_t> seed) {
    if (!value.defined()) op_fail(Op::random_shuffle, "value is an undefined tensor");
    return apply(Op::random_shuffle, {value}, {value.shape(), value.dtype()}, next_stream(seed));
}

}  // namespace tapeflow::random

namespace tapeflow {
namespace {
// Random numbers are not differentiable.
const OpDef kRandomOps[] = {
    {Op::random_uniform, Save::nothing, nullptr},
    {Op::random_normal, Save::nothing, nullptr},
    {Op::truncated_normal, Save::nothing, nullptr},
    {Op::random_shuffle, Save::nothing, nullptr},
};
}  // namespace

std::span<const OpDef> random_op_defs() { return kRandomOps; }

}  // namespace tapeflow
