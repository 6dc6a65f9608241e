// Sizes near the int64 and size_t limits: the crashes of issue 22 (an element count of +inf, n * n
// and pad sums that wrap, a slice view past its buffer, std::bad_alloc escaping) now raise typed
// errors, a failed allocation reads as TensorFlow's OOM message, and views are bounds-checked.
#include <cstdint>
#include <limits>

#include <catch2/catch.hpp>

#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;
using Catch::Contains;

namespace {
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
}  // namespace

TEST_CASE("element counts that do not fit are invalid arguments naming the op", "[sizes]") {
    CHECK_THROWS_AS(tf::range(0, 1e300, 1e-300), tf::errors::InvalidArgumentError);
    CHECK_THROWS_WITH(tf::range(0, 1e300, 1e-300), Contains("inf") && Contains("[Op:Range]"));
    CHECK_THROWS_WITH(tf::eye(int64_t{1} << 32),
                      Contains("more than 2^63-1") && Contains("[Op:Eye]"));
    CHECK_THROWS_WITH(tf::pad(tf::ones({3}), {{kMax, 1}}),
                      Contains("overflows int64") && Contains("[Op:Pad]"));
    CHECK_THROWS_WITH(tf::split(tf::zeros({4}), std::vector<int64_t>{kMax, kMax, -1}),
                      Contains("overflows int64") && Contains("[Op:SplitV]"));
}

TEST_CASE("a slice past the end is an error, never a view past the buffer", "[sizes]") {
    CHECK_THROWS_WITH(tf::slice(tf::range(0, 4), {1}, {kMax}),
                      Contains("Expected size[0] in [0, 3]") && Contains("[Op:Slice]"));
    CHECK(tf::slice(tf::range(0, 4), {1}, {-1}).to_vector<float>() == std::vector<float>{1, 2, 3});
    CHECK(tf::slice(tf::range(0, 4), {4}, {0}).num_elements() == 0);
    // The view itself checks its bytes against the storage, with no sum that can wrap.
    const tf::Tensor x = tf::range(0.0, 4.0);  // float32: viewed as float32 below
    CHECK_THROWS_AS(tf::Tensor::view(x.impl()->storage, 4, tf::Shape{kMax / 4}, tf::float32),
                    tf::errors::InternalError);
    CHECK_THROWS_AS(tf::Tensor::view(x.impl()->storage, 17, tf::Shape{0}, tf::float32),
                    tf::errors::InternalError);
    CHECK_THROWS_AS(tf::Tensor::view(x.impl()->storage, 4, tf::Shape{4}, tf::float32),
                    tf::errors::InternalError);
    CHECK(tf::Tensor::view(x.impl()->storage, 4, tf::Shape{3}, tf::float32).to_vector<float>() ==
          std::vector<float>{1, 2, 3});
}

TEST_CASE("failed allocations raise ResourceExhaustedError in TensorFlow's words", "[sizes][oom]") {
    // pad's output has 2^62 + 3 floats: more bytes than size_t holds.
    CHECK_THROWS_AS(tf::pad(tf::ones({3}), {{0, int64_t{1} << 62}}),
                    tf::errors::ResourceExhaustedError);
    CHECK_THROWS_WITH(tf::pad(tf::ones({3}), {{0, int64_t{1} << 62}}),
                      Contains("OOM when allocating tensor of shape [4611686018427387907] and type "
                               "float on /device:CPU:0") &&
                          Contains("[Op:Pad]"));
    // Sizes that fit in size_t but not in memory: the allocator fails. Each is over 2^47 bytes,
    // more than x86-64 user space, so no overcommit setting lets the allocation succeed.
    CHECK_THROWS_WITH(tf::eye(1 << 24),
                      Contains("OOM when allocating tensor of shape "
                               "[16777216,16777216] and type float on /device:CPU:0"));
    CHECK_THROWS_WITH(tf::range(0, double(int64_t{1} << 46), 1, tf::int32),
                      Contains("shape [70368744177664] and type int32"));
    CHECK_THROWS_AS(tf::range(0, 1e15), tf::errors::ResourceExhaustedError);
    CHECK_THROWS_AS(tf::linspace(0, 1, int64_t{1} << 50), tf::errors::ResourceExhaustedError);
    CHECK_THROWS_WITH(tf::zeros({int64_t{1} << 45}, tf::float64),
                      Contains("type double") && Contains("[Op:Fill]"));
    // 2^40 empty pieces: more outputs than an op can have, refused before any allocation.
    CHECK_THROWS_WITH(tf::split(tf::zeros({0}), int64_t{1} << 40),
                      Contains("more outputs than an op can have") && Contains("[Op:Split]"));
    CHECK_THROWS_AS(tf::unstack(tf::zeros({int64_t{1} << 62, 0})),
                    tf::errors::InvalidArgumentError);
    // The allocator itself, for sizes no block can have.
    CHECK_THROWS_WITH(
        tf::cpu_allocator().allocate(std::numeric_limits<std::size_t>::max(), tf::Device::cpu()),
        Contains("OOM when allocating"));
    CHECK(tf::memory_stats().bytes_in_use >= 0);
}

TEST_CASE("creation ops keep their values", "[sizes]") {
    CHECK(tf::range(0, 5, 2).to_vector<float>() == std::vector<float>{0, 2, 4});
    CHECK(tf::range(5, 0, -2, tf::int32).to_vector<int32_t>() == std::vector<int32_t>{5, 3, 1});
    CHECK(tf::linspace(0, 1, 5, tf::float64).to_vector<double>() ==
          std::vector<double>{0, 0.25, 0.5, 0.75, 1});
    CHECK(tf::linspace(2, 3, 1).to_vector<float>() == std::vector<float>{2});
    CHECK(tf::eye(3, tf::int64).to_vector<int64_t>() ==
          std::vector<int64_t>{1, 0, 0, 0, 1, 0, 0, 0, 1});
    CHECK(tf::eye(0).shape() == tf::Shape{0, 0});
    CHECK(tf::range(0, 0).shape() == tf::Shape{0});
}
