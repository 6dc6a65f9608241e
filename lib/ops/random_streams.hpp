// Drawing more numbers from the stream of a random op call already made: vectorized_map replays a
// random op traced on one example as one call for the whole batch (lib/ops/random_ops.cpp).
#pragma once

#include <cstdint>

#include <tapeflow/core/dtype.hpp>

#include "ops/attrs.hpp"
#include "ops/op.hpp"

namespace tapeflow::random_detail {

/// The attrs of a new call of `op` with the seed pair of the call that had `traced`, its generator
/// offset after the `blocks` this call reserves (as each call of one seeded kernel continues its
/// stream). An unseeded call gets fresh nondeterministic seeds, as every unseeded call does.
Attrs continue_stream(Op op, DType dtype, const Attrs& traced, uint64_t blocks);

/// The blocks a call of `op` producing `elements` numbers (random_shuffle: of `rows` rows) reserves.
uint64_t blocks_for(Op op, int64_t elements, int64_t rows);

}  // namespace tapeflow::random_detail
