// Random numbers (tf::random): TensorFlow's CPU kernels' numbers, bit for bit, on every device and
// for any thread count (Philox4x32-10 with TensorFlow's seeds, layout and float conversions).
//
// Seeds follow TensorFlow 2 eager (random_seed.get_seed): an op uses the pair (global seed, op
// seed). set_seed() sets the global seed; an op without its own seed then draws one from Python's
// random.Random(global seed).randint(0, 2**31 - 1), as TensorFlow's eager context does. An op seed
// without a global seed pairs with kDefaultGraphSeed. Both seeds are reduced modulo 2**31 - 1.
// As TensorFlow's cached eager kernels, each (op, dtype, seed pair) keeps its generator: a second
// call with the same pair continues the stream (256 blocks per output of the previous call), and
// set_seed() restarts every one. docs/coming-from-tensorflow.md maps TF1 graphs onto this.
#pragma once

#include <cstdint>
#include <optional>

#include <tapeflow/core/export.hpp>
#include <tapeflow/core/tensor.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow::random {

/// TensorFlow's DEFAULT_GRAPH_SEED: the global seed of an op that has only its own seed. A TF1
/// graph op `tf.random_normal(shape, seed=s)` without a graph seed draws the stream (87654321, s)
/// from its start: here, the first call with seed s (after program start or set_seed).
inline constexpr uint64_t kDefaultGraphSeed = 87654321;

/// Sets the global seed (tf.random.set_seed) and restarts every op's stream.
void set_seed(uint64_t seed);
/// The global seed, if one was set.
std::optional<uint64_t> get_global_seed();

/// Normal distribution. Floating dtypes only.
Tensor normal(const Shape& shape,
              double mean = 0,
              double stddev = 1,
              DType dtype = DType::float32,
              std::optional<uint64_t> seed = {});
/// Normal distribution with values beyond mean +- 2 stddev redrawn (tf.random.truncated_normal).
Tensor truncated_normal(const Shape& shape,
                        double mean = 0,
                        double stddev = 1,
                        DType dtype = DType::float32,
                        std::optional<uint64_t> seed = {});
/// Uniform on [minval, maxval). Floating dtypes, or int32/int64 (then maxval must be > minval).
Tensor uniform(const Shape& shape,
               double minval = 0,
               double maxval = 1,
               DType dtype = DType::float32,
               std::optional<uint64_t> seed = {});
/// A random permutation of `value` along its first axis.
Tensor shuffle(const Tensor& value, std::optional<uint64_t> seed = {});

}  // namespace tapeflow::random

TAPEFLOW_API_END
