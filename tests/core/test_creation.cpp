// Every creation function: values, dtypes, shapes and bad inputs.
#include <catch2/catch.hpp>

#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;
using Catch::Contains;

TEST_CASE("constant infers the dtype from the C++ type", "[creation]") {
    CHECK(tf::constant(1.5f).dtype() == tf::float32);
    CHECK(tf::constant(1.5).dtype() == tf::float64);
    CHECK(tf::constant(1).dtype() == tf::int32);
    CHECK(tf::constant(int64_t{1}).dtype() == tf::int64);
    CHECK(tf::constant(true).dtype() == tf::bool_);
    CHECK(tf::constant(uint8_t{7}).dtype() == tf::uint8);
    CHECK(tf::constant(1.5f).shape() == tf::Shape{});
}

TEST_CASE("constant with an explicit dtype converts", "[creation]") {
    auto t = tf::constant(2.75, tf::int32);
    CHECK(t.dtype() == tf::int32);
    CHECK(t.item<int>() == 2);
    CHECK(tf::constant({1, 2}, tf::float64).to_vector<double>() == std::vector<double>{1, 2});
    CHECK(tf::constant(std::vector<float>{1, 2, 3, 4}, {2, 2}, tf::int64).dtype() == tf::int64);
}

TEST_CASE("nested initializer lists give rank 1, 2 and 3", "[creation]") {
    auto v = tf::constant({1.f, 2.f, 3.f});
    CHECK(v.shape() == tf::Shape{3});
    auto m = tf::constant({{1, 2, 3}, {4, 5, 6}});
    CHECK(m.shape() == tf::Shape{2, 3});
    CHECK(m.to_vector<int>() == std::vector<int>{1, 2, 3, 4, 5, 6});
    auto c = tf::constant({{{1.0, 2.0}, {3.0, 4.0}}, {{5.0, 6.0}, {7.0, 8.0}}});
    CHECK(c.shape() == tf::Shape{2, 2, 2});
    CHECK(c.dtype() == tf::float64);
    CHECK(c.to_vector<double>()[7] == 8.0);
    auto b = tf::constant({{true, false}, {false, true}});
    CHECK(b.dtype() == tf::bool_);
    CHECK(b.to_vector<bool>() == std::vector<bool>{true, false, false, true});
}

TEST_CASE("ragged initializer lists raise InvalidArgumentError", "[creation][errors]") {
    CHECK_THROWS_AS(tf::constant({{1, 2}, {3}}), tf::errors::InvalidArgumentError);
    CHECK_THROWS_WITH(tf::constant({{1, 2}, {3}}), Contains("non-rectangular"));
    CHECK_THROWS_AS(tf::constant({{{1, 2}, {3, 4}}, {{5, 6}}}), tf::errors::InvalidArgumentError);
    CHECK_THROWS_AS(tf::constant({{{1, 2}, {3, 4}}, {{5, 6}, {7}}}),
                    tf::errors::InvalidArgumentError);
}

TEST_CASE("constant from a vector and a shape", "[creation]") {
    auto t = tf::constant(std::vector<float>{1, 2, 3, 4, 5, 6}, {3, 2});
    CHECK(t.shape() == tf::Shape{3, 2});
    CHECK(t.to_vector<float>()[5] == 6.f);
    auto filled = tf::constant(std::vector<int>{7}, {2, 2});  // one value fills the shape
    CHECK(filled.to_vector<int>() == std::vector<int>{7, 7, 7, 7});
    CHECK(tf::constant(std::vector<bool>{true, false}, {2}).to_vector<bool>() ==
          std::vector<bool>{true, false});
    CHECK(tf::constant(std::vector<double>{}, {0, 4}).shape() == tf::Shape{0, 4});
    CHECK_THROWS_AS(tf::constant(std::vector<float>{1, 2, 3}, {2, 2}),
                    tf::errors::InvalidArgumentError);
    CHECK_THROWS_WITH(tf::constant(std::vector<float>{1, 2, 3}, {2, 2}),
                      Contains("3 values") && Contains("(2, 2)"));
    CHECK_THROWS_AS(tf::constant(std::vector<float>{1, 2}, {2, -1}),
                    tf::errors::InvalidArgumentError);
}

TEST_CASE("fill, zeros, ones and the _like variants", "[creation]") {
    CHECK(tf::fill({2, 3}, 9.5).to_vector<float>() == std::vector<float>(6, 9.5f));
    CHECK(tf::fill({2}, 9.0, tf::int32).to_vector<int>() == std::vector<int>{9, 9});
    // 9.5 cannot be an int32 (TensorFlow's conversion error; it used to truncate to 9).
    CHECK_THROWS_AS(tf::fill({2}, 9.5, tf::int32), tf::errors::InvalidArgumentError);
    CHECK(tf::zeros({3}).to_vector<float>() == std::vector<float>(3, 0.f));
    CHECK(tf::zeros({2}, tf::int64).dtype() == tf::int64);
    CHECK(tf::ones({2, 2}, tf::bool_).to_vector<bool>() == std::vector<bool>(4, true));
    CHECK(tf::ones({1}, tf::float16).to_vector<float>() == std::vector<float>{1.f});
    auto like = tf::constant({{1, 2}, {3, 4}});
    CHECK(tf::zeros_like(like).shape() == like.shape());
    CHECK(tf::zeros_like(like).dtype() == tf::int32);
    CHECK(tf::ones_like(like).to_vector<int>() == std::vector<int>{1, 1, 1, 1});
    CHECK(tf::zeros({}).shape() == tf::Shape{});
    CHECK(tf::zeros({0}).num_elements() == 0);
    CHECK_THROWS_AS(tf::zeros({-1}), tf::errors::InvalidArgumentError);
}

