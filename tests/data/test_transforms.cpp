// tf::data transformations: order and contents of map, filter, shuffle, batch, repeat, take,
// skip, shard, prefetch and interleave, each checked against the element list tf.data gives.
#include <algorithm>
#include <chrono>
#include <iterator>
#include <numeric>
#include <thread>

#include <catch2/catch.hpp>

#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;
using tf::data::Dataset;

namespace {

Dataset<int64_t> range(int64_t n) {
    std::vector<int64_t> v(static_cast<std::size_t>(n));
    std::iota(v.begin(), v.end(), 0);
    return tf::data::from_vector(std::move(v));
}

std::vector<int64_t> seq(std::initializer_list<int64_t> v) {
    return v;
}

}  // namespace

static_assert(std::input_iterator<Dataset<int64_t>::Iterator>);
static_assert(std::sentinel_for<Dataset<int64_t>::Sentinel, Dataset<int64_t>::Iterator>);

TEST_CASE("range-for and to_vector give the elements in order", "[data]") {
    std::vector<int64_t> seen;
    for (int64_t x : range(5))
        seen.push_back(x);
    CHECK(seen == seq({0, 1, 2, 3, 4}));
    CHECK(range(5).to_vector() == seen);
    CHECK(range(5).to_vector(2) == seq({0, 1}));
    CHECK(range(0).to_vector().empty());
    // Re-iterable: a second pass gives the same elements.
    auto ds = range(3);
    CHECK(ds.to_vector() == ds.to_vector());
}

TEST_CASE("map and filter keep order; the original dataset stays usable", "[data]") {
    auto base = range(10);
    auto squares = base.map([](int64_t x) { return x * x; });
    CHECK(squares.to_vector() == seq({0, 1, 4, 9, 16, 25, 36, 49, 64, 81}));
    auto even = base.filter([](int64_t x) { return x % 2 == 0; });
    CHECK(even.to_vector() == seq({0, 2, 4, 6, 8}));
    CHECK(base.to_vector().size() == 10);
    auto text = base.map([](int64_t x) { return std::to_string(x); });
    static_assert(std::is_same_v<decltype(text), Dataset<std::string>>);
    CHECK(text.to_vector(3) == std::vector<std::string>{"0", "1", "2"});
}

TEST_CASE("parallel map returns results in input order", "[data]") {
    auto ds = range(500).map(
        [](int64_t x) {
            // Uneven work, so later elements often finish first.
            if (x % 7 == 0) std::this_thread::sleep_for(std::chrono::microseconds(300));
            return x * 3;
        },
        4);
    auto out = ds.to_vector();
    REQUIRE(out.size() == 500);
    for (std::size_t i = 0; i < out.size(); ++i)
        CHECK(out[i] == 3 * static_cast<int64_t>(i));
    CHECK(range(20).map([](int64_t x) { return x + 1; }, tf::data::AUTOTUNE).to_vector().back() ==
          20);
    CHECK_THROWS_AS(range(3).map([](int64_t x) { return x; }, 0), tf::errors::InvalidArgumentError);
}

TEST_CASE("take, skip, repeat", "[data]") {
    CHECK(range(5).take(3).to_vector() == seq({0, 1, 2}));
    CHECK(range(5).take(9).to_vector() == seq({0, 1, 2, 3, 4}));
    CHECK(range(5).take(-1).to_vector().size() == 5);
    CHECK(range(5).take(0).to_vector().empty());
    CHECK(range(5).skip(3).to_vector() == seq({3, 4}));
    CHECK(range(5).skip(7).to_vector().empty());
    CHECK(range(5).skip(-1).to_vector().empty());
    CHECK(range(3).repeat(2).to_vector() == seq({0, 1, 2, 0, 1, 2}));
    CHECK(range(3).repeat(0).to_vector().empty());
    CHECK(range(3).repeat().take(7).to_vector() == seq({0, 1, 2, 0, 1, 2, 0}));
    CHECK(range(0).repeat().to_vector().empty());  // forever over nothing ends
}

