// Printing: TensorFlow 2's print(t). Every expected string was produced with
// NumPy 1.24, as str(np.array(..., dtype=...)) wrapped the way TensorFlow's numpy_text does
// ("\n" first when the text has several lines). bfloat16 follows TensorFlow's own numpy type.
#include <cmath>
#include <numeric>
#include <sstream>

#include <catch2/catch.hpp>

#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;

namespace {

// 0, 1, 2, ... in `shape`, as `dtype`.
tf::Tensor iota(const tf::Shape& shape, tf::DType dtype) {
    std::vector<double> values(static_cast<std::size_t>(shape.num_elements()));
    std::iota(values.begin(), values.end(), 0.0);
    return tf::constant(values, shape, dtype);
}

}  // namespace

TEST_CASE("float32 scalars print like Python's repr of a NumPy scalar", "[format]") {
    CHECK(tf::constant(3.0f).str() == "tf.Tensor(3.0, shape=(), dtype=float32)");
    CHECK(tf::constant(0.1f).str() == "tf.Tensor(0.1, shape=(), dtype=float32)");
    CHECK(tf::constant(1e-5f).str() == "tf.Tensor(1e-05, shape=(), dtype=float32)");
    CHECK(tf::constant(1e20f).str() == "tf.Tensor(1e+20, shape=(), dtype=float32)");
    CHECK(tf::constant(NAN).str() == "tf.Tensor(nan, shape=(), dtype=float32)");
    CHECK(tf::constant(INFINITY).str() == "tf.Tensor(inf, shape=(), dtype=float32)");
    CHECK(tf::constant(-INFINITY).str() == "tf.Tensor(-inf, shape=(), dtype=float32)");
    CHECK(tf::constant(-0.0f).str() == "tf.Tensor(-0.0, shape=(), dtype=float32)");
    CHECK(tf::constant(123.456f).str() == "tf.Tensor(123.456, shape=(), dtype=float32)");
    // float32(1e-4) is just below 1e-4, so NumPy switches to scientific notation.
    CHECK(tf::constant(1e-4f).str() == "tf.Tensor(1e-04, shape=(), dtype=float32)");
    // Shortest digits that round-trip through float32, then zeros.
    CHECK(tf::constant(33554448.f).str() == "tf.Tensor(33554450.0, shape=(), dtype=float32)");
}

TEST_CASE("scalars of the other dtypes", "[format]") {
    CHECK(tf::constant(0.1).str() == "tf.Tensor(0.1, shape=(), dtype=float64)");
    CHECK(tf::constant(1.0 / 3).str() == "tf.Tensor(0.3333333333333333, shape=(), dtype=float64)");
    CHECK(tf::constant(1e16).str() == "tf.Tensor(1e+16, shape=(), dtype=float64)");
    CHECK(tf::constant(-1e-7).str() == "tf.Tensor(-1e-07, shape=(), dtype=float64)");
    CHECK(tf::constant(5).str() == "tf.Tensor(5, shape=(), dtype=int32)");
    CHECK(tf::constant(int64_t{1} << 60).str() ==
          "tf.Tensor(1152921504606846976, shape=(), dtype=int64)");
    CHECK(tf::constant(int64_t{-7}).str() == "tf.Tensor(-7, shape=(), dtype=int64)");
    CHECK(tf::constant(255, tf::uint8).str() == "tf.Tensor(255, shape=(), dtype=uint8)");
    CHECK(tf::constant(true).str() == "tf.Tensor(True, shape=(), dtype=bool)");
    CHECK(tf::constant(false).str() == "tf.Tensor(False, shape=(), dtype=bool)");
}

