// TensorFlow's dtype rules for C++ numbers and division (issue 32 item 4): a floating-point number
// next to an integer tensor raises as TensorFlow's eager conversion does, `/` is truediv (integers
// to float32 or float64), floordiv/floormod are Python's // and %, and tf::range / tf::fill infer
// int32 from integer arguments. Expected messages and dtypes are TensorFlow 2's (pywrap_tensor.cc's
// "Cannot convert <repr> to EagerTensor of dtype <name>", math_ops._TRUEDIV_TABLE).
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <tapeflow/tapeflow.hpp>

#include "support/gradcheck.hpp"

namespace tf = tapeflow;
using Catch::Matchers::Equals;

namespace {

std::string message_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const tf::errors::InvalidArgumentError& e) {
        return e.what();
    }
    return "<no InvalidArgumentError>";
}

}  // namespace

TEST_CASE("a floating-point number with an integer tensor raises TensorFlow's error",
          "[dtype_rules]") {
    const tf::Tensor i32 = tf::constant({1, 2, 3});
    CHECK(message_of([&] { (void)(i32 * 2.5); }) ==
          "Cannot convert 2.5 to EagerTensor of dtype int32");
    // TensorFlow refuses integral floats too, and prints them with Python's repr.
    CHECK(message_of([&] { (void)(i32 + 5.0); }) ==
          "Cannot convert 5.0 to EagerTensor of dtype int32");
    CHECK(message_of([&] { (void)(0.0 - i32); }) ==
          "Cannot convert 0.0 to EagerTensor of dtype int32");
    CHECK(message_of([&] { (void)(tf::constant(int64_t{1}) * 1e-7); }) ==
          "Cannot convert 1e-07 to EagerTensor of dtype int64");
    CHECK(message_of([&] { (void)(1.5f / tf::constant({uint8_t{3}})); }) ==
          "Cannot convert 1.5 to EagerTensor of dtype uint8");
    CHECK(message_of([&] { (void)(i32 * 0.1f); }) ==  // a float prints its own shortest digits
          "Cannot convert 0.1 to EagerTensor of dtype int32");
    CHECK(message_of([&] { (void)(tf::constant(true) + 1.0); }) ==
          "Cannot convert 1.0 to EagerTensor of dtype bool");
    // Every operator and side goes through the same conversion.
    CHECK_THROWS_AS(i32 + 0.5, tf::errors::InvalidArgumentError);
    CHECK_THROWS_AS(0.5 + i32, tf::errors::InvalidArgumentError);
    CHECK_THROWS_AS(i32 - 0.5, tf::errors::InvalidArgumentError);
    CHECK_THROWS_AS(i32 * 0.5, tf::errors::InvalidArgumentError);
    CHECK_THROWS_AS(0.5 * i32, tf::errors::InvalidArgumentError);
    CHECK_THROWS_AS(i32 / 0.5, tf::errors::InvalidArgumentError);
    CHECK_THROWS_AS(0.5 / i32, tf::errors::InvalidArgumentError);
}

TEST_CASE("Python's repr of the refused number", "[dtype_rules]") {
    const tf::Tensor x = tf::constant(1);
    const std::vector<std::pair<double, std::string>> cases = {
        {1e16, "1e+16"},
        {1e15, "1000000000000000.0"},
        {123.456, "123.456"},
        {0.0001, "0.0001"},
        {0.00001, "1e-05"},
        {1.5e-5, "1.5e-05"},
        {-0.0, "-0.0"},
        {-2.5, "-2.5"},
        {1.0 / 3, "0.3333333333333333"},
        {1e300, "1e+300"},
        {std::numeric_limits<double>::infinity(), "inf"},
        {-std::numeric_limits<double>::infinity(), "-inf"},
        {std::nan(""), "nan"},
    };
    for (const auto& [v, repr] : cases) {
        CHECK(message_of([&] { (void)(x + v); }) ==
              "Cannot convert " + repr + " to EagerTensor of dtype int32");
    }
}

