// Keras 3's initializers: fans, the variance-scaling formulas (sample moments), bounds, seeds.
#include <cmath>

#include <catch2/catch.hpp>

#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;
namespace ki = tf::keras::initializers;

namespace {

std::pair<double, double> moments(const tf::Tensor& t) {
    const auto v = t.to_vector<double>();
    double mean = 0, sq = 0;
    for (double x : v)
        mean += x;
    mean /= double(v.size());
    for (double x : v)
        sq += (x - mean) * (x - mean);
    return {mean, std::sqrt(sq / double(v.size()))};
}

}  // namespace

TEST_CASE("compute_fans follows Keras", "[keras][initializers]") {
    CHECK(ki::compute_fans({}) == std::pair<double, double>{1, 1});
    CHECK(ki::compute_fans({7}) == std::pair<double, double>{7, 7});
    CHECK(ki::compute_fans({3, 5}) == std::pair<double, double>{3, 5});
    CHECK(ki::compute_fans({3, 3, 4, 8}) == std::pair<double, double>{36, 72});
}

TEST_CASE("variance-scaling initializers have Keras' spread", "[keras][initializers]") {
    const tf::Shape shape{400, 300};
    const double fan_in = 400, fan_avg = 350;
    SECTION("glorot_uniform: U(+-sqrt(6 / (in + out)))") {
        const tf::Tensor t = ki::glorot_uniform(1)(shape, tf::float32);
        const double limit = std::sqrt(6.0 / (400 + 300));
        CHECK(tf::reduce_max(tf::abs(t)).item<double>() <= limit);
        CHECK(moments(t).second == Approx(limit / std::sqrt(3.0)).epsilon(0.02));
    }
    SECTION("truncated normals keep the intended standard deviation") {
        CHECK(moments(ki::he_normal(2)(shape, tf::float32)).second ==
              Approx(std::sqrt(2 / fan_in)).epsilon(0.02));
        CHECK(moments(ki::glorot_normal(3)(shape, tf::float32)).second ==
              Approx(std::sqrt(1 / fan_avg)).epsilon(0.02));
        const tf::Tensor t = ki::lecun_normal(4)(shape, tf::float32);
        CHECK(moments(t).second == Approx(std::sqrt(1 / fan_in)).epsilon(0.02));
        // Truncated at two standard deviations of the underlying normal.
        CHECK(tf::reduce_max(tf::abs(t)).item<double>() <=
              2 * std::sqrt(1 / fan_in) / 0.87962566103423978 + 1e-6);
    }
    SECTION("he_uniform") {
        const tf::Tensor t = ki::he_uniform(5)(shape, tf::float32);
        CHECK(tf::reduce_max(tf::abs(t)).item<double>() <= std::sqrt(6 / fan_in));
    }
}

TEST_CASE("simple initializers and seeds", "[keras][initializers]") {
    CHECK(moments(ki::random_normal(0, 0.05, 9)({200, 200}, tf::float32)).second ==
          Approx(0.05).epsilon(0.02));
    const tf::Tensor u = ki::random_uniform()({1000}, tf::float32);
    CHECK(tf::reduce_max(tf::abs(u)).item<double>() <= 0.05);
    CHECK(tf::reduce_sum(ki::zeros()({3, 2}, tf::float32)).item<double>() == 0);
    CHECK(tf::reduce_sum(ki::ones()({3, 2}, tf::float32)).item<double>() == 6);
    CHECK(tf::reduce_sum(ki::constant(2.5)({2}, tf::float32)).item<double>() == 5);
    // A seeded initializer gives the same values each call (Keras 3's rule for integer seeds).
    const auto init = ki::glorot_uniform(42);
    CHECK(tf::reduce_all(tf::equal(init({4, 4}, tf::float32), init({4, 4}, tf::float32)))
              .item<bool>());
    CHECK(ki::random_normal(0, 1, 1)({8}, tf::float32).to_vector<float>() !=
          ki::random_normal(0, 1, 2)({8}, tf::float32).to_vector<float>());
}

TEST_CASE("orthogonal gives orthonormal rows or columns", "[keras][initializers]") {
    for (const tf::Shape& shape : {tf::Shape{6, 4}, tf::Shape{4, 6}, tf::Shape{2, 3, 5}}) {
        const tf::Tensor q = ki::orthogonal(2.0, 3)(shape, tf::float32);
        REQUIRE(q.shape() == shape);
        const int64_t cols = shape[-1], rows = shape.num_elements() / cols;
        const tf::Tensor m = tf::reshape(q, tf::Shape{rows, cols});
        const bool tall = rows >= cols;
        const tf::Tensor gram = tf::matmul(m, m, tall, !tall) / 4.0;  // gain^2
        const tf::Tensor eye = tf::eye(tall ? cols : rows);
        CHECK(tf::reduce_max(tf::abs(gram - eye)).item<double>() < 1e-5);
    }
    CHECK_THROWS_AS(ki::orthogonal()({3}, tf::float32), tf::errors::InvalidArgumentError);
    CHECK_THROWS_AS(ki::variance_scaling(1, "fan_sideways"), tf::errors::InvalidArgumentError);
}
