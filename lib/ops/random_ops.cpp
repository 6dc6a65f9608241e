// tf::random: seed resolution (TensorFlow 2 eager's global seed + op seed rules), the blocks each
// call reserves, and the random ops. The kernels only see the seed pair and the generator offset;
// every rule about seeds lives here.
#include <algorithm>
#include <map>
#include <mutex>
#include <random>
#include <utility>
#include <vector>

#include <tapeflow/random.hpp>

#include "function/trace_hooks.hpp"
#include "kernels/shared/python_random.hpp"
#include "ops/apply.hpp"
#include "ops/op_families.hpp"
#include "ops/random_streams.hpp"

namespace tapeflow::random {
namespace {

constexpr uint64_t kMaxInt32 = (uint64_t{1} << 31) - 1;  // random_seed.py's _MAXINT32
// Blocks each output reserves in TensorFlow's stateful kernels (ReserveRandomOutputs(n, 256)).
constexpr uint64_t kBlocksPerOutput = 256;

// A TensorFlow kernel instance: TF2 eager caches one per op type and attributes, and each keeps its
// generator between calls.
struct KernelKey {
    Op op;
    DType dtype;
    uint64_t seed, seed2;
    auto operator<=>(const KernelKey&) const = default;
};

struct SeedState {
    std::mutex mutex;
    std::optional<uint64_t> global_seed;
    random_detail::PythonRandom op_seeds;    // the eager context's random.Random(global seed)
    std::map<KernelKey, uint64_t> reserved;  // blocks each kernel has handed out
};

SeedState& state() {
    static SeedState s;
    return s;
}

// TensorFlow's get_seed() and the kernel's reservation: the seed pair of the next `op` call and the
// generator position after the blocks earlier calls of that kernel reserved, as attributes.
Attrs draw_stream(Op op, DType dtype, std::optional<uint64_t> op_seed, uint64_t blocks) {
    SeedState& s = state();
    const std::lock_guard lock(s.mutex);
    uint64_t seed = 0;
    uint64_t seed2 = 0;
    const bool seeded = s.global_seed.has_value() || op_seed.has_value();
    if (s.global_seed) {
        seed = *s.global_seed % kMaxInt32;
        seed2 = (op_seed ? *op_seed : s.op_seeds.randint_int31()) % kMaxInt32;
    } else if (op_seed) {
        seed = kDefaultGraphSeed;
        seed2 = *op_seed % kMaxInt32;
    } else {  // neither seed: nondeterministic, as in TensorFlow (which draws both with New64)
        std::random_device device;
        seed = (static_cast<uint64_t>(device()) << 32) | device();
        seed2 = (static_cast<uint64_t>(device()) << 32) | device();
    }
    uint64_t offset = 0;  // random seeds never repeat: nothing to remember (the map must not grow)
    if (seeded) {
        if (seed == 0 && seed2 == 0) seed2 = kMaxInt32;  // (0, 0) would mean "random" to the kernel
        uint64_t& used = s.reserved[KernelKey{op, dtype, seed, seed2}];
        offset = used;
        used += blocks;
    }
    return Attrs()
        .set("seed", static_cast<int64_t>(seed))
        .set("seed2", static_cast<int64_t>(seed2))
        .set("offset", static_cast<int64_t>(offset));
}

// The record and replay guards open on this thread, innermost last (NOTE [Random stream replay]).
struct StreamScope {
    random_detail::StreamLog* record = nullptr;        // a RecordStreams guard's log
    const random_detail::StreamLog* replay = nullptr;  // a ReplayStreams guard's log
    const char* who = "";
    std::size_t next = 0;  // the replay's next draw
};

std::vector<StreamScope>& stream_scopes() {
    thread_local std::vector<StreamScope> scopes;
    return scopes;
}

// A new stream for `op` from `draw`, or served by the innermost replay guard instead; appended to
// the record guards opened inside that replay (all of them when none replays).
template <class Draw>
Attrs served_stream(Op op, uint64_t blocks, const Draw& draw) {
    std::vector<StreamScope>& scopes = stream_scopes();
    if (scopes.empty()) return draw();
    std::size_t first_recorder = 0;
    Attrs attrs;
    auto replay = std::find_if(
        scopes.rbegin(), scopes.rend(), [](const StreamScope& s) { return s.replay != nullptr; });
    if (replay == scopes.rend()) {
        attrs = draw();
    } else {
        first_recorder = static_cast<std::size_t>(scopes.rend() - replay);
        const random_detail::StreamLog& log = *replay->replay;
        if (replay->next >= log.size() || log[replay->next].op != op ||
            log[replay->next].blocks != blocks) {
            op_fail(op,
                    "{}: the recomputed forward pass draws random numbers the first pass did not "
                    "(draw {} of {} there); fn must run the same random ops on every call",
                    replay->who,
                    replay->next + 1,
                    log.size());
        }
        attrs = log[replay->next++].attrs;
    }
    for (std::size_t i = first_recorder; i < scopes.size(); ++i) {
        if (scopes[i].record != nullptr) scopes[i].record->push_back({op, blocks, attrs});
    }
    return attrs;
}

// The next stream of `op` (NOTE [Random stream replay]).
Attrs next_stream(Op op, DType dtype, std::optional<uint64_t> op_seed, uint64_t blocks) {
    if (function_detail::tracing()) [[unlikely]]
        function_detail::note_random(op, dtype, op_seed, blocks);
    return served_stream(op, blocks, [&] { return draw_stream(op, dtype, op_seed, blocks); });
}

// The stream of a second call of the kernel that drew `traced`: its offset after the blocks the
// kernel handed out, or new random seeds for an unseeded call.
Attrs continue_drawing(Op op, DType dtype, const Attrs& traced, uint64_t blocks) {
    SeedState& s = state();
    const std::lock_guard lock(s.mutex);
    Attrs attrs = traced;
    const auto seed = static_cast<uint64_t>(traced.get<int64_t>("seed"));
    const auto seed2 = static_cast<uint64_t>(traced.get<int64_t>("seed2"));
    const auto it = s.reserved.find(KernelKey{op, dtype, seed, seed2});
    if (it == s.reserved.end()) {  // an unseeded call: new random seeds
        std::random_device device;
        attrs.set("seed", static_cast<int64_t>((static_cast<uint64_t>(device()) << 32) | device()));
        attrs.set("seed2",
                  static_cast<int64_t>((static_cast<uint64_t>(device()) << 32) | device()));
        attrs.set("offset", int64_t{0});
        return attrs;
    }
    attrs.set("offset", static_cast<int64_t>(it->second));
    it->second += blocks;
    return attrs;
}

Attrs next_stream(Op op, const Shape& shape, DType dtype, std::optional<uint64_t> seed) {
    return next_stream(
        op, dtype, seed, static_cast<uint64_t>(shape.num_elements()) * kBlocksPerOutput);
}

void check_float(Op op, DType dtype) {
    if (!is_floating(dtype)) {
        op_fail(op,
                "dtype must be a floating type (float16, bfloat16, float32, float64), got {}",
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
    s.op_seeds = random_detail::PythonRandom(seed);
    s.reserved.clear();
}

std::optional<uint64_t> get_global_seed() {
    SeedState& s = state();
    const std::lock_guard lock(s.mutex);
    return s.global_seed;
}

Tensor normal(
    const Shape& shape, double mean, double stddev, DType dtype, std::optional<uint64_t> seed) {
    check_float(Op::random_normal, dtype);
    check_stddev(Op::random_normal, stddev);
    return apply(
        Op::random_normal,
        {},
        {shape, dtype},
        next_stream(Op::random_normal, shape, dtype, seed).set("mean", mean).set("stddev", stddev));
}

Tensor truncated_normal(
    const Shape& shape, double mean, double stddev, DType dtype, std::optional<uint64_t> seed) {
    check_float(Op::truncated_normal, dtype);
    check_stddev(Op::truncated_normal, stddev);
    return apply(Op::truncated_normal,
                 {},
                 {shape, dtype},
                 next_stream(Op::truncated_normal, shape, dtype, seed)
                     .set("mean", mean)
                     .set("stddev", stddev));
}

Tensor uniform(
    const Shape& shape, double minval, double maxval, DType dtype, std::optional<uint64_t> seed) {
    if (dtype == DType::int32 || dtype == DType::int64) {
        if (!(minval < maxval)) {
            op_fail(Op::random_uniform, "Need minval < maxval: {} >= {}", minval, maxval);
        }
    } else if (!is_floating(dtype)) {
        op_fail(Op::random_uniform,
                "dtype must be a floating type, int32 or int64, got {}",
                dtype_name(dtype));
    } else if (!(minval <= maxval)) {
        op_fail(Op::random_uniform, "Need minval <= maxval: {} > {}", minval, maxval);
    }
    return apply(Op::random_uniform,
                 {},
                 {shape, dtype},
                 next_stream(Op::random_uniform, shape, dtype, seed)
                     .set("minval", minval)
                     .set("maxval", maxval));
}

Tensor shuffle(const Tensor& value, std::optional<uint64_t> seed) {
    if (!value.defined()) op_fail(Op::random_shuffle, "value is an undefined tensor");
    // TensorFlow's RandomShuffle reserves one word per swap, and nothing when there is nothing to
    // move
    const int64_t rows = value.rank() == 0 ? 1 : value.shape()[0];
    const uint64_t blocks =
        random_detail::blocks_for(Op::random_shuffle, value.num_elements(), rows);
    return apply(Op::random_shuffle,
                 {value},
                 {value.shape(), value.dtype()},
                 next_stream(Op::random_shuffle, value.dtype(), seed, blocks));
}

}  // namespace tapeflow::random

namespace tapeflow::random_detail {

uint64_t blocks_for(Op op, int64_t elements, int64_t rows) {
    if (op != Op::random_shuffle) return static_cast<uint64_t>(elements) * random::kBlocksPerOutput;
    return elements <= 1 || rows <= 1 ? 0 : (static_cast<uint64_t>(rows) + 2) / 4;
}

Attrs draw_again(Op op, DType dtype, std::optional<uint64_t> op_seed, uint64_t blocks) {
    return random::next_stream(op, dtype, op_seed, blocks);
}

Attrs continue_stream(Op op, DType dtype, const Attrs& traced, uint64_t blocks) {
    return random::served_stream(
        op, blocks, [&] { return random::continue_drawing(op, dtype, traced, blocks); });
}

RecordStreams::RecordStreams(StreamLog& log) {
    random::stream_scopes().push_back({.record = &log});
}

RecordStreams::~RecordStreams() {
    random::stream_scopes().pop_back();
}

ReplayStreams::ReplayStreams(const StreamLog& log, const char* who)
    : index_(random::stream_scopes().size()) {
    random::stream_scopes().push_back({.replay = &log, .who = who});
}

ReplayStreams::~ReplayStreams() {
    random::stream_scopes().pop_back();
}

std::size_t ReplayStreams::served() const {
    return random::stream_scopes()[index_].next;
}

}  // namespace tapeflow::random_detail

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

std::span<const OpDef> random_op_defs() {
    return kRandomOps;
}

}  // namespace tapeflow