TEST_CASE("integer numbers with integer tensors convert exactly, or raise when they do not fit",
          "[dtype_rules]") {
    const tf::Tensor i32 = tf::constant({1, 2, 3});
    CHECK((i32 * 2).to_vector<int>() == std::vector<int>{2, 4, 6});
    CHECK((10 - i32).to_vector<int>() == std::vector<int>{9, 8, 7});
    CHECK((i32 + 2u).dtype() == tf::int32);
    const tf::Tensor i64 = tf::constant(int64_t{1});
    const int64_t big = (int64_t{1} << 60) + 1;  // not a double: must not pass through one
    CHECK((i64 + big).item<int64_t>() == big + 1);
    const tf::Tensor u8 = tf::constant({uint8_t{250}});
    CHECK((u8 + 5).to_vector<int>() == std::vector<int>{255});
    CHECK(message_of([&] { (void)(u8 + 300); }) ==
          "Cannot convert 300 to EagerTensor of dtype uint8");
    CHECK(message_of([&] { (void)(u8 - (-1)); }) ==
          "Cannot convert -1 to EagerTensor of dtype uint8");
    CHECK(message_of([&] { (void)(i32 * (int64_t{1} << 40)); }) ==
          "Cannot convert 1099511627776 to EagerTensor of dtype int32");
    CHECK(message_of([&] { (void)(i64 + std::numeric_limits<uint64_t>::max()); }) ==
          "Cannot convert 18446744073709551615 to EagerTensor of dtype int64");
    CHECK(message_of([&] { (void)(tf::constant(true) * 2); }) ==
          "Cannot convert 2 to EagerTensor of dtype bool");
    // Float tensors take any number, converted to their dtype, as before.
    CHECK((tf::constant({1.f, 2.f}) * 2).to_vector<float>() == std::vector<float>{2, 4});
    CHECK((tf::constant({1.0}) + 0.25).item<double>() == 1.25);
    CHECK((tf::constant({1.f}).cast(tf::float16) * 2.5).item<float>() == 2.5f);
}

TEST_CASE("integer / integer is truediv with TensorFlow's result dtypes", "[dtype_rules]") {
    const std::vector<std::pair<tf::DType, tf::DType>> table = {
        {tf::uint8, tf::float32},
        {tf::int32, tf::float64},
        {tf::int64, tf::float64},
        {tf::float16, tf::float16},
        {tf::bfloat16, tf::bfloat16},
        {tf::float32, tf::float32},
        {tf::float64, tf::float64},
    };
    const tf::Tensor x = tf::constant({7.f, 9.f, 0.f, 4.f});
    const tf::Tensor y = tf::constant({2.f, 4.f, 5.f, 1.f});
    for (const auto& [in, out] : table) {
        CAPTURE(tf::dtype_name(in));
        const tf::Tensor q = x.cast(in) / y.cast(in);
        CHECK(q.dtype() == out);
        CHECK(q.to_vector<double>() == std::vector<double>{3.5, 2.25, 0, 4});
        CHECK(tf::divide(x.cast(in), y.cast(in)).dtype() == out);
        CHECK(tf::math::truediv(x.cast(in), y.cast(in)).dtype() == out);
        CHECK(tf::math::divide(x.cast(in), y.cast(in)).dtype() == out);
    }
    const tf::Tensor i = tf::constant({1, 2, 3});
    CHECK((i / 2).dtype() == tf::float64);
    CHECK((i / 2).to_vector<double>() == std::vector<double>{0.5, 1, 1.5});
    CHECK((3 / i).to_vector<double>() == std::vector<double>{3, 1.5, 1});
    // int64 values above 2^53 divide as the doubles they become (TensorFlow casts first).
    const auto big = tf::constant(std::vector<int64_t>{(int64_t{1} << 62) + 1}, tf::Shape{1});
    CHECK((big / tf::constant(std::vector<int64_t>{2}, tf::Shape{1})).item<double>() ==
          std::ldexp(1.0, 61));
    // Division by zero follows the float division: TensorFlow casts before RealDiv.
    const auto q = tf::constant({1, -1, 0}) / tf::constant({0, 0, 0});
    const auto qv = q.to_vector<double>();
    CHECK(qv[0] == std::numeric_limits<double>::infinity());
    CHECK(qv[1] == -std::numeric_limits<double>::infinity());
    CHECK(std::isnan(qv[2]));
    // Mixed integer dtypes still raise (TensorFlow: "x and y must have the same dtype").
    CHECK_THROWS_AS(i / tf::constant(int64_t{2}), tf::errors::InvalidArgumentError);
}

