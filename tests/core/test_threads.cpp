// tf::num_threads / tf::set_num_threads: the count is process-wide, results do not depend on it,
// and a count below 1 is an InvalidArgumentError; the pool parallel_for runs on.
#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include <tapeflow/tapeflow.hpp>

#include "core/parallel.hpp"

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

// The pool parallel_for runs on (NOTE [Thread pool] in lib/core/parallel.cpp).
TEST_CASE("parallel_for runs every chunk once, on the pool and the caller", "[threads][pool]") {
    const int before = tf::num_threads();
    for (int threads : {1, 2, 3, 4, 8}) {
        tf::set_num_threads(threads);
        for (int64_t n : {1, 2, 7, 64, 1000, 100000}) {
            std::vector<std::atomic<int>> hits(static_cast<std::size_t>(n));
            std::atomic<int> calls{0};
            tf::parallel_for(n, 8, [&](int64_t begin, int64_t end) {
                ++calls;
                for (int64_t i = begin; i < end; ++i)
                    ++hits[static_cast<std::size_t>(i)];
            });
            for (auto& h : hits)
                REQUIRE(h.load() == 1);
            CHECK(calls.load() == std::min<int64_t>((n + 7) / 8, threads));
        }
    }
    tf::set_num_threads(before);
}

TEST_CASE("parallel_for inside a chunk runs inline; a chunk's exception reaches the caller",
          "[threads][pool]") {
    const int before = tf::num_threads();
    tf::set_num_threads(4);
    std::atomic<int64_t> sum{0};
    tf::parallel_for(4, 1, [&](int64_t, int64_t) {
        tf::parallel_for(100, 1, [&](int64_t begin, int64_t end) { sum += end - begin; });
    });
    CHECK(sum.load() == 400);
    CHECK_THROWS_WITH(tf::parallel_for(4,
                                       1,
                                       [](int64_t begin, int64_t) {
                                           if (begin == 2) throw std::runtime_error("chunk 2");
                                       }),
                      "chunk 2");
    // the pool still works after it
    std::atomic<int> calls{0};
    tf::parallel_for(4, 1, [&](int64_t, int64_t) { ++calls; });
    CHECK(calls.load() == 4);
    tf::set_num_threads(before);
}

TEST_CASE("ops from several threads at once share the pool and give one thread's bits",
          "[threads][pool]") {
    const tf::Tensor x = tf::random::uniform({512, 300}, -1, 1, tf::float32, 3);
    const tf::Tensor w = tf::random::uniform({300, 200}, -1, 1, tf::float32, 4);
    const auto work = [&] {
        return std::pair{tf::reduce_sum(tf::tanh(x) * x, 0).to_vector<float>(),
                         tf::matmul(x, w).to_vector<float>()};
    };
    const auto expected = work();
    std::vector<std::thread> threads;
    std::atomic<int> mismatches{0};
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&] {
            for (int i = 0; i < 20; ++i) {
                if (work() != expected) ++mismatches;
            }
        });
    }
    for (auto& t : threads)
        t.join();
    CHECK(mismatches.load() == 0);
}
