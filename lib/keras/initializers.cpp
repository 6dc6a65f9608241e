// Keras 3's initializers as tf::Initializer callables over tf::random (counter-based, so a seeded
// initializer gives the same values on every call and every device).
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <tapeflow/core/device.hpp>
#include <tapeflow/core/error.hpp>
#include <tapeflow/keras/initializers.hpp>
#include <tapeflow/ops/creation.hpp>
#include <tapeflow/random.hpp>

namespace tapeflow::keras::initializers {

namespace {

// The standard deviation of a unit normal truncated to [-2, 2] (Keras divides by it).
constexpr double kTruncatedStddev = 0.87962566103423978;

// Keras 3: an initializer seeded with an integer gives the same values on every call. tf::random
// continues a seeded stream on each call (TensorFlow 2's rule), so a seeded initializer keeps its
// first result per shape, dtype and device and hands it out again (tensors are immutable).
Initializer seeded(Seed seed, std::function<Tensor(const Shape&)> draw) {
    if (!seed) return draw;
    auto cache = std::make_shared<std::map<std::string, Tensor>>();
    auto mutex = std::make_shared<std::mutex>();
    return [draw = std::move(draw), cache, mutex](const Shape& s) {
        const std::string key = s.debug_string() + "@" + default_device().str();
        const std::lock_guard lock(*mutex);
        auto it = cache->find(key);
        if (it == cache->end()) it = cache->emplace(key, draw(s)).first;
        return it->second;
    };
}

[[noreturn]] void bad(const std::string& message) {
    throw errors::InvalidArgumentError("keras.initializers: " + message);
}

}  // namespace

std::pair<double, double> compute_fans(const Shape& shape) {
    const auto& d = shape.dims();
    if (d.empty()) return {1.0, 1.0};
    if (d.size() == 1) return {double(d[0]), double(d[0])};
    if (d.size() == 2) return {double(d[0]), double(d[1])};
    double receptive = 1;
    for (std::size_t i = 0; i + 2 < d.size(); ++i)
        receptive *= double(d[i]);
    return {double(d[d.size() - 2]) * receptive, double(d.back()) * receptive};
}

Initializer variance_scaling(double scale,
                             std::string_view mode,
                             std::string_view distribution,
                             Seed seed) {
    if (!(scale > 0)) bad(fmt::format("variance_scaling needs scale > 0, got {}", scale));
    if (mode != "fan_in" && mode != "fan_out" && mode != "fan_avg")
        bad(fmt::format("unknown mode '{}' (use fan_in, fan_out or fan_avg)", mode));
    if (distribution != "truncated_normal" && distribution != "untruncated_normal" &&
        distribution != "uniform")
        bad(
            fmt::format("unknown distribution '{}' (use truncated_normal, untruncated_normal or "
                        "uniform)",
                        distribution));
    return seeded(
        seed,
        [scale, mode = std::string(mode), dist = std::string(distribution), seed](const Shape& s) {
            const auto [fan_in, fan_out] = compute_fans(s);
            const double fan = mode == "fan_in"    ? fan_in
                               : mode == "fan_out" ? fan_out
                                                   : (fan_in + fan_out) / 2;
            const double variance = scale / std::max(1.0, fan);
            if (dist == "truncated_normal")
                return random::truncated_normal(
                    s, 0, std::sqrt(variance) / kTruncatedStddev, DType::float32, seed);
            if (dist == "untruncated_normal")
                return random::normal(s, 0, std::sqrt(variance), DType::float32, seed);
            const double limit = std::sqrt(3 * variance);
            return random::uniform(s, -limit, limit, DType::float32, seed);
        });
}

Initializer glorot_uniform(Seed seed) {
    return variance_scaling(1, "fan_avg", "uniform", seed);
}
Initializer glorot_normal(Seed seed) {
    return variance_scaling(1, "fan_avg", "truncated_normal", seed);
}
Initializer he_normal(Seed seed) {
    return variance_scaling(2, "fan_in", "truncated_normal", seed);
}
Initializer he_uniform(Seed seed) {
    return variance_scaling(2, "fan_in", "uniform", seed);
}
Initializer lecun_normal(Seed seed) {
    return variance_scaling(1, "fan_in", "truncated_normal", seed);
}
Initializer lecun_uniform(Seed seed) {
    return variance_scaling(1, "fan_in", "uniform", seed);
}

Initializer random_normal(double mean, double stddev, Seed seed) {
    return seeded(seed, [=](const Shape& s) {
        return random::normal(s, mean, stddev, DType::float32, seed);
    });
}

Initializer random_uniform(double minval, double maxval, Seed seed) {
    return seeded(seed, [=](const Shape& s) {
        return random::uniform(s, minval, maxval, DType::float32, seed);
    });
}

Initializer truncated_normal(double mean, double stddev, Seed seed) {
    return seeded(seed, [=](const Shape& s) {
        return random::truncated_normal(s, mean, stddev, DType::float32, seed);
    });
}

Initializer zeros() {
    return constant(0);
}
Initializer ones() {
    return constant(1);
}
Initializer constant(double value) {
    return [value](const Shape& s) {
        return fill(s, value);
    };
}

Initializer orthogonal(double gain, Seed seed) {
    return seeded(seed, [gain, seed](const Shape& s) {
        if (s.rank() < 2)
            bad(fmt::format("orthogonal needs a shape of rank >= 2, got {}", s.debug_string()));
        const int64_t cols = s[-1], rows = s.num_elements() / std::max<int64_t>(1, cols);
        const int64_t m = std::max(rows, cols), n = std::min(rows, cols);
        // Modified Gram-Schmidt on the columns of a [m, n] normal matrix gives Q with R's
        // diagonal positive, which is Keras' Q * sign(diag(R)).
        std::vector<double> a =
            random::normal({m, n}, 0, 1, DType::float64, seed).to_vector<double>();
        for (int64_t j = 0; j < n; ++j) {
            for (int64_t k = 0; k < j; ++k) {
                double dot = 0;
                for (int64_t i = 0; i < m; ++i)
                    dot += a[i * n + k] * a[i * n + j];
                for (int64_t i = 0; i < m; ++i)
                    a[i * n + j] -= dot * a[i * n + k];
            }
            double norm = 0;
            for (int64_t i = 0; i < m; ++i)
                norm += a[i * n + j] * a[i * n + j];
            norm = std::sqrt(norm);
            for (int64_t i = 0; i < m; ++i)
                a[i * n + j] /= norm > 0 ? norm : 1;
        }
        std::vector<float> q(static_cast<std::size_t>(m * n));
        for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < n; ++j) {
                // rows < cols: Q is [cols, rows] and the kernel is its transpose.
                const int64_t at = rows < cols ? j * m + i : i * n + j;
                q[static_cast<std::size_t>(at)] = static_cast<float>(gain * a[i * n + j]);
            }
        return constant(q, s);
    });
}

Initializer identity(double gain) {
    return [gain](const Shape& s) {
        if (s.rank() != 2)
            bad(fmt::format("identity needs a rank-2 shape, got {}", s.debug_string()));
        std::vector<float> v(static_cast<std::size_t>(s.num_elements()), 0.f);
        for (int64_t i = 0; i < std::min(s[0], s[1]); ++i)
            v[static_cast<std::size_t>(i * s[1] + i)] = static_cast<float>(gain);
        return constant(v, s);
    };
}

}  // namespace tapeflow::keras::initializers
