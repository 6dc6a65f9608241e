// Clipping: the clip cases of `tests/golden/tf-training.json`, TensorFlow's
// edge conventions (inclusive bounds, finite gradient at 0, NaN for an infinite global norm),
// IndexedSlices, and finite-difference gradients.
#include <cmath>

#include <catch2/catch.hpp>

#include <tapeflow/tapeflow.hpp>

#include "support/gradcheck.hpp"

namespace tf = tapeflow;

namespace {
std::vector<double> vals(const tf::Tensor& t) {
    return t.to_vector<double>();
}

void check_near(const std::vector<double>& got, const std::vector<double>& want) {
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < got.size(); ++i)
        CHECK(got[i] == Approx(want[i]).margin(1e-6));
}
}  // namespace

TEST_CASE("clip_by_value golden cases", "[clip]") {
    auto t = tf::constant({{-5.0, 2.0, 3.0}, {4.0, 5.0, 6.0}});
    check_near(vals(tf::clip_by_value(t, -4.4, 4.4)), {-4.4, 2, 3, 4, 4.4, 4.4});
    auto ti = tf::constant({{1, 2, 3}, {4, 5, 6}});
    CHECK(tf::clip_by_value(ti, tf::constant({{2, 2, 2}, {3, 3, 3}}), tf::constant(4))
              .to_vector<int>() == std::vector<int>{2, 2, 3, 4, 4, 4});
    CHECK(tf::clip_by_value(
              ti, tf::constant({{2, 2, 2}, {5, 5, 5}}), tf::constant({{5, 5, 5}, {7, 7, 7}}))
              .to_vector<int>() == std::vector<int>{2, 2, 3, 5, 5, 6});
}

TEST_CASE("clip_by_value on IndexedSlices clips only the values", "[clip]") {
    tf::IndexedSlices s{
        tf::constant({{{-3.0, 0.0, 0.0}, {4.0, 0.0, 0.0}}, {{0.0, 2.0, 0.0}, {0.0, 0.0, -1.0}}}),
        tf::constant({2, 6}),
        tf::Shape{10, 2, 3}};
    tf::Gradient g = tf::clip_by_value(tf::Gradient(s), -2.0, -1.0);
    REQUIRE(g.is_sparse());
    CHECK(g.sparse().indices.to_vector<int>() == std::vector<int>{2, 6});
    check_near(vals(g.sparse().values), {-2, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1});
}

TEST_CASE("clip_by_value: errors and gradient at the bounds", "[clip][errors]") {
    auto t = tf::constant({1.0, 2.0, 3.0});
    CHECK_THROWS_AS(tf::clip_by_value(t, tf::constant({1.f}), tf::constant({2.f})),
                    tf::errors::InvalidArgumentError);
    CHECK_THROWS_AS(tf::clip_by_value(t, tf::constant({{0.0}, {0.0}}), tf::constant(5.0)),
                    tf::errors::InvalidArgumentError);  // would broadcast the result
    tf::GradientTape tape;
    tape.watch(t);
    auto y = tf::clip_by_value(t, 1.0, 2.0);  // bounds inclusive: gradient 1 at 1 and 2
    CHECK(vals(tape.gradient(y, t)) == std::vector<double>{1, 1, 0});
}

TEST_CASE("clip_by_norm golden cases", "[clip]") {
    auto t = tf::constant({{-3.0, 0.0, 0.0}, {4.0, 0.0, 0.0}});
    check_near(vals(tf::clip_by_norm(t, 4.0)), {-2.4, 0, 0, 3.2, 0, 0});
    check_near(vals(tf::clip_by_norm(tf::zeros({2, 3}, tf::float64), 6.0)),
               std::vector<double>(6, 0.0));
    auto u = tf::constant({{-3.0, 0.0, 0.0}, {4.0, 0.0, 3.0}});
    check_near(vals(tf::clip_by_norm(u, 4.0, tf::Axes(std::vector<int64_t>{0}))),
               {-2.4, 0, 0, 3.2, 0, 3});
    check_near(vals(tf::clip_by_norm(u, 6.0, 1)), {-3, 0, 0, 4, 0, 3});
    CHECK_THROWS_AS(tf::clip_by_norm(u, tf::constant({1.0, 2.0})),
                    tf::errors::InvalidArgumentError);
}

