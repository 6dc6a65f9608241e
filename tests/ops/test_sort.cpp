// top_k, sort and argsort: values and indices against std::stable_sort references for every real
// dtype (ties to the lower index, NaN largest, integer extremes), every k and axis,
// finite-difference gradients (first and second order), no gradient for indices, and the errors.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include <catch2/catch.hpp>

#include <tapeflow/ops/conv.hpp>
#include <tapeflow/ops/sort.hpp>
#include <tapeflow/tapeflow.hpp>

#include "nn/nn_testing.hpp"
#include "support/gradcheck.hpp"

namespace tf = tapeflow;
using tf::testing::check_gradients;
using tf::testing::random_f64;

namespace {

using Tensors = std::vector<tf::Tensor>;
using nn_testing::check_throws_with;
using nn_testing::gradient_fn;

// Row-wise reference along the last axis: indices stably sorted by value, descending.
std::vector<int32_t> reference_order(const std::vector<double>& v, int64_t n, bool descending) {
    std::vector<int32_t> out;
    for (std::size_t r = 0; r * static_cast<std::size_t>(n) < v.size(); ++r) {
        std::vector<int32_t> idx(static_cast<std::size_t>(n));
        std::iota(idx.begin(), idx.end(), 0);
        const double* row = v.data() + r * static_cast<std::size_t>(n);
        std::stable_sort(idx.begin(), idx.end(), [&](int32_t a, int32_t b) {
            return descending ? row[a] > row[b] : row[a] < row[b];
        });
        out.insert(out.end(), idx.begin(), idx.end());
    }
    return out;
}

// Small integers: many ties.
tf::Tensor ties(const tf::Shape& shape, tf::DType dtype, uint64_t seed = 3) {
    return tf::floor(random_f64(shape, 0, 6, seed)).cast(dtype);
}

}  // namespace

TEST_CASE("top_k values and indices, ties to the lower index, every dtype and k", "[sort]") {
    for (const tf::DType dtype :
         {tf::float32, tf::float64, tf::float16, tf::bfloat16, tf::int32, tf::int64, tf::uint8}) {
        INFO(tf::dtype_name(dtype));
        const tf::Tensor x = ties({3, 4, 9}, dtype);
        const auto xv = x.to_vector<double>();
        const auto order = reference_order(xv, 9, true);
        for (const int64_t k : {0, 1, 4, 9}) {
            INFO("k = " << k);
            const auto [values, indices] = tf::math::top_k(x, k);
            CHECK(values.shape() == tf::Shape{3, 4, k});
            CHECK(values.dtype() == dtype);
            CHECK(indices.dtype() == tf::int32);
            const auto vv = values.to_vector<double>();
            const auto iv = indices.to_vector<int32_t>();
            for (std::size_t r = 0; r < 12; ++r) {
                for (std::size_t j = 0; j < static_cast<std::size_t>(k); ++j) {
                    CHECK(iv[r * k + j] == order[r * 9 + j]);
                    CHECK(vv[r * k + j] == xv[r * 9 + order[r * 9 + j]]);
                }
            }
        }
    }
    SECTION("rank 1, empty rows, NaN ranks above every number, infinities") {
        const double nan = std::nan("");
        const double inf = std::numeric_limits<double>::infinity();
        const tf::Tensor x = tf::constant({1.0, nan, inf, -inf, nan, 2.0});
        const auto [v, i] = tf::math::top_k(x, 6);
        CHECK(i.to_vector<int32_t>() == std::vector<int32_t>{1, 4, 2, 5, 0, 3});
        CHECK(v.to_vector<double>()[2] == inf);
        const auto [ev, ei] = tf::math::top_k(tf::zeros({4, 0}), 0);
        CHECK(ev.shape() == tf::Shape{4, 0});
        const auto [zv, zi] = tf::nn::top_k(tf::zeros({0, 5}), 2);
        CHECK(zi.shape() == tf::Shape{0, 2});
    }
    SECTION("long rows (several threads, partial and full sorts)") {
        const tf::Tensor x = ties({5, 3000}, tf::float32, 9);
        const auto order = reference_order(x.to_vector<double>(), 3000, true);
        for (const int64_t k : {7, 3000}) {
            const auto iv = tf::math::top_k(x, k, false).second.to_vector<int32_t>();
            for (std::size_t r = 0; r < 5; ++r) {
                for (std::size_t j = 0; j < static_cast<std::size_t>(k); ++j) {
                    CHECK(iv[r * k + j] == order[r * 3000 + j]);
                }
            }
        }
    }
}