TEST_CASE("floordiv and floormod are Python's // and %, with TensorFlow's errors and gradients",
          "[dtype_rules]") {
    for (tf::DType d : {tf::int32, tf::int64}) {
        CAPTURE(tf::dtype_name(d));
        const auto a = tf::constant({7, -7, 7, -7}).cast(d);
        const auto b = tf::constant({2, 2, -2, -2}).cast(d);
        CHECK(tf::math::floordiv(a, b).dtype() == d);
        CHECK(tf::math::floordiv(a, b).to_vector<int>() == std::vector<int>{3, -4, -4, 3});
        CHECK(tf::math::floormod(a, b).to_vector<int>() == std::vector<int>{1, 1, -1, -1});
        CHECK_THROWS_WITH(
            tf::floordiv(a, tf::zeros({4}, d)),
            Catch::Contains("Integer division by zero") && Catch::Contains("[Op:FloorDiv]"));
        CHECK_THROWS_WITH(
            tf::floormod(a, tf::zeros({4}, d)),
            Catch::Contains("Integer division by zero") && Catch::Contains("[Op:FloorMod]"));
    }
    const auto u = tf::constant(std::vector<uint8_t>{200, 7}, tf::Shape{2});
    const auto v = tf::constant(std::vector<uint8_t>{7, 200}, tf::Shape{2});
    CHECK(tf::floordiv(u, v).dtype() == tf::uint8);
    CHECK(tf::floordiv(u, v).to_vector<int>() == std::vector<int>{28, 0});
    CHECK(tf::floormod(u, v).to_vector<int>() == std::vector<int>{4, 7});
    // Floats: floor(x / y), and the fmod-based floormod with the divisor's sign.
    const auto x = tf::constant({7.5, -7.5, 7.5, -7.5});
    const auto y = tf::constant({2.0, 2.0, -2.0, -2.0});
    CHECK(tf::floordiv(x, y).to_vector<double>() == std::vector<double>{3, -4, -4, 3});
    CHECK(tf::floormod(x, y).to_vector<double>() == std::vector<double>{1.5, 0.5, -0.5, -1.5});
    // floormod's gradient (TF's _FloorModGrad: g and -g * floor(x / y)) by finite differences,
    // with x / y in (2.1, 2.43), away from the jumps; floordiv has none.
    tf::testing::check_gradients(
        [](const std::vector<tf::Tensor>& in) { return tf::floormod(in[0], in[1]); },
        {tf::testing::random_f64({3, 4}, 2.1, 2.3, 7), tf::testing::random_f64({4}, 0.95, 1.0, 8)});
    tf::GradientTape tape;
    tape.watch(x);
    CHECK_FALSE(tape.gradient(tf::floordiv(x, y), x).defined());
}

TEST_CASE("tf::range infers int32 from integers, int64 when an argument needs it",
          "[dtype_rules]") {
    CHECK(tf::range(5).dtype() == tf::int32);
    CHECK(tf::range(5).to_vector<int>() == std::vector<int>{0, 1, 2, 3, 4});
    CHECK(tf::range(0, 10).dtype() == tf::int32);
    CHECK(tf::range(0, 10, 2).to_vector<int>() == std::vector<int>{0, 2, 4, 6, 8});
    CHECK(tf::range(10, 0, -3).to_vector<int>() == std::vector<int>{10, 7, 4, 1});
    CHECK(tf::range(int64_t{3}).dtype() == tf::int32);  // the value decides, as for a Python int
    CHECK(tf::range(4u).dtype() == tf::int32);
    const int64_t big = int64_t{1} << 40;
    const tf::Tensor r64 = tf::range(big, big + 3);
    CHECK(r64.dtype() == tf::int64);
    CHECK(r64.to_vector<int64_t>() == std::vector<int64_t>{big, big + 1, big + 2});
    // Exact beyond 2^53, where a double would round.
    const int64_t huge = (int64_t{1} << 62) + 1;
    CHECK(tf::range(huge, huge + 2).to_vector<int64_t>() == std::vector<int64_t>{huge, huge + 1});
    // A dtype converts; an integer dtype too small for an argument is TensorFlow's error.
    CHECK(tf::range(0, 4, 1, tf::int64).dtype() == tf::int64);
    CHECK(tf::range(0, 4, 1, tf::float32).to_vector<float>() == std::vector<float>{0, 1, 2, 3});
    CHECK(tf::range(0, 4, 1, tf::uint8).dtype() == tf::uint8);
    CHECK_THROWS_WITH(tf::range(0, 300, 1, tf::uint8),
                      Equals("Cannot convert 300 to EagerTensor of dtype uint8 [Op:Range]"));
    CHECK_THROWS_WITH(
        tf::range(0, big, 1, tf::int32),
        Catch::Contains("Cannot convert 1099511627776 to EagerTensor of dtype int32"));
    CHECK_THROWS_WITH(tf::range(0, 5, 0), Equals("Requires delta != 0: 0 [Op:Range]"));
    CHECK_THROWS_WITH(tf::range(5, 0, 1),
                      Equals("Requires start <= limit when delta > 0: 5/0 [Op:Range]"));
    CHECK_THROWS_AS(tf::range(0, std::numeric_limits<uint64_t>::max()),
                    tf::errors::InvalidArgumentError);
    // Extreme int64 arguments count without overflow.
    const int64_t mx = std::numeric_limits<int64_t>::max();
    CHECK(tf::range(mx - 2, mx).to_vector<int64_t>() == std::vector<int64_t>{mx - 2, mx - 1});
    CHECK(tf::range(std::numeric_limits<int64_t>::min(), mx, mx).num_elements() == 3);
    CHECK(tf::range(0, 0).shape() == tf::Shape{0});
    // A floating-point argument anywhere gives the float32 range, as Python floats do.
    CHECK(tf::range(0.0, 1.0, 0.1).dtype() == tf::float32);
    CHECK(tf::range(0.0, 1.0, 0.1).num_elements() == 10);
    CHECK(tf::range(5.0).dtype() == tf::float32);
    CHECK(tf::range(5.0f).to_vector<float>() == std::vector<float>{0, 1, 2, 3, 4});
    CHECK(tf::range(0, 2.5).to_vector<float>() == std::vector<float>{0, 1, 2});
    CHECK(tf::range(int64_t{1}, 2.0, 0.5).to_vector<float>() == std::vector<float>{1, 1.5});
    CHECK(tf::range(0, 3, 1.5, tf::float64).dtype() == tf::float64);
}

