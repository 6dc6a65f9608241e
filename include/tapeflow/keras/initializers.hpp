// tf::keras::initializers: Keras 3's weight initializers, each a tf::Initializer (usable in
// add_weight, the layers' options and tf::get_variable). Keras' formulas and defaults: fans from
// the shape (kernels [..., in, out]: receptive field x in / out), truncated normals divided by
// 0.87962566103423978 so the truncated distribution has the intended standard deviation.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>

#include <tapeflow/autograd/variable.hpp>
#include <tapeflow/core/export.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow::keras::initializers {

/// With a seed, every call gives the same values (Keras 3's rule for integer seeds: the first
/// result per shape and device is kept); without one the values come from tf::random's global
/// seed and counter (reproducible under set_seed).
using Seed = std::optional<uint64_t>;

/// Keras' compute_fans: rank 0 -> (1, 1); rank 1 -> (n, n); rank 2 -> (in, out); higher ranks ->
/// (shape[-2] x receptive field, shape[-1] x receptive field).
std::pair<double, double> compute_fans(const Shape& shape);

/// VarianceScaling: scale / fan (mode "fan_in", "fan_out" or "fan_avg"), drawn from
/// "truncated_normal", "untruncated_normal" or "uniform" (limit sqrt(3 scale / fan)).
/// Unknown mode or distribution, or scale <= 0: InvalidArgumentError.
Initializer variance_scaling(double scale = 1.0,
                             std::string_view mode = "fan_in",
                             std::string_view distribution = "truncated_normal",
                             Seed seed = {});
/// variance_scaling(1, "fan_avg", "uniform"): U(-sqrt(6 / (in + out)), +sqrt(6 / (in + out))).
Initializer glorot_uniform(Seed seed = {});
/// variance_scaling(1, "fan_avg", "truncated_normal").
Initializer glorot_normal(Seed seed = {});
/// variance_scaling(2, "fan_in", "truncated_normal").
Initializer he_normal(Seed seed = {});
/// variance_scaling(2, "fan_in", "uniform").
Initializer he_uniform(Seed seed = {});
/// variance_scaling(1, "fan_in", "truncated_normal").
Initializer lecun_normal(Seed seed = {});
/// variance_scaling(1, "fan_in", "uniform").
Initializer lecun_uniform(Seed seed = {});
Initializer random_normal(double mean = 0, double stddev = 0.05, Seed seed = {});
Initializer random_uniform(double minval = -0.05, double maxval = 0.05, Seed seed = {});
/// Normal resampled outside mean +- 2 stddev.
Initializer truncated_normal(double mean = 0, double stddev = 0.05, Seed seed = {});
Initializer zeros();
Initializer ones();
Initializer constant(double value);
/// gain x Q of the QR decomposition of a normal matrix [max(rows, cols), min(rows, cols)] (rows =
/// product of all but the last dimension), with Q's columns signed by diag(R) and transposed when
/// rows < cols. Rank < 2: InvalidArgumentError. Computed on the host (once, at build).
Initializer orthogonal(double gain = 1, Seed seed = {});
/// Identity matrix x gain for rank-2 shapes (Keras' Identity).
Initializer identity(double gain = 1);

}  // namespace tapeflow::keras::initializers

TAPEFLOW_API_END
