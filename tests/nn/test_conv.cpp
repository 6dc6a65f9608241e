// conv2d, max_pool2d and avg_pool2d: float64 finite-difference gradients (first and second
// order) for every padding mode, stride and dilation combination in both data formats, a direct
// reference convolution on larger float32 shapes (the chunked and 1x1 GEMM paths), TensorFlow's
// SAME rules and the errors.
#include <catch2/catch.hpp>
#include <cblas.h>
#include <omp.h>

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

// Calls term(y_index, x_index, f_index) for every product x * f that a direct NHWC/HWIO
// convolution adds into an output element.
template <class Term>
void for_each_term(const tf::Shape& x,
                   const tf::Shape& f,
                   int64_t s,
                   int64_t d,
                   int64_t pt,
                   int64_t pl,
                   int64_t oh,
                   int64_t ow,
                   const Term& term) {
    const int64_t n = x[0], h = x[1], w = x[2], c = x[3];
    const int64_t kh = f[0], kw = f[1], o = f[3];
    const auto at = [](int64_t i) {
        return static_cast<std::size_t>(i);
    };
    for (int64_t b = 0; b < n; ++b)
        for (int64_t i = 0; i < oh; ++i)
            for (int64_t j = 0; j < ow; ++j)
                for (int64_t p = 0; p < kh; ++p)
                    for (int64_t q = 0; q < kw; ++q) {
                        const int64_t ih = i * s - pt + p * d, iw = j * s - pl + q * d;
                        if (ih < 0 || ih >= h || iw < 0 || iw >= w) continue;
                        for (int64_t ci = 0; ci < c; ++ci)
                            for (int64_t co = 0; co < o; ++co)
                                term(at(((b * oh + i) * ow + j) * o + co),
                                     at(((b * h + ih) * w + iw) * c + ci),
                                     at(((p * kw + q) * c + ci) * o + co));
                    }
}

// Direct convolution in double.
std::vector<double> reference_conv(const tf::Tensor& x,
                                   const tf::Tensor& f,
                                   int64_t s,
                                   int64_t d,
                                   int64_t pt,
                                   int64_t pl,
                                   int64_t oh,
                                   int64_t ow) {
    const auto xv = values(x);
    const auto fv = values(f);
    std::vector<double> y(static_cast<std::size_t>(x.shape()[0] * oh * ow * f.shape()[3]), 0.0);
    for_each_term(
        x.shape(),
        f.shape(),
        s,
        d,
        pt,
        pl,
        oh,
        ow,
        [&](std::size_t yi, std::size_t xi, std::size_t fi) { y[yi] += xv[xi] * fv[fi]; });
    return y;
}