TEST_CASE("float16 prints the shortest digits that round-trip through float16", "[format]") {
    CHECK(tf::constant(0.1f, tf::float16).str() == "tf.Tensor(0.1, shape=(), dtype=float16)");
    CHECK(tf::constant(1.f / 3, tf::float16).str() == "tf.Tensor(0.3333, shape=(), dtype=float16)");
    CHECK(tf::constant(65504.f, tf::float16).str() ==
          "tf.Tensor(65500.0, shape=(), dtype=float16)");
    CHECK(tf::constant(6e-8f, tf::float16).str() == "tf.Tensor(6e-08, shape=(), dtype=float16)");
    CHECK(tf::constant({0.1f, 1.f / 3}, tf::float16).str() ==
          "tf.Tensor([0.1    0.3333], shape=(2,), dtype=float16)");
}

TEST_CASE("bfloat16 prints each element as %g with 6 digits, unpadded", "[format]") {
    // TensorFlow's bfloat16 is not a NumPy float type, so NumPy prints each element's repr, which
    // is C++ `ostream << float` of the value (1/3 rounds to 0.333984375 in bfloat16).
    CHECK(tf::constant(3.f, tf::bfloat16).str() == "tf.Tensor(3, shape=(), dtype=bfloat16)");
    CHECK(tf::constant(1.f / 3, tf::bfloat16).str() ==
          "tf.Tensor(0.333984, shape=(), dtype=bfloat16)");
    CHECK(tf::constant(1e20f, tf::bfloat16).str() ==
          "tf.Tensor(9.97277e+19, shape=(), dtype=bfloat16)");
    CHECK(tf::constant({1.f, 2.5f, -3.f, 1e-5f}, tf::bfloat16).str() ==
          "tf.Tensor([1 2.5 -3 1.00136e-05], shape=(4,), dtype=bfloat16)");
}

TEST_CASE("vectors pad every element to a common width", "[format]") {
    CHECK(tf::constant({1, 2, 3}).str() == "tf.Tensor([1 2 3], shape=(3,), dtype=int32)");
    CHECK(tf::constant({1, 20, 300}).str() == "tf.Tensor([  1  20 300], shape=(3,), dtype=int32)");
    CHECK(tf::constant({-1, 2}).str() == "tf.Tensor([-1  2], shape=(2,), dtype=int32)");
    CHECK(tf::constant({7, 200, 0}, tf::uint8).str() ==
          "tf.Tensor([  7 200   0], shape=(3,), dtype=uint8)");
    CHECK(tf::constant({int64_t{1} << 40, int64_t{-3}}).str() ==
          "tf.Tensor([1099511627776            -3], shape=(2,), dtype=int64)");
    CHECK(tf::constant({true, false}).str() == "tf.Tensor([ True False], shape=(2,), dtype=bool)");
    CHECK(tf::constant({1.f, 2.f, 3.f}).str() ==
          "tf.Tensor([1. 2. 3.], shape=(3,), dtype=float32)");
    CHECK(tf::constant({0.1, 1.0 / 3}).str() ==
          "tf.Tensor([0.1        0.33333333], shape=(2,), dtype=float64)");
    // Arrays print every integer digit (NumPy's min_digits=0), unlike the scalar above.
    CHECK(tf::constant({33554448.f, 1e7f}).str() ==
          "tf.Tensor([33554448. 10000000.], shape=(2,), dtype=float32)");
}

TEST_CASE("decimal points line up and negatives take a sign column", "[format]") {
    CHECK(tf::constant({1.f, 2.5f, -3.125f}).str() ==
          "tf.Tensor([ 1.     2.5   -3.125], shape=(3,), dtype=float32)");
    CHECK(tf::constant({1.5f, -2.25f}).str() ==
          "tf.Tensor([ 1.5  -2.25], shape=(2,), dtype=float32)");
    CHECK(tf::constant({{-1.5, 2.0}, {3.0, 40.0}}).str() ==
          "tf.Tensor(\n[[-1.5  2. ]\n [ 3.  40. ]], shape=(2, 2), dtype=float64)");
}