TEST_CASE("range follows tf.range", "[creation]") {
    CHECK(tf::range(0, 5).to_vector<float>() == std::vector<float>{0, 1, 2, 3, 4});
    CHECK(tf::range(1, 2, 0.25).to_vector<float>() == std::vector<float>{1, 1.25, 1.5, 1.75});
    CHECK(tf::range(5, 1, -2).to_vector<float>() == std::vector<float>{5, 3});
    CHECK(tf::range(3, 18, 3, tf::int32).to_vector<int>() == std::vector<int>{3, 6, 9, 12, 15});
    CHECK(tf::range(0, 10, 3, tf::int64).to_vector<int64_t>() == std::vector<int64_t>{0, 3, 6, 9});
    CHECK(tf::range(2, 2).num_elements() == 0);
    CHECK(tf::range(0, 1, 0.1, tf::float64).num_elements() == 10);
    CHECK_THROWS_AS(tf::range(0, 5, 0), tf::errors::InvalidArgumentError);
    CHECK_THROWS_WITH(tf::range(0, 5, 0),
                      Contains("Requires delta != 0") && Contains("[Op:Range]"));
    CHECK_THROWS_WITH(tf::range(5, 0, 1), Contains("Requires start <= limit when delta > 0: 5/0"));
    CHECK_THROWS_AS(tf::range(0, 5, -1), tf::errors::InvalidArgumentError);
    CHECK_THROWS_AS(tf::range(0, 5, 0.5, tf::int32), tf::errors::InvalidArgumentError);
}

TEST_CASE("linspace includes both ends", "[creation]") {
    CHECK(tf::linspace(0, 1, 5).to_vector<float>() == std::vector<float>{0, 0.25, 0.5, 0.75, 1});
    CHECK(tf::linspace(10, 20, 1).to_vector<float>() == std::vector<float>{10});
    CHECK(tf::linspace(0, 1, 3, tf::float64).to_vector<double>() == std::vector<double>{0, 0.5, 1});
    auto l = tf::linspace(0.1, 0.7, 7, tf::float64).to_vector<double>();
    CHECK(l.back() == 0.7);
    CHECK_THROWS_AS(tf::linspace(0, 1, 0), tf::errors::InvalidArgumentError);
    CHECK_THROWS_WITH(tf::linspace(0, 1, -2), Contains("Requires num > 0: -2"));
}

TEST_CASE("eye is the identity matrix", "[creation]") {
    CHECK(tf::eye(3).to_vector<float>() == std::vector<float>{1, 0, 0, 0, 1, 0, 0, 0, 1});
    CHECK(tf::eye(2, tf::int32).dtype() == tf::int32);
    CHECK(tf::eye(0).shape() == tf::Shape{0, 0});
    CHECK_THROWS_AS(tf::eye(-1), tf::errors::InvalidArgumentError);
}

TEST_CASE("one_hot follows tf.one_hot", "[creation]") {
    auto idx = tf::constant({0, 2, -1, 1});
    auto oh = tf::one_hot(idx, 3);
    CHECK(oh.shape() == tf::Shape{4, 3});
    CHECK(oh.dtype() == tf::float32);
    CHECK(oh.to_vector<float>() == std::vector<float>{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0});
    auto on_off = tf::one_hot(tf::constant({1, 5}), 2, 5.0, -1.0);
    CHECK(on_off.to_vector<float>() == std::vector<float>{-1, 5, -1, -1});  // 5 is out of range
    auto axis0 = tf::one_hot(tf::constant({0, 1, 1}), 2, 1, 0, 0, tf::int32);
    CHECK(axis0.shape() == tf::Shape{2, 3});
    CHECK(axis0.to_vector<int>() == std::vector<int>{1, 0, 0, 0, 1, 1});
    auto batch = tf::one_hot(tf::constant({{0, 2}, {1, 0}}, tf::int64), 3, 1, 0, 1);
    CHECK(batch.shape() == tf::Shape{2, 3, 2});
    CHECK(batch.to_vector<float>() == std::vector<float>{1, 0, 0, 0, 0, 1, 0, 1, 1, 0, 0, 0});
    CHECK(tf::one_hot(tf::constant(std::vector<uint8_t>{1}, {1}), 2).to_vector<float>() ==
          std::vector<float>{0, 1});
}

TEST_CASE("one_hot rejects bad arguments", "[creation][errors]") {
    CHECK_THROWS_AS(tf::one_hot(tf::constant({0.5f}), 3), tf::errors::InvalidArgumentError);
    CHECK_THROWS_WITH(tf::one_hot(tf::constant({0.5f}), 3), Contains("[Op:OneHot]"));
    CHECK_THROWS_AS(tf::one_hot(tf::constant({1}), -1), tf::errors::InvalidArgumentError);
    CHECK_THROWS_AS(tf::one_hot(tf::constant({1}), 3, 1, 0, 2), tf::errors::InvalidArgumentError);
    CHECK_THROWS_AS(tf::one_hot(tf::constant({1}), 3, 1, 0, -2), tf::errors::InvalidArgumentError);
}