TEST_CASE("creation functions infer dtypes as TensorFlow does from Python numbers",
          "[dtype_rules]") {
    CHECK(tf::fill({2}, 5).dtype() == tf::int32);
    CHECK(tf::fill({2}, 5).to_vector<int>() == std::vector<int>{5, 5});
    CHECK(tf::fill({2}, 5.0).dtype() == tf::float32);
    CHECK(tf::fill({2}, 5.f).dtype() == tf::float32);
    CHECK(tf::fill({2}, 200, tf::uint8).dtype() == tf::uint8);
    const int64_t huge = (int64_t{1} << 62) + 1;
    CHECK(tf::fill({2}, huge).dtype() == tf::int64);
    CHECK(tf::fill({2}, huge).to_vector<int64_t>() == std::vector<int64_t>{huge, huge});
    CHECK(tf::zeros({2}).dtype() == tf::float32);
    CHECK(tf::ones({2}).dtype() == tf::float32);
    CHECK(tf::eye(2).dtype() == tf::float32);
    CHECK(tf::linspace(0, 1, 3).dtype() == tf::float32);
    CHECK(tf::one_hot(tf::constant({0, 1}), 2).dtype() == tf::float32);
    // constant() keeps the C++ type (a typed value, as a NumPy scalar in TensorFlow).
    CHECK(tf::constant(5).dtype() == tf::int32);
    CHECK(tf::constant(5.f).dtype() == tf::float32);
    CHECK(tf::constant(5.0).dtype() == tf::float64);
    CHECK(tf::constant(int64_t{5}).dtype() == tf::int64);
}