TEST_CASE("nan and inf are padded to the common width", "[format]") {
    CHECK(tf::constant({NAN, INFINITY, 1.5f}).str() ==
          "tf.Tensor([nan inf 1.5], shape=(3,), dtype=float32)");
    CHECK(tf::constant({NAN, -INFINITY}).str() ==
          "tf.Tensor([ nan -inf], shape=(2,), dtype=float32)");
    CHECK(tf::constant({NAN, 1.f, -INFINITY}).str() ==
          "tf.Tensor([ nan   1. -inf], shape=(3,), dtype=float32)");
}

TEST_CASE("mixed magnitudes switch to scientific notation", "[format]") {
    CHECK(tf::constant({1e-5f, 1.f}).str() ==
          "tf.Tensor([1.e-05 1.e+00], shape=(2,), dtype=float32)");
    CHECK(tf::constant({1e8f, 1.f}).str() ==
          "tf.Tensor([1.e+08 1.e+00], shape=(2,), dtype=float32)");
    CHECK(tf::constant({-1e-5f, 2.5e3f, 0.f}).str() ==
          "tf.Tensor([-1.0e-05  2.5e+03  0.0e+00], shape=(3,), dtype=float32)");
    CHECK(tf::constant({1e-5f, NAN}).str() ==
          "tf.Tensor([1.e-05    nan], shape=(2,), dtype=float32)");
    // Padded to the longest mantissa with the exact float32 digits: 0.3f is 0.30000001192...
    CHECK(tf::constant({0.3f, 1.2345678e-5f}).str() ==
          "tf.Tensor([3.0000001e-01 1.2345678e-05], shape=(2,), dtype=float32)");
}

TEST_CASE("rank 2 and up: one row per line, blank lines between blocks", "[format]") {
    CHECK(tf::constant({{1.f, 2.f}, {3.f, 4.f}}).str() ==
          "tf.Tensor(\n[[1. 2.]\n [3. 4.]], shape=(2, 2), dtype=float32)");
    CHECK(tf::constant({{true}, {false}}).str() ==
          "tf.Tensor(\n[[ True]\n [False]], shape=(2, 1), dtype=bool)");
    // TensorFlow adds the leading newline only when the text has several lines.
    CHECK(tf::constant({{1, 2}}).str() == "tf.Tensor([[1 2]], shape=(1, 2), dtype=int32)");
    CHECK(tf::constant({{{1, 2}, {3, 4}}, {{5, 6}, {7, 8}}}).str() ==
          "tf.Tensor(\n[[[1 2]\n  [3 4]]\n\n [[5 6]\n  [7 8]]], shape=(2, 2, 2), dtype=int32)");
    CHECK(iota({2, 2, 2, 2}, tf::int32).str() ==
          "tf.Tensor(\n"
          "[[[[ 0  1]\n   [ 2  3]]\n\n  [[ 4  5]\n   [ 6  7]]]\n\n\n"
          " [[[ 8  9]\n   [10 11]]\n\n  [[12 13]\n   [14 15]]]], shape=(2, 2, 2, 2), dtype=int32)");
}

TEST_CASE("long rows wrap at 75 columns", "[format]") {
    CHECK(tf::range(0.0, 30.0).str() ==
          "tf.Tensor(\n"
          "[ 0.  1.  2.  3.  4.  5.  6.  7.  8.  9. 10. 11. 12. 13. 14. 15. 16. 17.\n"
          " 18. 19. 20. 21. 22. 23. 24. 25. 26. 27. 28. 29.], shape=(30,), dtype=float32)");
    CHECK(tf::range(0, 100, 1, tf::int32).str() ==
          "tf.Tensor(\n"
          "[ 0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15 16 17 18 19 20 21 22 23\n"
          " 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47\n"
          " 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63 64 65 66 67 68 69 70 71\n"
          " 72 73 74 75 76 77 78 79 80 81 82 83 84 85 86 87 88 89 90 91 92 93 94 95\n"
          " 96 97 98 99], shape=(100,), dtype=int32)");
    CHECK(tf::constant(std::vector<bool>(40, true), tf::Shape{40}).str() ==
          "tf.Tensor(\n"
          "[ True  True  True  True  True  True  True  True  True  True  True  True\n"
          "  True  True  True  True  True  True  True  True  True  True  True  True\n"
          "  True  True  True  True  True  True  True  True  True  True  True  True\n"
          "  True  True  True  True], shape=(40,), dtype=bool)");
}

