// tf::num_threads / tf::set_num_threads: the count is process-wide, results do not depend on it,
// and a count below 1 is an InvalidArgumentError.
#include <thread>

#include <catch2/catch.hpp>

#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;

TEST_CASE("set_num_threads sets the kernels' thread count for every thread", "[threads]") {
    const int before = tf::num_threads();
    REQUIRE(before >= 1);
    const tf::Tensor x = tf::random::uniform({300, 400}, -1, 1, tf::float32, 7);
    const tf::Tensor w = tf::random::uniform({400, 300}, -1, 1, tf::float32, 8);
    const auto work = [&] {
        return std::pair{tf::reduce_sum(tf::exp(x), 1).to_vector<float>(),
                         tf::matmul(x, w).to_vector<float>()};
    };
    const auto many = work();
    tf::set_num_threads(1);
    CHECK(tf::num_threads() == 1);
    int seen_elsewhere = 0;
    std::thread([&] { seen_elsewhere = tf::num_threads(); }).join();
    CHECK(seen_elsewhere == 1);
    const auto one = work();
    tf::set_num_threads(before);
    CHECK(tf::num_threads() == before);
    CHECK(one.first == many.first);  // reductions: same bits on any thread count
    const auto& a = one.second;
    const auto& b = many.second;
    REQUIRE(a.size() == b.size());
    for (std::size_t i = 0; i < a.size(); ++i)
        CHECK(a[i] == Approx(b[i]).margin(1e-4));  // sums of 400 products: rounding only
}

TEST_CASE("set_num_threads rejects counts below 1", "[threads][errors]") {
    CHECK_THROWS_AS(tf::set_num_threads(0), tf::errors::InvalidArgumentError);
    CHECK_THROWS_WITH(tf::set_num_threads(-2), Catch::Contains("at least 1, got -2"));
}
