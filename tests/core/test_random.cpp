// tf::random: the Philox generator against its published test vectors, TensorFlow's seed rules,
// reproducibility for any thread count, and the moments of each distribution.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>

#include <omp.h>

#include <tapeflow/tapeflow.hpp>

#include "kernels/shared/philox.hpp"

namespace tf = tapeflow;
namespace philox = tf::philox;

TEST_CASE("Philox4x32-10 matches the Random123 known-answer vectors", "[random]") {
    auto run = [](philox::Block counter, philox::Key key) { return philox::generate(key, counter); };
    auto b = run({{0, 0, 0, 0}}, {{0, 0}});
    CHECK(b.v[0] == 0x6627e8d5U);
    CHECK(b.v[1] == 0xe169c58dU);
    CHECK(b.v[2] == 0xbc57ac4cU);
    CHECK(b.v[3] == 0x9b00dbd8U);
    b = run({{0xffffffffU, 0xffffffffU, 0xffffffffU, 0xffffffffU}}, {{0xffffffffU, 0xffffffffU}});
    CHECK(b.v[0] == 0x408f276dU);
    CHECK(b.v[1] == 0x41c83b0eU);
    CHECK(b.v[2] == 0xa20bc7c6U);
    CHECK(b.v[3] == 0x6d5451fdU);
    b = run({{0x243f6a88U, 0x85a308d3U, 0x13198a2eU, 0x03707344U}}, {{0xa4093822U, 0x299f31d0U}});
    CHECK(b.v[0] == 0xd16cfe09U);
    CHECK(b.v[1] == 0x94fdccebU);
    CHECK(b.v[2] == 0x5001e420U);
    CHECK(b.v[3] == 0x24126ea1U);
}

TEST_CASE("set_seed replays the whole sequence; calls advance it", "[random]") {
    tf::random::set_seed(42);
    auto a1 = tf::random::normal({5}).to_vector<float>();
    auto a2 = tf::random::normal({5}).to_vector<float>();
    auto a3 = tf::random::uniform({5}, 0, 1, tf::float32, 7).to_vector<float>();
    auto a4 = tf::random::uniform({5}, 0, 1, tf::float32, 7).to_vector<float>();
    CHECK(a1 != a2);  // each op without a seed takes the next op seed
    CHECK(a3 != a4);  // the same op seed twice advances the stream
    tf::random::set_seed(42);
    CHECK(tf::random::normal({5}).to_vector<float>() == a1);
    CHECK(tf::random::normal({5}).to_vector<float>() == a2);
    CHECK(tf::random::uniform({5}, 0, 1, tf::float32, 7).to_vector<float>() == a3);
    CHECK(tf::random::uniform({5}, 0, 1, tf::float32, 7).to_vector<float>() == a4);
    tf::random::set_seed(43);
    CHECK(tf::random::normal({5}).to_vector<float>() != a1);
    CHECK(tf::random::get_global_seed() == 43U);
}

TEST_CASE("values do not depend on the thread count or the tensor size", "[random]") {
    const int saved = omp_get_max_threads();
    tf::random::set_seed(5);
    auto many = tf::random::normal({100000}, 0, 1, tf::float32, 3).to_vector<float>();
    tf::random::set_seed(5);
    omp_set_num_threads(1);
    auto one = tf::random::normal({100000}, 0, 1, tf::float32, 3).to_vector<float>();
    omp_set_num_threads(saved);
    CHECK(many == one);
    tf::random::set_seed(5);
    auto prefix = tf::random::normal({10}, 0, 1, tf::float32, 3).to_vector<float>();
    CHECK(std::equal(prefix.begin(), prefix.end(), many.begin()));
}

TEST_CASE("float32 values are the float64 values rounded", "[random]") {
    tf::random::set_seed(11);
    auto f32 = tf::random::normal({64}, 1, 2, tf::float32, 1).to_vector<float>();
    tf::random::set_seed(11);
    auto f64 = tf::random::normal({64}, 1, 2, tf::float64, 1).to_vector<double>();
    for (std::size_t i = 0; i < f32.size(); ++i) CHECK(f32[i] == static_cast<float>(f64[i]));
}

namespace {

struct Moments {
    double mean = 0, variance = 0, min = INFINITY, max = -INFINITY;
};

Moments moments(const std::vector<double>& v) {
    Moments m;
    for (double x : v) {
        m.mean += x;
        m.min = std::min(m.min, x);
        m.max = std::max(m.max, x);
    }
    m.mean /= static_cast<double>(v.size());
    for (double x : v) m.variance += (x - m.mean) * (x - m.mean);
    m.variance /= static_cast<double>(v.size());
    return m;
}

}  // namespace