// The gradients of sum(g * conv(x, f)) by the same direct loops: dx and df.
std::pair<std::vector<double>, std::vector<double>> reference_conv_grads(const tf::Tensor& x,
                                                                         const tf::Tensor& f,
                                                                         const tf::Tensor& g,
                                                                         int64_t s,
                                                                         int64_t d,
                                                                         int64_t pt,
                                                                         int64_t pl) {
    const auto xv = values(x);
    const auto fv = values(f);
    const auto gv = values(g);
    std::vector<double> dx(xv.size(), 0.0), df(fv.size(), 0.0);
    for_each_term(x.shape(),
                  f.shape(),
                  s,
                  d,
                  pt,
                  pl,
                  g.shape()[1],
                  g.shape()[2],
                  [&](std::size_t yi, std::size_t xi, std::size_t fi) {
                      dx[xi] += gv[yi] * fv[fi];
                      df[fi] += gv[yi] * xv[xi];
                  });
    return {dx, df};
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
                    const tf::Tensor nchw = tf::nn::conv2d(
                        tf::transpose(x, {0, 3, 1, 2}), f, stride, padding, "NCHW", dilation);
                    CHECK(values(tf::transpose(nchw, {0, 2, 3, 1})) == values(conv({x, f})));
                }
            }
        }
    }
    SECTION("explicit padding, strides per dimension, 1x1 filters") {
        const tf::Paddings pads = {{0, 0}, {1, 2}, {0, 1}, {0, 0}};
        check_gradients(
            [&](const Tensors& in) {
                return tf::nn::conv2d(in[0], in[1], {1, 2, 1, 1}, pads);
            },
            {x, f});
        const tf::Tensor f1 = random_f64({1, 1, 3, 4}, -1, 1, 3);
        check_gradients([](const Tensors& in) { return tf::nn::conv2d(in[0], in[1], 1, "VALID"); },
                        {x, f1});
        check_gradients(
            [](const Tensors& in) {
                return tf::nn::conv2d(in[0], in[1], {2, 1}, "SAME");
            },
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
    for (std::size_t i = 0; i < got.size(); ++i)
        CHECK(got[i] == Approx(ref[i]).margin(1e-4));
    const auto dil = values(tf::nn::conv2d(x, f, 1, "VALID", "NHWC", 2));
    const auto ref_dil = reference_conv(x, f, 1, 2, 0, 0, 13, 7);
    REQUIRE(dil.size() == ref_dil.size());
    for (std::size_t i = 0; i < dil.size(); ++i)
        CHECK(dil[i] == Approx(ref_dil[i]).margin(1e-4));
    // float16 computes through float32.
    const auto half = values(tf::nn::conv2d(x.cast(tf::float16), f.cast(tf::float16), 2, "SAME"));
    CHECK(half[0] == Approx(ref[0]).margin(0.05));
}

TEST_CASE("conv2d leaves OpenBLAS on its calling thread", "[nn][conv]") {
    // Three 1024-pixel blocks of float64 (always OpenBLAS): the kernel sets OpenBLAS to one thread
    // and leaves it so. Switching it back after each kernel woke OpenBLAS's pool, whose spinning
    // threads made the Keras convnet's 2-thread step 3x slower than its 1-thread one.
    const tf::Tensor x = random_f64({3, 30, 25, 2}, -1, 1, 6);
    const tf::Tensor f = random_f64({3, 3, 2, 4}, -1, 1, 7);
    const int saved = openblas_get_num_threads();
    openblas_set_num_threads(2);
    (void)tf::nn::conv2d(x, f, 1, "SAME").to_vector<double>();
    CHECK(openblas_get_num_threads() == 1);
    (void)tf::nn::conv2d(x, f, 1, "SAME").to_vector<double>();
    CHECK(openblas_get_num_threads() == 1);
    openblas_set_num_threads(saved);
}

TEST_CASE("conv2d and its gradients over many blocks match direct loops on any thread count",
          "[nn][conv]") {
    // 3 x 30 x 25 output pixels: several 1024-pixel blocks, image groups and filter partials.
    // Pads: SAME stride 2 gives 15 x 13 outputs, (14*2+3-30 = 1 row: 0 before), (12*2+3-25 = 2).
    const tf::Tensor x = random_f64({3, 30, 25, 2}, -1, 1, 6);
    const tf::Tensor f = random_f64({3, 3, 2, 4}, -1, 1, 7);
    struct Case {
        const char* padding;
        int64_t stride, dilation, pad_top, pad_left;
    };
    for (const Case k : {Case{"SAME", 1, 1, 1, 1},
                         Case{"VALID", 1, 1, 0, 0},
                         Case{"SAME", 2, 1, 0, 1},
                         Case{"SAME", 1, 2, 2, 2}}) {
        SECTION(std::string(k.padding) + " stride " + std::to_string(k.stride) + " dilation " +
                std::to_string(k.dilation)) {
            const auto run = [&] {
                tf::GradientTape tape;
                tape.watch(x);
                tape.watch(f);
                const tf::Tensor y = tf::nn::conv2d(x, f, k.stride, k.padding, "NHWC", k.dilation);
                const tf::Tensor g = tf::sin(y);  // an upstream gradient with no structure
                const auto grads = tape.gradient(tf::reduce_sum(y * tf::stop_gradient(g)), {x, f});
                return std::tuple{values(y), values(grads[0]), values(grads[1]), g};
            };
            const auto [y, dx, df, g] = run();
            const auto& ys = g.shape().dims();
            const auto ref =
                reference_conv(x, f, k.stride, k.dilation, k.pad_top, k.pad_left, ys[1], ys[2]);
            const auto [ref_dx, ref_df] =
                reference_conv_grads(x, f, g, k.stride, k.dilation, k.pad_top, k.pad_left);
            REQUIRE(y.size() == ref.size());
            for (std::size_t i = 0; i < y.size(); ++i)
                CHECK(y[i] == Approx(ref[i]).margin(1e-12));
            for (std::size_t i = 0; i < dx.size(); ++i)
                CHECK(dx[i] == Approx(ref_dx[i]).margin(1e-12));
            for (std::size_t i = 0; i < df.size(); ++i)
                CHECK(df[i] == Approx(ref_df[i]).margin(1e-10));
            // One thread gives the same bits: blocks and partial sums follow the shapes only.
            const int saved = omp_get_max_threads();
            omp_set_num_threads(1);
            const auto [y1, dx1, df1, g1] = run();
            omp_set_num_threads(saved);
            CHECK(y1 == y);
            CHECK(dx1 == dx);
            CHECK(df1 == df);
        }
    }
}

TEST_CASE("conv2d errors", "[nn][conv][errors]") {
    const tf::Tensor x = random_f64({1, 4, 4, 3});
    const tf::Tensor f = random_f64({3, 3, 3, 2});
    check_throws_with(
        [&] {
            tf::nn::conv2d(x, random_f64({3, 3, 2, 2}), 1, "SAME");
        },
        "[1,4,4,3]",
        "[3,3,2,2]");
    check_throws_with(
        [&] {
            tf::nn::conv2d(x, random_f64({3, 3, 2, 2}), 1, "SAME");
        },
        "[Op:Conv2D]");
    check_throws_with(
        [&] {
            tf::nn::conv2d(random_f64({4, 4, 3}), f, 1, "SAME");
        },
        "4-dimensional",
        "[4,4,3]");
    check_throws_with(
        [&] {
            tf::nn::conv2d(x, random_f64({3, 3, 3}), 1, "SAME");
        },
        "filter must be 4-dimensional",
        "[3,3,3]");
    check_throws_with([&] { tf::nn::conv2d(x, f, 1, "FULL"); }, "FULL", "padding");
    check_throws_with([&] { tf::nn::conv2d(x, f, {1, 1, 1}, "SAME"); }, "strides");
    check_throws_with([&] { tf::nn::conv2d(x, f, {2, 1, 1, 1}, "SAME"); }, "batch");
    check_throws_with([&] { tf::nn::conv2d(x, f, 1, "SAME", "NCWH"); }, "NCWH");
    check_throws_with([&] { tf::nn::conv2d(random_f64({1, 1, 1, 3}), f, 1, "VALID"); }, "negative");
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
        check_throws_with(
            [&] {
                tf::nn::max_pool2d(x, {2, 2, 1, 1}, 1, "VALID");
            },
            "batch",
            "[Op:MaxPool]");
        check_throws_with([&] { tf::nn::avg_pool2d(x, 2, 1, "same"); }, "same", "[Op:AvgPool]");
        check_throws_with(
            [] {
                tf::nn::max_pool2d(random_f64({5, 6, 3}), 2, 1, "VALID");
            },
            "4-dimensional",
            "[5,6,3]");
        check_throws_with([&] { tf::nn::avg_pool2d(x, 7, 1, "VALID"); }, "negative");
    }
}