TEST_CASE("shard partitions the dataset", "[data]") {
    CHECK(range(10).shard(3, 0).to_vector() == seq({0, 3, 6, 9}));
    CHECK(range(10).shard(3, 1).to_vector() == seq({1, 4, 7}));
    CHECK(range(10).shard(3, 2).to_vector() == seq({2, 5, 8}));
    std::vector<int64_t> all;
    for (int64_t i = 0; i < 4; ++i)
        for (int64_t x : range(23).shard(4, i))
            all.push_back(x);
    std::sort(all.begin(), all.end());
    CHECK(all == range(23).to_vector());
    CHECK_THROWS_WITH(range(3).shard(0, 0),
                      Catch::Contains("num_shards must be greater than zero"));
    CHECK_THROWS_AS(range(3).shard(2, 2), tf::errors::InvalidArgumentError);
    CHECK_THROWS_AS(range(3).shard(2, -1), tf::errors::InvalidArgumentError);
}

TEST_CASE("shuffle is a seeded permutation, reshuffled each iteration", "[data]") {
    auto base = range(100);
    auto a = base.shuffle(100, 42);
    auto first = a.to_vector();
    auto sorted = first;
    std::sort(sorted.begin(), sorted.end());
    CHECK(sorted == base.to_vector());
    CHECK(first != base.to_vector());
    auto second = a.to_vector();
    CHECK(second != first);  // reshuffle_each_iteration
    // The same seed replays the same sequence of orders.
    auto b = base.shuffle(100, 42);
    CHECK(b.to_vector() == first);
    CHECK(b.to_vector() == second);
    // Without reshuffling every iteration repeats the order.
    auto c = base.shuffle(100, 42, false);
    CHECK(c.to_vector() == c.to_vector());
    // Through repeat: each pass is a permutation, and the passes differ.
    auto epochs = base.shuffle(100, 7).repeat(3).to_vector();
    REQUIRE(epochs.size() == 300);
    std::vector<int64_t> e0(epochs.begin(), epochs.begin() + 100);
    std::vector<int64_t> e1(epochs.begin() + 100, epochs.begin() + 200);
    CHECK(e0 != e1);
    std::sort(e0.begin(), e0.end());
    std::sort(e1.begin(), e1.end());
    CHECK(e0 == base.to_vector());
    CHECK(e1 == base.to_vector());
    // A buffer of 1 does not shuffle; a small buffer only moves elements a little forward.
    CHECK(base.shuffle(1, 3).to_vector() == base.to_vector());
    auto local = base.shuffle(4, 3).to_vector();
    for (std::size_t i = 0; i < local.size(); ++i)
        CHECK(local[i] <= static_cast<int64_t>(i) + 3);
    CHECK_THROWS_AS(base.shuffle(0), tf::errors::InvalidArgumentError);
    // With a global seed and no op seed, the order is reproducible too.
    tf::random::set_seed(5);
    auto g1 = base.shuffle(100).to_vector();
    tf::random::set_seed(5);
    auto g2 = base.shuffle(100).to_vector();
    CHECK(g1 == g2);
}

