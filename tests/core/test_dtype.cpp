// DType names, sizes, categories and parsing. Add a case per new dtype.
#include <catch2/catch.hpp>

#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;

TEST_CASE("dtype names, sizes and categories", "[dtype]") {
    struct Row {
        tf::DType dtype;
        const char* name;
        std::size_t size;
        bool floating;
        bool integer;
    };
    const Row rows[] = {
        {tf::float32, "float32", 4, true, false},
        {tf::float64, "float64", 8, true, false},
        {tf::int32, "int32", 4, false, true},
        {tf::int64, "int64", 8, false, true},
        {tf::uint8, "uint8", 1, false, true},
        {tf::bool_, "bool", 1, false, false},
        {tf::float16, "float16", 2, true, false},
        {tf::bfloat16, "bfloat16", 2, true, false},
    };
    for (const auto& r : rows) {
        CAPTURE(r.name);
        CHECK(tf::dtype_name(r.dtype) == r.name);
        CHECK(tf::dtype_size(r.dtype) == r.size);
        CHECK(tf::is_floating(r.dtype) == r.floating);
        CHECK(tf::is_integer(r.dtype) == r.integer);
        CHECK(tf::parse_dtype(r.name) == r.dtype);
        CHECK(fmt::format("{}", r.dtype) == r.name);
    }
}

TEST_CASE("dtype parsing accepts aliases and rejects garbage", "[dtype]") {
    CHECK(tf::parse_dtype("tf.float32") == tf::float32);
    CHECK(tf::parse_dtype("double") == tf::float64);
    CHECK(tf::parse_dtype("Half") == tf::float16);
    CHECK_THROWS_AS(tf::parse_dtype("complex64"), tf::errors::InvalidArgumentError);
    CHECK_THROWS_WITH(tf::parse_dtype("floaty"), Catch::Contains("unknown dtype 'floaty'"));
}

TEST_CASE("C++ types map to dtypes", "[dtype]") {
    STATIC_REQUIRE(tf::dtype_of_v<float> == tf::float32);
    STATIC_REQUIRE(tf::dtype_of_v<double> == tf::float64);
    STATIC_REQUIRE(tf::dtype_of_v<int> == tf::int32);
    STATIC_REQUIRE(tf::dtype_of_v<int64_t> == tf::int64);
    STATIC_REQUIRE(tf::dtype_of_v<long long> == tf::int64);
    STATIC_REQUIRE(tf::dtype_of_v<bool> == tf::bool_);
    STATIC_REQUIRE(tf::dtype_of_v<uint8_t> == tf::uint8);
}

TEST_CASE("16-bit floats round to nearest even", "[dtype]") {
    CHECK(static_cast<float>(tf::Half(1.0f)) == 1.0f);
    CHECK(tf::Half(1.0f).bits == 0x3C00);
    CHECK(static_cast<float>(tf::Half(65504.f)) == 65504.f);
    CHECK(std::isinf(static_cast<float>(tf::Half(1e6f))));
    CHECK(static_cast<float>(tf::Half(1.0f + 1.0f / 4096)) == 1.0f);  // tie -> even
    CHECK(tf::BFloat16(1.0f).bits == 0x3F80);
    CHECK(static_cast<float>(tf::BFloat16(3.140625f)) == 3.140625f);
    CHECK(static_cast<float>(tf::BFloat16(1.00390625f)) == 1.0f);  // tie -> even
    CHECK(std::isnan(static_cast<float>(tf::BFloat16(std::nanf("")))));
}