// With n = 200000 samples, the standard error of the mean is sigma/447; the bounds below are
// about 6 standard errors, so a correct generator fails them with probability < 1e-8.
TEST_CASE("moments of each distribution", "[random]") {
    tf::random::set_seed(2024);
    const int64_t n = 200000;
    for (auto dtype : {tf::float32, tf::float64}) {
        CAPTURE(tf::dtype_name(dtype));
        auto normal = moments(tf::random::normal({n}, 3, 2, dtype).to_vector<double>());
        CHECK(normal.mean == Approx(3).margin(6 * 2 / std::sqrt(n)));
        CHECK(normal.variance == Approx(4).margin(0.05));
        auto uniform = moments(tf::random::uniform({n}, -1, 3, dtype).to_vector<double>());
        CHECK(uniform.mean == Approx(1).margin(0.02));
        CHECK(uniform.variance == Approx(16.0 / 12).margin(0.02));
        CHECK(uniform.min >= -1);
        CHECK(uniform.max < 3);
        // Normal truncated to +-2 sigma: variance factor 1 - 2*2*phi(2)/(2*Phi(2)-1) = 0.7737413
        auto trunc = moments(tf::random::truncated_normal({n}, 1, 0.5, dtype).to_vector<double>());
        CHECK(trunc.mean == Approx(1).margin(0.01));
        CHECK(trunc.variance == Approx(0.25 * 0.7737413).margin(0.004));
        CHECK(trunc.min >= 0);
        CHECK(trunc.max <= 2);
    }
    auto half = moments(tf::random::normal({20000}, 0, 1, tf::float16).to_vector<double>());
    CHECK(half.mean == Approx(0).margin(0.05));
    auto ints = tf::random::uniform({n}, -3, 5, tf::int32).to_vector<int>();
    CHECK(*std::min_element(ints.begin(), ints.end()) == -3);
    CHECK(*std::max_element(ints.begin(), ints.end()) == 4);
    std::vector<int> counts(8);
    for (int v : ints) ++counts[static_cast<std::size_t>(v + 3)];
    for (int c : counts) CHECK(c == Approx(n / 8.0).margin(6 * std::sqrt(n / 8.0)));
    auto big = tf::random::uniform({1000}, 0, 1e12, tf::int64).to_vector<int64_t>();
    CHECK(*std::max_element(big.begin(), big.end()) > int64_t{1} << 32);
}

TEST_CASE("shuffle permutes along the first axis", "[random]") {
    tf::random::set_seed(3);
    std::vector<int> values(200);
    std::iota(values.begin(), values.end(), 0);
    auto rows = tf::constant(values, {100, 2});
    auto shuffled = tf::random::shuffle(rows).to_vector<int>();
    CHECK(shuffled != values);
    std::vector<int> firsts;
    for (std::size_t r = 0; r < 100; ++r) {
        CHECK(shuffled[2 * r + 1] == shuffled[2 * r] + 1);  // rows move whole
        firsts.push_back(shuffled[2 * r]);
    }
    std::sort(firsts.begin(), firsts.end());
    for (int r = 0; r < 100; ++r) CHECK(firsts[static_cast<std::size_t>(r)] == 2 * r);
    tf::random::set_seed(3);
    CHECK(tf::random::shuffle(rows).to_vector<int>() == shuffled);
    CHECK(tf::random::shuffle(tf::constant(5)).item<int>() == 5);
}

TEST_CASE("random ops reject bad arguments", "[random][errors]") {
    using E = tf::errors::InvalidArgumentError;
    CHECK_THROWS_AS(tf::random::normal({2}, 0, 1, tf::int32), E);
    CHECK_THROWS_WITH(tf::random::normal({2}, 0, 1, tf::int32), Catch::Contains("[Op:RandomStandardNormal]"));
    CHECK_THROWS_AS(tf::random::normal({2}, 0, -1), E);
    CHECK_THROWS_AS(tf::random::truncated_normal({2}, 0, 1, tf::bool_), E);
    CHECK_THROWS_AS(tf::random::uniform({2}, 1, 1, tf::int32), E);
    CHECK_THROWS_AS(tf::random::uniform({2}, 2, 1), E);
    CHECK_THROWS_AS(tf::random::uniform({2}, 0, 1, tf::bool_), E);
    CHECK_THROWS_AS(tf::random::normal({-2}), E);
    CHECK_THROWS_AS(tf::random::shuffle(tf::Tensor()), E);
}
