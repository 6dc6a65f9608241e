// Finite-difference gradient checks (see gradcheck.hpp).
#include "support/gradcheck.hpp"

#include <cmath>

#include <catch2/catch.hpp>

namespace tapeflow::testing {
namespace {

double contract(const Tensor& y, const std::vector<double>& w) {
    const std::vector<double> v = y.to_vector<double>();
    double s = 0;
    for (std::size_t i = 0; i < v.size(); ++i)
        s += v[i] * w[i];
    return s;
}

}  // namespace

Tensor random_f64(const Shape& shape, double lo, double hi, uint64_t seed) {
    return random::uniform(shape, lo, hi, DType::float64, seed);
}

void check_gradients(
    const TensorFn& f, const std::vector<Tensor>& inputs, double rtol, double atol, double eps) {
    const Tensor y0 = f(inputs);
    REQUIRE(y0.defined());
    REQUIRE(y0.dtype() == DType::float64);
    const Tensor w = random::normal(y0.shape(), 0, 1, DType::float64, 12345);
    const std::vector<double> wv = w.to_vector<double>();

    std::vector<Gradient> analytic;
    {
        GradientTape tape;
        tape.watch(inputs);
        const Tensor y = f(inputs);
        GradientOptions options;
        options.output_gradients = {w};
        analytic = tape.gradient(y, inputs, options);
    }
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        if (inputs[i].dtype() != DType::float64) continue;
        const std::vector<double> x = inputs[i].to_vector<double>();
        std::vector<double> numeric(x.size());
        for (std::size_t j = 0; j < x.size(); ++j) {
            std::vector<Tensor> shifted = inputs;
            std::vector<double> xp = x;
            xp[j] = x[j] + eps;
            shifted[i] = constant(xp, inputs[i].shape());
            const double up = contract(f(shifted), wv);
            xp[j] = x[j] - eps;
            shifted[i] = constant(xp, inputs[i].shape());
            const double down = contract(f(shifted), wv);
            numeric[j] = (up - down) / (2 * eps);
        }
        std::vector<double> got(x.size(), 0.0);
        if (analytic[i].defined()) got = analytic[i].dense().to_vector<double>();
        REQUIRE(got.size() == numeric.size());
        for (std::size_t j = 0; j < x.size(); ++j) {
            INFO("input " << i << " element " << j << ": tape " << got[j]
                          << " vs finite differences " << numeric[j]);
            CHECK(std::abs(got[j] - numeric[j]) <= atol + rtol * std::abs(numeric[j]) + 1e-4 * eps);
        }
    }
}

}  // namespace tapeflow::testing