TEST_CASE("clip_by_norm has a finite gradient (ones) at zero", "[clip]") {
    auto t = tf::zeros({2, 3}, tf::float64);
    tf::GradientTape tape;
    tape.watch(t);
    auto y = tf::clip_by_norm(t, 4.0);
    CHECK(vals(tape.gradient(y, t)) == std::vector<double>(6, 1.0));
}

TEST_CASE("clip_by_average_norm golden cases", "[clip]") {
    auto t = tf::constant({{-3.0, 0.0, 0.0}, {4.0, 0.0, 0.0}});
    check_near(vals(tf::clip_by_average_norm(t, 0.8)), {-2.88, 0, 0, 3.84, 0, 0});
    check_near(vals(tf::clip_by_average_norm(tf::zeros({2, 3}, tf::float64), 0.9)),
               std::vector<double>(6, 0.0));
}

TEST_CASE("clip_by_global_norm golden cases", "[clip]") {
    auto a = tf::constant({{-2.0, 0.0, 0.0}, {4.0, 0.0, 0.0}});
    auto b = tf::constant({1.0, -2.0});
    auto [clipped, norm] = tf::clip_by_global_norm({a, b}, 4.0);
    CHECK(norm.item<double>() == Approx(5.0));
    check_near(vals(clipped[0]), {-1.6, 0, 0, 3.2, 0, 0});
    check_near(vals(clipped[1]), {0.8, -1.6});
    auto [zero, zero_norm] =
        tf::clip_by_global_norm({tf::zeros({2, 3}, tf::float64), tf::zeros({2}, tf::float64)}, 6.0);
    CHECK(zero_norm.item<double>() == 0.0);
    check_near(vals(zero[1]), {0, 0});
    // IndexedSlices stay sparse; undefined entries stay undefined.
    tf::Gradient slices(tf::IndexedSlices{b, tf::constant({3, 4}), tf::Shape{5}});
    auto [g, gnorm] =
        tf::clip_by_global_norm(std::vector<tf::Gradient>{a, slices, tf::Gradient()}, 4.0);
    CHECK(gnorm.item<double>() == Approx(5.0));
    REQUIRE(g[1].is_sparse());
    check_near(vals(g[1].sparse().values), {0.8, -1.6});
    CHECK_FALSE(g[2].defined());
    CHECK(tf::global_norm(std::vector<tf::Gradient>{a, slices}).item<double>() == Approx(5.0));
}

TEST_CASE("an infinite global norm turns everything into NaN", "[clip]") {
    auto a = tf::constant({1.0, static_cast<double>(INFINITY)});
    auto b = tf::constant({2.0});
    auto [clipped, norm] = tf::clip_by_global_norm({a, b}, 1.0);
    CHECK(std::isinf(norm.item<double>()));
    for (double v : vals(clipped[1]))
        CHECK(std::isnan(v));
    CHECK_THROWS_AS(tf::clip_by_global_norm({a}, 0.0), tf::errors::InvalidArgumentError);
}

TEST_CASE("clipping gradients match finite differences", "[clip][gradcheck]") {
    using tf::testing::check_gradients;
    using tf::testing::random_f64;
    check_gradients([](const std::vector<tf::Tensor>& in) { return tf::clip_by_norm(in[0], 0.5); },
                    {random_f64({2, 3}, -1, 1, 7)});
    check_gradients(
        [](const std::vector<tf::Tensor>& in) { return tf::clip_by_norm(in[0], 0.5, 1); },
        {random_f64({2, 3}, -1, 1, 8)});
    check_gradients(
        [](const std::vector<tf::Tensor>& in) {
            auto [clipped, norm] = tf::clip_by_global_norm({in[0], in[1]}, 0.7);
            return clipped[0] * 2.0 + tf::reduce_sum(clipped[1]);
        },
        {random_f64({2, 2}, -1, 1, 9), random_f64({3}, -1, 1, 10)});
    check_gradients(
        [](const std::vector<tf::Tensor>& in) { return tf::clip_by_average_norm(in[0], 0.1); },
        {random_f64({4}, -1, 1, 11)});
}