TEST_CASE("batch stacks tensor components; remainder kept or dropped", "[data]") {
    auto x = tf::reshape(tf::range(0, 14, 1, tf::float32), {7, 2});
    auto y = tf::range(0, 7, 1, tf::int64);
    auto ds = tf::data::from_tensor_slices({x, y});
    auto elements = ds.to_vector();
    REQUIRE(elements.size() == 7);
    CHECK(elements[3][0].to_vector<float>() == std::vector<float>{6, 7});
    CHECK(elements[3][1].item<int64_t>() == 3);
    CHECK(elements[3][1].shape() == tf::Shape{});

    auto batches = ds.batch(3).to_vector();
    REQUIRE(batches.size() == 3);
    CHECK(batches[0][0].shape() == tf::Shape{3, 2});
    CHECK(batches[0][1].shape() == tf::Shape{3});
    CHECK(batches[1][0].to_vector<float>() == std::vector<float>{6, 7, 8, 9, 10, 11});
    CHECK(batches[2][0].shape() == tf::Shape{1, 2});  // the remainder
    CHECK(batches[2][1].to_vector<int64_t>() == std::vector<int64_t>{6});
    CHECK(batches[1][1].dtype() == tf::int64);
    auto dropped = ds.batch(3, true).to_vector();
    CHECK(dropped.size() == 2);
    CHECK(ds.batch(7, true).to_vector().size() == 1);
    CHECK(ds.batch(8, true).to_vector().empty());

    // Tensor elements stack into a Tensor; other types gather into a vector.
    auto t = tf::data::from_vector(
        std::vector<tf::Tensor>{tf::constant({1.f, 2.f}), tf::constant({3.f, 4.f})});
    CHECK(t.batch(2).to_vector()[0].shape() == tf::Shape{2, 2});
    auto groups = range(5).batch(2).to_vector();
    CHECK(groups == std::vector<std::vector<int64_t>>{{0, 1}, {2, 3}, {4}});
    CHECK_THROWS_AS(range(5).batch(0), tf::errors::InvalidArgumentError);

    // Different shapes cannot be stacked: tf.data's message names the component and shapes.
    auto ragged = tf::data::from_vector(std::vector<std::vector<tf::Tensor>>{
        {tf::constant({1.f, 2.f})}, {tf::constant({1.f, 2.f, 3.f})}});
    CHECK_THROWS_WITH(ragged.batch(2).to_vector(),
                      Catch::Contains("different shapes in component 0") &&
                          Catch::Contains("[2]") && Catch::Contains("[3]"));
    CHECK_THROWS_AS(tf::data::from_tensor_slices({x, tf::range(0, 5, 1)}),
                    tf::errors::InvalidArgumentError);
    CHECK_THROWS_AS(tf::data::from_tensor_slices({tf::constant(1.f)}),
                    tf::errors::InvalidArgumentError);
}

TEST_CASE("prefetch keeps order and contents", "[data]") {
    CHECK(range(100).prefetch(5).to_vector() == range(100).to_vector());
    CHECK(range(100).prefetch(tf::data::AUTOTUNE).to_vector() == range(100).to_vector());
    CHECK(range(10).prefetch(0).to_vector() == range(10).to_vector());
    CHECK(range(0).prefetch(3).to_vector().empty());
    CHECK_THROWS_AS(range(3).prefetch(-2), tf::errors::InvalidArgumentError);
}

TEST_CASE("interleave cycles through its datasets one element at a time", "[data]") {
    // tf.data.Dataset.range(1, 4).interleave(lambda x: Dataset.from_tensors(x).repeat(x), 2)
    auto f = [](int64_t x) {
        return tf::data::from_vector(std::vector<int64_t>{x}).repeat(x);
    };
    auto ds = range(4).skip(1).interleave(f, 2);
    CHECK(ds.to_vector() == seq({1, 2, 2, 3, 3, 3}));
    // tf.data's docstring example: range(1, 6).interleave(lambda x: from_tensors(x).repeat(6), 2)
    // (block_length 1) gives 1 2 1 2 ... then 3 4 ... then 5 ...
    auto g = [](int64_t x) {
        return tf::data::from_vector(std::vector<int64_t>{x}).repeat(3);
    };
    auto expect = seq({1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4, 5, 5, 5});
    CHECK(range(6).skip(1).interleave(g, 2).to_vector() == expect);
    CHECK(range(6).skip(1).interleave(g, 2, 2).to_vector() == expect);  // parallel: same order
    CHECK(range(3).interleave(g, 1).to_vector() == seq({0, 0, 0, 1, 1, 1, 2, 2, 2}));
}