TEST_CASE("more than 1000 elements: the middle of long axes is elided", "[format]") {
    // Widths come from the shown elements only; 1999 / 1 > 1000 makes float32 scientific.
    CHECK(tf::range(0.0, 2000.0).str() ==
          "tf.Tensor([0.000e+00 1.000e+00 2.000e+00 ... 1.997e+03 1.998e+03 1.999e+03], "
          "shape=(2000,), dtype=float32)");
    CHECK(tf::range(0, 2000, 1, tf::int32).str() ==
          "tf.Tensor([   0    1    2 ... 1997 1998 1999], shape=(2000,), dtype=int32)");
    CHECK(tf::range(0, 1001, 1, tf::int32).str() ==
          "tf.Tensor([   0    1    2 ...  998  999 1000], shape=(1001,), dtype=int32)");
    CHECK(tf::range(0, 1000, 1, tf::int32).str().find("...") == std::string::npos);
    CHECK(iota({100, 100}, tf::float32).str() ==
          "tf.Tensor(\n"
          "[[0.000e+00 1.000e+00 2.000e+00 ... 9.700e+01 9.800e+01 9.900e+01]\n"
          " [1.000e+02 1.010e+02 1.020e+02 ... 1.970e+02 1.980e+02 1.990e+02]\n"
          " [2.000e+02 2.010e+02 2.020e+02 ... 2.970e+02 2.980e+02 2.990e+02]\n"
          " ...\n"
          " [9.700e+03 9.701e+03 9.702e+03 ... 9.797e+03 9.798e+03 9.799e+03]\n"
          " [9.800e+03 9.801e+03 9.802e+03 ... 9.897e+03 9.898e+03 9.899e+03]\n"
          " [9.900e+03 9.901e+03 9.902e+03 ... 9.997e+03 9.998e+03 9.999e+03]], "
          "shape=(100, 100), dtype=float32)");
    CHECK(iota({2, 1000}, tf::int64).str() ==
          "tf.Tensor(\n[[   0    1    2 ...  997  998  999]\n"
          " [1000 1001 1002 ... 1997 1998 1999]], shape=(2, 1000), dtype=int64)");
}

TEST_CASE("an elided rank-3 tensor keeps the blank lines around '...'", "[format]") {
    const std::string text = iota({11, 11, 11}, tf::int32).str();
    CHECK(
        text.starts_with("tf.Tensor(\n[[[   0    1    2 ...    8    9   10]\n"
                         "  [  11   12   13 ...   19   20   21]\n"
                         "  [  22   23   24 ...   30   31   32]\n"
                         "  ...\n"
                         "  [  88   89   90 ...   96   97   98]\n"));
    CHECK(text.find("  [ 352  353  354 ...  360  361  362]]\n\n ...\n\n [[ 968  969  970 ...") !=
          std::string::npos);
    CHECK(text.ends_with(
        "  [1320 1321 1322 ... 1328 1329 1330]]], shape=(11, 11, 11), dtype=int32)"));
}

TEST_CASE("empty tensors print []", "[format]") {
    CHECK(tf::zeros({0}).str() == "tf.Tensor([], shape=(0,), dtype=float32)");
    CHECK(tf::zeros({2, 0}).str() == "tf.Tensor([], shape=(2, 0), dtype=float32)");
    CHECK(tf::zeros({0, 3}, tf::int32).str() == "tf.Tensor([], shape=(0, 3), dtype=int32)");
}

TEST_CASE("fmt and operator<< print the same text as str()", "[format]") {
    const auto t = tf::constant({{1.f, 2.f}, {3.f, 4.f}});
    std::ostringstream os;
    os << t;
    CHECK(fmt::format("{}", t) == t.str());
    CHECK(os.str() == t.str());
    CHECK(fmt::format("{}", tf::Tensor()) == "None");
}
