// Tensor handles: metadata, host access (item, to_vector, data), copies, casts and misuse errors.
#include <sstream>
#include <thread>

#include <catch2/catch.hpp>

#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;

TEST_CASE("an undefined tensor stands for 'no value'", "[tensor]") {
    tf::Tensor t;
    CHECK_FALSE(t.defined());
    CHECK_FALSE(static_cast<bool>(t));
    CHECK(t.str() == "None");
    CHECK_THROWS_AS(t.shape(), tf::errors::FailedPreconditionError);
    CHECK_THROWS_AS(t.item<float>(), tf::errors::FailedPreconditionError);
    CHECK_THROWS_AS(tf::identity(t), tf::errors::InvalidArgumentError);
}

TEST_CASE("metadata and sharing", "[tensor]") {
    auto t = tf::constant({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
    CHECK(t.defined());
    CHECK(t.shape() == tf::Shape{2, 3});
    CHECK(t.dtype() == tf::float32);
    CHECK(t.device() == tf::Device::cpu());
    CHECK(t.rank() == 2);
    CHECK(t.num_elements() == 6);
    CHECK(t.nbytes() == 24);
    tf::Tensor copy = t;  // a copy shares the value
    CHECK(copy.id() == t.id());
    CHECK(copy.data<float>() == t.data<float>());
    auto other = tf::identity(t);
    CHECK(other.id() != t.id());
    CHECK(other.data<float>() != t.data<float>());
    CHECK(other.to_vector<float>() == t.to_vector<float>());
}

TEST_CASE("item converts the single element", "[tensor]") {
    CHECK(tf::constant(3.5f).item<float>() == 3.5f);
    CHECK(tf::constant(3.5f).item<double>() == 3.5);
    CHECK(tf::constant(3.9).item<int>() == 3);
    CHECK(tf::constant(-3.9).item<int64_t>() == -3);
    CHECK(tf::constant(7).item<bool>() == true);
    CHECK(tf::constant(std::vector<int>{42}, tf::Shape{1, 1}).item<int>() == 42);
    CHECK(tf::constant(int64_t{1} << 60).item<int64_t>() == (int64_t{1} << 60));
}

TEST_CASE("item on a non-scalar raises InvalidArgumentError", "[tensor][errors]") {
    auto t = tf::constant({1.f, 2.f});
    CHECK_THROWS_AS(t.item<float>(), tf::errors::InvalidArgumentError);
    CHECK_THROWS_WITH(t.item<float>(),
                      Catch::Contains("exactly one element") && Catch::Contains("(2,)"));
    CHECK_THROWS_AS(tf::zeros({0}).item<float>(), tf::errors::InvalidArgumentError);
}

TEST_CASE("to_vector converts every element", "[tensor]") {
    auto t = tf::constant({1.5, -2.5, 3.0});
    CHECK(t.to_vector<double>() == std::vector<double>{1.5, -2.5, 3.0});
    CHECK(t.to_vector<float>() == std::vector<float>{1.5f, -2.5f, 3.0f});
    CHECK(t.to_vector<int>() == std::vector<int>{1, -2, 3});
    CHECK(t.to_vector<bool>() == std::vector<bool>{true, true, true});
    CHECK(tf::constant({true, false}).to_vector<int>() == std::vector<int>{1, 0});
    CHECK(tf::zeros({0, 3}).to_vector<float>().empty());
}

TEST_CASE("data<T> needs the exact element type", "[tensor][errors]") {
    auto t = tf::constant({1, 2, 3});
    CHECK(t.data<int32_t>()[2] == 3);
    CHECK_THROWS_AS(t.data<float>(), tf::errors::InvalidArgumentError);
    CHECK_THROWS_AS(t.data<int64_t>(), tf::errors::InvalidArgumentError);
    CHECK_THROWS_WITH(t.data<double>(), Catch::Contains("float64") && Catch::Contains("int32"));
    CHECK(tf::constant({true}).data<bool>()[0]);
}

TEST_CASE("cast follows tf.cast", "[tensor]") {
    auto f = tf::constant({-1.7f, -0.5f, 0.f, 0.5f, 2.9f});
    CHECK(f.cast(tf::int32).to_vector<int>() == std::vector<int>{-1, 0, 0, 0, 2});
    CHECK(f.cast(tf::bool_).to_vector<bool>() == std::vector<bool>{true, true, false, true, true});
    CHECK(f.cast(tf::float64).dtype() == tf::float64);
    CHECK(tf::cast(f, tf::float16).to_vector<float>() ==
          std::vector<float>{-1.7001953125f, -0.5f, 0.f, 0.5f, 2.900390625f});
    CHECK(tf::cast(f, tf::bfloat16).cast(tf::float32).to_vector<float>()[4] == 2.90625f);
    auto big = tf::constant({1e10, -1e10, std::nan("")});  // saturates; NaN -> 0 (never UB)
    CHECK(big.cast(tf::int32).to_vector<int>() == std::vector<int>{INT32_MAX, INT32_MIN, 0});
    CHECK(tf::constant({300, -1}).cast(tf::uint8).to_vector<int>() == std::vector<int>{44, 255});
}

TEST_CASE("to() and cpu() on the CPU return the same value", "[tensor]") {
    auto t = tf::constant({1.f});
    CHECK(t.cpu().id() == t.id());
    CHECK(t.to(tf::Device::cpu()).id() == t.id());
}

TEST_CASE("printing through fmt and ostream agree", "[tensor]") {
    auto t = tf::constant({1, 2, 3});
    std::ostringstream os;
    os << t;
    CHECK(os.str() == t.str());
    CHECK(fmt::format("{}", t) == t.str());
    CHECK(t.str() == "tf.Tensor([1 2 3], shape=(3,), dtype=int32)");
}

// Under AddressSanitizer the allocator keeps no freed blocks (lib/core/small_blocks.cpp,
// TAPEFLOW_CPU_CACHE_BYTES=0 in scripts/sanitize.sh), so that a use after free is seen: no reuse.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kBlocksReused = false;
#else
constexpr bool kBlocksReused = true;
#endif

TEST_CASE("large CPU buffers are 64-byte aligned and reused", "[tensor][allocator]") {
    const void* first = nullptr;
    {
        auto big = tf::zeros({1 << 20});
        first = big.raw_data();
        CHECK(reinterpret_cast<std::uintptr_t>(first) % 64 == 0);
    }
    auto again = tf::ones({1 << 20});  // same size class: the cached block comes back
    if (kBlocksReused) CHECK(again.raw_data() == first);
    CHECK(again.to_vector<float>()[12345] == 1.0f);
    auto small = tf::zeros({3});
    CHECK(reinterpret_cast<std::uintptr_t>(small.raw_data()) % 64 == 0);
}

TEST_CASE("small buffers are reused per thread and may be freed on any thread",
          "[tensor][allocator]") {
    const void* first = nullptr;
    {
        auto t = tf::fill({7}, 1.0);  // 28 bytes: the 64-byte class
        first = t.raw_data();
    }
    auto again = tf::fill({5}, 2.0);  // same class, same thread: the block freed above comes back
    if (kBlocksReused) CHECK(again.raw_data() == first);
    CHECK(again.to_vector<float>() == std::vector<float>(5, 2.0f));
    // Made on one thread, freed on another (the block joins the freeing thread's cache), and made
    // on threads that exit (their caches are freed then): values stay intact, nothing is lost.
    std::vector<tf::Tensor> made;
    std::thread maker([&] {
        for (int i = 0; i < 200; ++i)
            made.push_back(tf::fill({i % 200 + 1}, static_cast<double>(i)));
    });
    maker.join();
    for (int i = 0; i < 200; ++i) {
        REQUIRE(made[static_cast<std::size_t>(i)].to_vector<float>().back() ==
                static_cast<float>(i));
    }
    std::thread freer([&] { made.clear(); });
    freer.join();
    std::vector<tf::Tensor> kept;
    for (int i = 0; i < 100; ++i)
        kept.push_back(tf::fill({i + 1}, static_cast<double>(-i)));
    for (int i = 0; i < 100; ++i) {
        CHECK(reinterpret_cast<std::uintptr_t>(kept[static_cast<std::size_t>(i)].raw_data()) % 64 ==
              0);
        CHECK(kept[static_cast<std::size_t>(i)].to_vector<float>().front() ==
              static_cast<float>(-i));
    }
}

TEST_CASE("memory_stats counts tensor bytes and the peak", "[tensor][allocator]") {
    const int64_t before = tf::memory_stats().bytes_in_use;
    tf::reset_peak_memory_stats();
    {
        auto a = tf::zeros({1000}, tf::float64);
        CHECK(tf::memory_stats().bytes_in_use == before + 8000);
    }
    CHECK(tf::memory_stats().bytes_in_use == before);
    CHECK(tf::memory_stats().peak_bytes_in_use >= before + 8000);
    tf::reset_peak_memory_stats();
    CHECK(tf::memory_stats().peak_bytes_in_use == before);
}
