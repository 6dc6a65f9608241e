// Recording and replaying the streams random ops draw (internal; tf::recompute_grad uses it so that
// a recomputed forward pass, dropout included, sees the numbers the first pass saw), and drawing
// more numbers from the stream of a call already made (vectorized_map replays a random op traced
// on one example as one call for the whole batch).
//
// NOTE [Random stream replay]: a random op's numbers are a function of the stream attributes
// next_stream() hands it (seed, seed2, offset; random_ops.cpp). While a RecordStreams guard is
// alive on a thread, every stream handed out there is appended to its log; while a ReplayStreams
// guard is alive, the ops take their streams from its log in order instead, and the global seed
// state is neither read nor advanced (so replaying leaves the live streams where they were, and
// works for unseeded ops too). Guards nest: the innermost replay serves the streams, and what it
// serves is appended to the record guards opened inside it only (a record guard outside it saw
// the first run, which drew those streams itself or did not draw them at all).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include <tapeflow/core/dtype.hpp>

#include "ops/attrs.hpp"
#include "ops/op.hpp"

namespace tapeflow::random_detail {

/// One random op's draw: which op, how many Philox blocks it reserved, and its stream attributes.
struct StreamDraw {
    Op op;
    uint64_t blocks;
    Attrs attrs;
};

/// The streams one run drew, in order.
using StreamLog = std::vector<StreamDraw>;

/// While alive, this thread's random ops append their streams to `log` (NOTE [Random stream
/// replay]).
class [[nodiscard]] RecordStreams {
public:
    explicit RecordStreams(StreamLog& log);
    ~RecordStreams();
    RecordStreams(const RecordStreams&) = delete;
    RecordStreams& operator=(const RecordStreams&) = delete;
};

/// While alive, this thread's random ops take their streams from `log` in order. A random op that
/// differs from the logged one (another op or size), or one past the end of the log, is an
/// InvalidArgumentError naming `who` (the run draws other numbers than the one recorded).
class [[nodiscard]] ReplayStreams {
public:
    ReplayStreams(const StreamLog& log, const char* who);
    ~ReplayStreams();
    ReplayStreams(const ReplayStreams&) = delete;
    ReplayStreams& operator=(const ReplayStreams&) = delete;
    /// How many logged streams were served so far.
    std::size_t served() const;

private:
    std::size_t index_;  // this guard's place on the thread's guard stack
};

/// The attrs of a new call of `op` with the seed pair of the call that had `traced`, its generator
/// offset after the `blocks` this call reserves (as each call of one seeded kernel continues its
/// stream); an unseeded call gets fresh nondeterministic seeds. Recorded and replayed like every
/// other draw.
Attrs continue_stream(Op op, DType dtype, const Attrs& traced, uint64_t blocks);

/// The stream eager execution hands the next call of `op` with these seed arguments (a
/// tf::function's replay of a traced random op: NOTE [Function replay]).
Attrs draw_again(Op op, DType dtype, std::optional<uint64_t> op_seed, uint64_t blocks);

/// The blocks a call of `op` producing `elements` numbers (random_shuffle: of `rows` rows)
/// reserves.
uint64_t blocks_for(Op op, int64_t elements, int64_t rows);

}  // namespace tapeflow::random_detail
