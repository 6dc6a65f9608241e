// conv2d, max_pool2d and avg_pool2d: float64 finite-difference gradients (first and second
// order) for every padding mode, stride and dilation combination in both data formats, a direct
// reference convolution on larger float32 shapes (the chunked and 1x1 GEMM paths), TensorFlow's
// SAME rules and the errors.
#include <catch2/catch.hpp>

#include <tapeflow/tapeflow.hpp>

#include "nn/nn_testing.hpp"
#include "support/gradcheck.hpp"

namespace tf = tapeflow;
using tf::testing::check_gradients;
using tf::testing::random_f64;

namespace {

using Tensors = std::vector<tf::Tensor>;
using nn_testing::check_throws_with;
using nn_testing::gradient_fn;
using nn_testing::values;

// Direct NHWC/HWIO convolution in double.
std::vector<double> reference_conv(const tf::Tensor& x, const tf::Tensor& f, int64_t s, int64_t d,
                                   int64_t pt, int64_t pl, int64_t oh, int64_t ow) {
    const auto xv = values(x);
    const auto fv = values(f);
    const auto& xs = x.shape().dims();
    const auto& fs = f.shape().dims();
    const int64_t n = xs[0], h = xs[1], w = xs[2], c = xs[3];
    const int64_t kh = fs[0], kw = fs[1], o = fs[3];
    std::vector<double> y(static_cast<std::size_t>(n * oh * ow * o), 0.0);
    for (int64_t b = 0; b < n; ++b)
        for (int64_t i = 0; i < oh; ++i)
            for (int64_t j = 0; j < ow; ++j)
                for (int64_t p = 0; p < kh; ++p)
                    for (int64_t q = 0; q < kw; ++q) {
                        const int64_t ih = i * s - pt + p * d, iw = j * s - pl + q * d;
                        if (ih < 0 || ih >= h || iw < 0 || iw >= w) continue;
                        for (int64_t ci = 0; ci < c; ++ci)
                            for (int64_t co = 0; co < o; ++co)
                                y[static_cast<std::size_t>(((b * oh + i) * ow + j) * o + co)] +=
                                    xv[static_cast<std::size_t>(((b * h + ih) * w + iw) * c + ci)] *
                                    fv[static_cast<std::size_t>(((p * kw + q) * c + ci) * o + co)];
                    }
    return y;
}

}  // namespace

TEST_CASE("conv2d gradients for every padding, stride and dilation", "[nn][conv]") {
    const tf::Tensor x = random_f64({2, 5, 6, 3}, -1, 1, 1);
    const tf::Tensor f = random_f64({3, 2, 3, 2}, -1, 1, 2);
    for (const char* padding : {"SAME", "VALID"}) {
        for (int64_t stride : {1, 2}) {
            for (int64_t dilation : {1, 2}) {
                SECTION(std::string(padding) + " stride " + std::to_string(stride) + " dilation " +
                        std::to_string(dilation)) {
                    const auto conv = [=](const Tensors& in) {
                        return tf::nn::conv2d(in[0], in[1], stride, padding, "NHWC", dilation);
                    };
                    check_gradients(conv, {x, f});
                    check_gradients(gradient_fn(conv, 0), {x, f});
                    check_gradients(gradient_fn(conv, 1), {x, f});
                    // NCHW gives the same numbers, transposed.
                    const tf::Tensor nchw = tf::nn::conv2d(tf::transpose(x, {0, 3, 1, 2}), f,
                                                           stride, padding, "NCHW", dilation);
                    CHECK(values(tf::transpose(nchw, {0, 2, 3, 1})) == values(conv({x, f})));
                }
            }
        }
    }
    SECTION("explicit padding, strides per dimension, 1x1 filters") {
        const tf::Paddings pads = {{0, 0}, {1, 2}, {0, 1}, {0, 0}};
        check_gradients(
            [&](const Tensors& in) { return tf::nn::conv2d(in[0], in[1], {1, 2, 1, 1}, pads); },
            {x, f});
        const tf::Tensor f1 = random_f64({1, 1, 3, 4}, -1, 1, 3);
        check_gradients([](const Tensors& in) { return tf::nn::conv2d(in[0], in[1], 1, "VALID"); },
                        {x, f1});
        check_gradients([](const Tensors& in) { return tf::nn::conv2d(in[0], in[1], {2, 1}, "SAME"); },
                        {x, f1});
    }
}

TEST_CASE("conv2d matches a direct convolution on larger float32 inputs", "[nn][conv]") {
    const tf::Tensor x = random_f64({3, 17, 13, 5}, -1, 1, 4).cast(tf::float32);
    const tf::Tensor f = random_f64({3, 4, 5, 7}, -1, 1, 5).cast(tf::float32);
    // SAME, stride 2: out ceil(17/2)=9 x 7; pad_h total (9-1)*2+3-17 = 2 -> 1 before;
    // pad_w total (7-1)*2+4-13 = 3 -> 1 before, 2 after (TensorFlow puts the odd cell after).
    const auto got = values(tf::nn::conv2d(x, f, 2, "SAME"));
    const auto ref = reference_conv(x, f, 2, 1, 1, 1, 9, 7);
    REQUIRE(got.size() == ref.size());
    for (std::size_t i = 0; i < got.size(); ++i) CHECK(got[i] == Approx(ref[i]).margin(1e-4));
    const auto dil = values(tf::nn::conv2d(x, f, 1, "VALID", "NHWC", 2));
    const auto ref_dil = reference_conv(x, f, 1, 2, 0, 0, 13, 7);
    REQUIRE(dil.size() == ref_dil.size());
    for (std::size_t i = 0; i < dil.size(); ++i) CHECK(dil[i] == Approx(ref_dil[i]).margin(1e-4));
    // float16 computes through float32.
    const auto half = values(tf::nn::conv2d(x.cast(tf::float16), f.cast(tf::float16), 2, "SAME"));
    CHECK(half[0] == Approx(ref[0]).margin(0.05));
}

