// Helpers for the keras suite: finite-difference checks of a function's gradient with respect to
// float64 Variables (layer weights), complementing tapeflow::testing::check_gradients (inputs).
#pragma once

#include <cmath>
#include <functional>
#include <vector>

#include <catch2/catch.hpp>

#include <tapeflow/tapeflow.hpp>

#include "support/gradcheck.hpp"

namespace tapeflow::testing {

/// Compares the tape's gradient of sum(f() * w) (w a fixed random direction) with respect to each
/// float64 variable against central differences, element by element.
inline void check_variable_gradients(const std::function<Tensor()>& f,
                                     std::vector<Variable> vars,
                                     double rtol = 1e-6,
                                     double atol = 1e-8,
                                     double eps = 1e-6) {
    const Tensor direction = random_f64(f().shape(), -1, 1, 7);
    auto objective = [&] {
        return reduce_sum(f() * direction);
    };
    std::vector<Gradient> grads;
    {
        GradientTape tape;
        const Tensor y = objective();
        grads = tape.gradient(y, vars);
    }
    for (std::size_t i = 0; i < vars.size(); ++i) {
        Variable& v = vars[i];
        REQUIRE(v.dtype() == DType::float64);
        REQUIRE(grads[i].defined());
        const Tensor original = v.value();
        const std::vector<double> base = original.to_vector<double>();
        const std::vector<double> g = grads[i].dense().to_vector<double>();
        for (std::size_t j = 0; j < base.size(); ++j) {
            std::vector<double> moved = base;
            moved[j] = base[j] + eps;
            v.assign(constant(moved, v.shape(), DType::float64));
            const double up = objective().item<double>();
            moved[j] = base[j] - eps;
            v.assign(constant(moved, v.shape(), DType::float64));
            const double down = objective().item<double>();
            v.assign(original);
            const double numeric = (up - down) / (2 * eps);
            INFO(v.name() << "[" << j << "]: tape " << g[j] << ", finite differences " << numeric);
            CHECK(std::abs(g[j] - numeric) <= atol + rtol * std::abs(numeric));
        }
    }
}

/// Element-wise |a - b| <= atol + rtol |b|, with the first mismatch named.
inline void check_close(const Tensor& a, const Tensor& b, double rtol = 1e-6, double atol = 1e-6) {
    REQUIRE(a.shape() == b.shape());
    const auto x = a.to_vector<double>(), y = b.to_vector<double>();
    for (std::size_t i = 0; i < x.size(); ++i) {
        INFO("element " << i << ": " << x[i] << " vs " << y[i]);
        REQUIRE(std::abs(x[i] - y[i]) <= atol + rtol * std::abs(y[i]));
    }
}

}  // namespace tapeflow::testing