TEST_CASE("sort and argsort along any axis, both directions, stable", "[sort]") {
    for (const tf::DType dtype : {tf::float64, tf::float32, tf::int32, tf::uint8}) {
        INFO(tf::dtype_name(dtype));
        const tf::Tensor x = ties({4, 5, 6}, dtype, 5);
        for (const int64_t axis : {0, 1, 2, -1}) {
            for (const char* dir : {"ASCENDING", "DESCENDING"}) {
                INFO(axis << " " << dir);
                const bool desc = std::string(dir) == "DESCENDING";
                // The reference sorts the axis moved last.
                const int64_t a = axis < 0 ? axis + 3 : axis;
                std::vector<int64_t> perm{0, 1, 2};
                std::swap(perm[static_cast<std::size_t>(a)], perm[2]);
                const tf::Tensor moved = tf::transpose(x, perm);
                const int64_t n = moved.shape()[2];
                const auto mv = moved.to_vector<double>();
                const auto order = reference_order(mv, n, desc);
                const auto idx =
                    tf::transpose(tf::argsort(x, axis, dir), perm).to_vector<int32_t>();
                const auto val = tf::transpose(tf::sort(x, axis, dir), perm).to_vector<double>();
                CHECK(idx == order);
                for (std::size_t e = 0; e < mv.size(); ++e) {
                    const std::size_t row = e / static_cast<std::size_t>(n);
                    CHECK(val[e] == mv[row * static_cast<std::size_t>(n) + order[e]]);
                }
                CHECK(tf::argsort(x, axis, dir, true).to_vector<int32_t>() ==
                      tf::argsort(x, axis, dir).to_vector<int32_t>());
            }
        }
    }
    SECTION("integer extremes sort exactly") {
        const int32_t lo = std::numeric_limits<int32_t>::min();
        const int32_t hi = std::numeric_limits<int32_t>::max();
        const tf::Tensor x = tf::constant({hi, 0, lo, -1, lo, hi});
        CHECK(tf::sort(x).to_vector<int32_t>() == std::vector<int32_t>{lo, lo, -1, 0, hi, hi});
        CHECK(tf::argsort(x).to_vector<int32_t>() == std::vector<int32_t>{2, 4, 3, 1, 0, 5});
        CHECK(tf::argsort(x, -1, "DESCENDING").to_vector<int32_t>() ==
              std::vector<int32_t>{0, 5, 1, 3, 2, 4});
        const tf::Tensor u =
            tf::constant(std::vector<int32_t>{255, 0, 7, 255}, {4}).cast(tf::uint8);
        CHECK(tf::sort(u).cast(tf::int32).to_vector<int32_t>() ==
              std::vector<int32_t>{0, 7, 255, 255});
    }
}

TEST_CASE("top_k and sort gradients; argsort has none", "[sort]") {
    const tf::Tensor x = random_f64({3, 7}, -1, 1, 11);  // distinct values: no ties
    const auto top = [](const Tensors& in) {
        return tf::math::top_k(in[0], 3).first;
    };
    check_gradients(top, {x});
    check_gradients(gradient_fn(top), {x});
    for (const int64_t axis : {0, 1}) {
        for (const char* dir : {"ASCENDING", "DESCENDING"}) {
            const auto s = [=](const Tensors& in) {
                return tf::sort(in[0] * in[0], axis, dir);
            };
            check_gradients(s, {x});
            check_gradients(gradient_fn(s), {x});
        }
    }
    SECTION("the gradient of top_k is the upstream scattered to the indices") {
        tf::GradientTape tape;
        const tf::Tensor v = tf::constant({{3.0, 1.0, 3.0, 2.0}});
        tape.watch(v);
        const auto [values, indices] = tf::math::top_k(v, 2);
        const tf::Tensor loss = tf::reduce_sum(values * tf::constant({{10.0, 20.0}}));
        CHECK(tape.gradient(loss, v).dense().to_vector<double>() ==
              std::vector<double>{10, 0, 20, 0});
    }
    SECTION("argsort: no gradient, zeros on request") {
        tf::GradientTape tape(true);
        tape.watch(x);
        const tf::Tensor i = tf::argsort(x);
        CHECK_FALSE(tape.gradient(i, x).defined());
        tf::GradientOptions zeros;
        zeros.unconnected_gradients = tf::UnconnectedGradients::zero;
        CHECK(tape.gradient(i, x, zeros).dense().to_vector<double>() ==
              std::vector<double>(21, 0.0));
    }
}

TEST_CASE("top_k, sort and argsort errors", "[sort][errors]") {
    const tf::Tensor x = random_f64({2, 5});
    check_throws_with([&] { tf::math::top_k(x, 6); }, "k=6", "[2,5]");
    check_throws_with([&] { tf::math::top_k(x, 6); }, "use k <= 5", "[Op:TopKV2]");
    check_throws_with([&] { tf::math::top_k(x, -1); }, "k >= 0");
    check_throws_with([&] { tf::math::top_k(tf::constant(1.0), 1); }, "1-dimensional", "[]");
    check_throws_with([&] { tf::math::top_k(tf::constant({true, false}), 1); }, "bool");
    check_throws_with([&] { tf::sort(x, -1, "UP"); }, "ASCENDING", "UP");
    check_throws_with([&] { tf::argsort(x, 2); }, "axis");
    check_throws_with([&] { tf::sort(tf::constant(1.0)); }, "scalar");
}
