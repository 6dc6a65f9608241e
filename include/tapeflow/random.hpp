// Random numbers (tf::random): Philox4x32-10 streams, so a seeded op gives the same values on every
// run, for any thread count and on every device.
//
// Seeds follow TensorFlow: an op uses (global seed, op seed). set_seed() sets the global seed and
// restarts the op counter; an op without its own seed then takes the next counter value. An op seed
// without a global seed uses the default global seed 87654321. Repeated calls with the same seeds
// advance the stream (they return new numbers), and set_seed() replays the whole sequence.
#pragma once

#include <cstdint>
#include <optional>

#include <tapeflow/core/tensor.hpp>
#include <tapeflow/core/export.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow::random {

/// Sets the global seed and restarts every op's sequence.
void set_seed(uint64_t seed);
/// The global seed, if one was set.
std::optional<uint64_t> get_global_seed();

/// Normal distribution. Floating dtypes only.
Tensor normal(const Shape& shape, double mean = 0, double stddev = 1, DType dtype = DType::float32,
              std::optional<uint64_t> seed = {});
/// Normal distribution with values beyond mean +- 2 stddev redrawn (tf.random.truncated_normal).
Tensor truncated_normal(const Shape& shape, double mean = 0, double stddev = 1,
                        DType dtype = DType::float32, std::optional<uint64_t> seed = {});
/// Uniform on [minval, maxval). Floating dtypes, or int32/int64 (then maxval must be > minval).
Tensor uniform(const Shape& shape, double minval = 0, double maxval = 1, DType dtype = DType::float32,
               std::optional<uint64_t> seed = {});
/// A random permutation of `value` along its first axis.
Tensor shuffle(const Tensor& value, std::optional<uint64_t> seed = {});

}  // namespace tapeflow::random

TAPEFLOW_API_END