TEST_CASE("conv2d errors", "[nn][conv][errors]") {
    const tf::Tensor x = random_f64({1, 4, 4, 3});
    const tf::Tensor f = random_f64({3, 3, 3, 2});
    check_throws_with([&] { tf::nn::conv2d(x, random_f64({3, 3, 2, 2}), 1, "SAME"); },
                      "[1,4,4,3]", "[3,3,2,2]");
    check_throws_with([&] { tf::nn::conv2d(x, random_f64({3, 3, 2, 2}), 1, "SAME"); }, "[Op:Conv2D]");
    check_throws_with([&] { tf::nn::conv2d(random_f64({4, 4, 3}), f, 1, "SAME"); },
                      "4-dimensional", "[4,4,3]");
    check_throws_with([&] { tf::nn::conv2d(x, random_f64({3, 3, 3}), 1, "SAME"); },
                      "filter must be 4-dimensional", "[3,3,3]");
    check_throws_with([&] { tf::nn::conv2d(x, f, 1, "FULL"); }, "FULL", "padding");
    check_throws_with([&] { tf::nn::conv2d(x, f, {1, 1, 1}, "SAME"); }, "strides");
    check_throws_with([&] { tf::nn::conv2d(x, f, {2, 1, 1, 1}, "SAME"); }, "batch");
    check_throws_with([&] { tf::nn::conv2d(x, f, 1, "SAME", "NCWH"); }, "NCWH");
    check_throws_with([&] { tf::nn::conv2d(random_f64({1, 1, 1, 3}), f, 1, "VALID"); },
                      "negative");
    check_throws_with([&] { tf::nn::conv2d(x, f.cast(tf::float32), 1, "SAME"); }, "float32");
    check_throws_with([&] { tf::nn::conv2d(x.cast(tf::int32), f.cast(tf::int32), 1, "SAME"); },
                      "int32");
}

TEST_CASE("pooling gradients and TensorFlow's SAME rules", "[nn][pool]") {
    const tf::Tensor x = random_f64({2, 5, 6, 3}, -1, 1, 6);  // distinct values: no max ties
    for (const char* padding : {"SAME", "VALID"}) {
        for (int64_t stride : {1, 2}) {
            for (int64_t k : {2, 3}) {
                SECTION(std::string(padding) + " stride " + std::to_string(stride) + " ksize " +
                        std::to_string(k)) {
                    const auto maxp = [=](const Tensors& in) {
                        return tf::nn::max_pool2d(in[0], k, stride, padding);
                    };
                    const auto avgp = [=](const Tensors& in) {
                        return tf::nn::avg_pool2d(in[0], k, stride, padding);
                    };
                    check_gradients(maxp, {x});
                    check_gradients(avgp, {x});
                    check_gradients(gradient_fn(maxp, 0), {x});
                    check_gradients(gradient_fn(avgp, 0), {x});
                    const tf::Tensor xt = tf::transpose(x, {0, 3, 1, 2});
                    CHECK(values(tf::transpose(tf::nn::max_pool2d(xt, k, stride, padding, "NCHW"),
                                               {0, 2, 3, 1})) == values(maxp({x})));
                    CHECK(values(tf::transpose(tf::nn::avg_pool2d(xt, k, stride, padding, "NCHW"),
                                               {0, 2, 3, 1})) == values(avgp({x})));
                }
            }
        }
    }
    SECTION("SAME averages over non-padding cells only; padding never wins a max") {
        const tf::Tensor ones = tf::ones({1, 3, 3, 1}, tf::float64);
        CHECK(values(tf::nn::avg_pool2d(ones, 2, 2, "SAME")) == std::vector<double>{1, 1, 1, 1});
        const tf::Tensor neg = -tf::ones({1, 3, 3, 1}, tf::float64);
        CHECK(values(tf::nn::max_pool2d(neg, 2, 2, "SAME")) == std::vector<double>{-1, -1, -1, -1});
        const tf::Tensor big = random_f64({4, 32, 32, 16}, -1, 1, 7).cast(tf::float32);
        CHECK(tf::nn::max_pool2d(big, {1, 3, 3, 1}, {1, 2, 2, 1}, "SAME").shape() ==
              tf::Shape{4, 16, 16, 16});
    }
    SECTION("errors") {
        check_throws_with([&] { tf::nn::max_pool2d(x, {2, 2, 1, 1}, 1, "VALID"); }, "batch",
                          "[Op:MaxPool]");
        check_throws_with([&] { tf::nn::avg_pool2d(x, 2, 1, "same"); }, "same", "[Op:AvgPool]");
        check_throws_with([] { tf::nn::max_pool2d(random_f64({5, 6, 3}), 2, 1, "VALID"); },
                          "4-dimensional", "[5,6,3]");
        check_throws_with([&] { tf::nn::avg_pool2d(x, 7, 1, "VALID"); }, "negative");
    }
}