// The functions that take a number as a double parameter convert it to the tensor's dtype as
// TensorFlow converts the Python number: a value the dtype cannot hold raises instead of being
// truncated. A whole double is indistinguishable from a C++ int here, so it converts.
TEST_CASE("clip_by_value, pad, one_hot and fill refuse numbers their dtype cannot hold",
          "[dtype_rules]") {
    const tf::Tensor i32 = tf::constant({-3, 1, 7});
    CHECK(tf::clip_by_value(i32, 0, 5).to_vector<int>() == std::vector<int>{0, 1, 5});
    CHECK(message_of([&] { (void)tf::clip_by_value(i32, 0.5, 5); }) ==
          "Cannot convert 0.5 to EagerTensor of dtype int32 [Op:ClipByValue]");
    CHECK(message_of([&] { (void)tf::clip_by_value(i32, 0, 1e10); }) ==
          "Cannot convert 10000000000 to EagerTensor of dtype int32 [Op:ClipByValue]");
    CHECK(tf::clip_by_value(tf::constant({0.25f, 3.f}), 0.5, 2.5).to_vector<float>() ==
          std::vector<float>{0.5f, 2.5f});

    CHECK(tf::pad(i32, {{1, 0}}, "CONSTANT", 9).to_vector<int>() == std::vector<int>{9, -3, 1, 7});
    CHECK(message_of([&] {
              (void)tf::pad(i32, {{1, 0}}, "CONSTANT", 9.5);
          }) == "Cannot convert 9.5 to EagerTensor of dtype int32 [Op:Pad]");
    CHECK(message_of([&] {
              (void)tf::pad(tf::constant({uint8_t{1}}), {{1, 1}}, "CONSTANT", 300);
          }) == "Cannot convert 300 to EagerTensor of dtype uint8 [Op:Pad]");
    CHECK(message_of([&] {
              (void)tf::pad(tf::constant({uint8_t{1}}), {{1, 1}}, "CONSTANT", -1);
          }) == "Cannot convert -1 to EagerTensor of dtype uint8 [Op:Pad]");

    const tf::Tensor idx = tf::constant({0, 2});
    CHECK(tf::one_hot(idx, 3, 4, -1, -1, tf::int32).to_vector<int>() ==
          std::vector<int>{4, -1, -1, -1, -1, 4});
    CHECK(message_of([&] { (void)tf::one_hot(idx, 3, 0.5, 0, -1, tf::int32); }) ==
          "Cannot convert 0.5 to EagerTensor of dtype int32 [Op:OneHot]");
    CHECK(message_of([&] { (void)tf::one_hot(idx, 3, 1, NAN, -1, tf::int64); }) ==
          "Cannot convert nan to EagerTensor of dtype int64 [Op:OneHot]");
    CHECK(tf::one_hot(idx, 2, 1, 0, -1, tf::bool_).dtype() == tf::bool_);
    CHECK(message_of([&] { (void)tf::one_hot(idx, 2, 2, 0, -1, tf::bool_); }) ==
          "Cannot convert 2 to EagerTensor of dtype bool [Op:OneHot]");

    CHECK(message_of([&] { (void)tf::fill({2}, 2.5, tf::int32); }) ==
          "Cannot convert 2.5 to EagerTensor of dtype int32 [Op:Fill]");
    CHECK(message_of([&] { (void)tf::fill({2}, 256.0, tf::uint8); }) ==
          "Cannot convert 256 to EagerTensor of dtype uint8 [Op:Fill]");
    CHECK(tf::fill({1}, -9.0e18, tf::int64).to_vector<int64_t>()[0] ==
          int64_t{-9'000'000'000'000'000'000});
    CHECK(message_of([&] { (void)tf::fill({1}, 9.3e18, tf::int64); }) ==
          "Cannot convert 9.3e+18 to EagerTensor of dtype int64 [Op:Fill]");
    CHECK(tf::fill({2}, 2.5, tf::float16).dtype() == tf::float16);
}

TEST_CASE("mixing float16, bfloat16 and float32 operands raises TensorFlow's message",
          "[dtype_rules][mixed_precision]") {
    // TensorFlow names the dtypes as DataTypeString does: half, float, double, bfloat16.
    const tf::Tensor h = tf::ones({2}, tf::float16);
    const tf::Tensor f = tf::ones({2}, tf::float32);
    CHECK(message_of([&] { (void)tf::add(h, f); }) ==
          "cannot compute AddV2 as input #1(zero-based) was expected to be a half tensor but is a "
          "float tensor [Op:AddV2]");
    CHECK(message_of([&] { (void)tf::multiply(f, tf::ones({2}, tf::float64)); }) ==
          "cannot compute Mul as input #1(zero-based) was expected to be a float tensor but is a "
          "double tensor [Op:Mul]");
    CHECK(message_of([&] {
              (void)tf::matmul(tf::ones({2, 2}, tf::bfloat16), tf::ones({2, 2}));
          }) ==
          "cannot compute MatMul as input #1(zero-based) was expected to be a bfloat16 tensor but "
          "is a float tensor [Op:MatMul]");
    CHECK(message_of([&] { (void)tf::where(f, f, f); }) ==
          "cannot compute SelectV2 as input #0(zero-based) was expected to be a bool tensor but is "
          "a float tensor [Op:SelectV2]");
}