TEST_CASE("float32 conv2d and its gradients agree with float64 through either sgemm kernel",
          "[nn][conv]") {
    // TAPEFLOW_SGEMM picks the float32 gemm kernel (gemm_route.hpp; the baseline set,
    // TAPEFLOW_CPU_ISA=x86-64, runs OpenBLAS for both). Shapes: 5 x 63 x 65 pixels are 20 blocks
    // (the last one short) in 8 filter-gradient partials, so each partial accumulates 2-3 blocks
    // into one result (beta 1); K = 288 crosses the packed sgemm's 256-long k slices; o = 19 and 21
    // cross its 16-column tiles; the 1x1 filter takes the sliced gemms.
    struct Case {
        tf::Shape x, f;
        int64_t stride;
        const char* padding;
    };
    const std::vector<Case> cases = {{{5, 63, 65, 3}, {3, 3, 3, 19}, 1, "SAME"},
                                     {{2, 12, 11, 32}, {3, 3, 32, 21}, 2, "VALID"},
                                     {{3, 20, 30, 40}, {1, 1, 40, 24}, 1, "VALID"}};
    const int saved = omp_get_max_threads();
    struct ChosenSgemm {  // unset again however the test ends
        ~ChosenSgemm() { unsetenv("TAPEFLOW_SGEMM"); }
    } chosen;
    for (const char* kernel : {"packed", "openblas"}) {
        setenv("TAPEFLOW_SGEMM", kernel, 1);
        for (const Case& c : cases) {
            const tf::Tensor x = random_f64(c.x, -1, 1, 8).cast(tf::float32);
            const tf::Tensor f = random_f64(c.f, -1, 1, 9).cast(tf::float32);
            const auto run = [&](int threads) {
                omp_set_num_threads(threads);
                tf::GradientTape tape;
                tape.watch(x);
                tape.watch(f);
                const tf::Tensor y = tf::nn::conv2d(x, f, c.stride, c.padding);
                const tf::Tensor g = tf::sin(y);  // an upstream gradient with no structure
                const auto grads = tape.gradient(tf::reduce_sum(y * tf::stop_gradient(g)), {x, f});
                omp_set_num_threads(saved);
                return std::tuple{values(y), values(grads[0]), values(grads[1]), g};
            };
            const auto [y, dx, df, g] = run(2);
            // The float64 result of the same float32 values (the gradient g as float32 saw it).
            const tf::Tensor x64 = x.cast(tf::float64), f64 = f.cast(tf::float64);
            const tf::Tensor g64 = g.cast(tf::float64);
            tf::GradientTape tape;
            tape.watch(x64);
            tape.watch(f64);
            const tf::Tensor y64 = tf::nn::conv2d(x64, f64, c.stride, c.padding);
            const auto grads64 = tape.gradient(tf::reduce_sum(y64 * g64), {x64, f64});
            const auto ref = values(y64), ref_dx = values(grads64[0]);
            const auto ref_df = values(grads64[1]);
            INFO(kernel << " sgemm, x " << c.x.str() << ", filter " << c.f.str());
            REQUIRE(y.size() == ref.size());
            for (std::size_t i = 0; i < y.size(); ++i)
                CHECK(y[i] == Approx(ref[i]).margin(1e-4));
            for (std::size_t i = 0; i < dx.size(); ++i)
                CHECK(dx[i] == Approx(ref_dx[i]).margin(1e-4));
            for (std::size_t i = 0; i < df.size(); ++i)  // sums of up to 20475 products
                CHECK(df[i] == Approx(ref_df[i]).epsilon(1e-4).margin(1e-3));
            // One thread gives the same bits whatever the kernel: blocks, partials and slices never
            // split a sum, and a sliced gemm is cut by its shape alone (gemm_slices), so OpenBLAS
            // sees the same calls (its small-matrix and edge kernels round differently).
            const auto [y1, dx1, df1, g1] = run(1);
            CHECK(y1 == y);
            CHECK(dx1 == dx);
            CHECK(df1 == df);
        }
    }
}
