// Helpers shared by the tests/nn files: values of a tensor as doubles, the InvalidArgumentError
// check with message contents, and a gradient-as-a-function wrapper for second-order checks.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <tapeflow/tapeflow.hpp>

#include "support/gradcheck.hpp"

namespace nn_testing {

namespace tf = tapeflow;
using Tensors = std::vector<tf::Tensor>;

inline std::vector<double> values(const tf::Tensor& t) {
    return t.to_vector<double>();
}

/// f() must throw InvalidArgumentError whose message contains `a` and `b`.
template <class F>
void check_throws_with(F&& f, const std::string& a, const std::string& b = "") {
    try {
        f();
        FAIL("no InvalidArgumentError");
    } catch (const tf::errors::InvalidArgumentError& e) {
        const std::string what = e.what();
        INFO(what);
        CHECK(what.find(a) != std::string::npos);
        CHECK(what.find(b) != std::string::npos);
    }
}

/// d(sum(f(inputs) * w))/d(inputs[wrt]) as a function of the inputs: finite differences of it
/// check second derivatives. w is drawn once (a seeded random op gives new numbers each call).
inline tf::testing::TensorFn gradient_fn(const tf::testing::TensorFn& f, std::size_t wrt = 0) {
    auto w = std::make_shared<tf::Tensor>();
    return [f, wrt, w](const Tensors& in) {
        tf::GradientTape tape;
        for (const auto& t : in)
            tape.watch(t);
        const tf::Tensor y = f(in);
        if (!w->defined()) *w = tf::testing::random_f64(y.shape(), -1, 1, 17);
        return tape.gradient(tf::reduce_sum(y * *w), in[wrt]).dense();
    };
}

}  // namespace nn_testing
