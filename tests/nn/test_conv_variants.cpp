// conv1d, conv2d_transpose and depthwise_conv2d: float64 references (direct loops; the input
// gradient of conv2d; conv2d with a block-diagonal dense filter), finite-difference gradients of
// first and second order for every padding, stride, dilation, multiplier and data format,
// thread-count independence, and the errors.
#include <catch2/catch.hpp>
#include <omp.h>

#include <tapeflow/ops/conv.hpp>
#include <tapeflow/ops/sort.hpp>
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

void check_close(const std::vector<double>& got,
                 const std::vector<double>& want,
                 double tol = 1e-12) {
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < got.size(); ++i)
        CHECK(got[i] == Approx(want[i]).margin(tol));
}

// The SAME padding before a dimension (TensorFlow's: the odd cell goes after).
int64_t same_pad_before(int64_t in, int64_t k, int64_t s, int64_t d) {
    const int64_t out = (in + s - 1) / s;
    return std::max<int64_t>((out - 1) * s + (k - 1) * d + 1 - in, 0) / 2;
}

// Dense [kh, kw, c, c * m] filter that is zero except w[i, j, c, c * m + k] = f[i, j, c, k].
tf::Tensor block_diagonal(const tf::Tensor& f) {
    const auto& s = f.shape();
    const int64_t kh = s[0], kw = s[1], c = s[2], m = s[3];
    const auto fv = values(f);
    std::vector<double> w(static_cast<std::size_t>(kh * kw * c * c * m), 0.0);
    for (int64_t t = 0; t < kh * kw; ++t)
        for (int64_t ci = 0; ci < c; ++ci)
            for (int64_t k = 0; k < m; ++k)
                w[static_cast<std::size_t>((t * c + ci) * c * m + ci * m + k)] =
                    fv[static_cast<std::size_t>((t * c + ci) * m + k)];
    return tf::constant(w, tf::Shape{kh, kw, c, c * m}, tf::float64);
}

}  // namespace

TEST_CASE("conv1d is a direct 1-D convolution; gradients of two orders", "[nn][conv1d]") {
    const tf::Tensor x = random_f64({2, 9, 3}, -1, 1, 1);
    const tf::Tensor f = random_f64({3, 3, 4}, -1, 1, 2);
    const auto xv = values(x), fv = values(f);
    for (const char* padding : {"SAME", "VALID"}) {
        for (const int64_t stride : {1, 2}) {
            for (const int64_t dil : {1, 2}) {
                INFO(padding << " stride " << stride << " dilation " << dil);
                const tf::Tensor y = tf::nn::conv1d(x, f, stride, padding, "NWC", dil);
                const bool same = std::string(padding) == "SAME";
                const int64_t ow =
                    same ? (9 + stride - 1) / stride : (9 - 2 * dil - 1 + stride) / stride;
                const int64_t pad = same ? same_pad_before(9, 3, stride, dil) : 0;
                REQUIRE(y.shape() == tf::Shape{2, ow, 4});
                std::vector<double> ref(static_cast<std::size_t>(2 * ow * 4), 0.0);
                for (int64_t n = 0; n < 2; ++n)
                    for (int64_t o = 0; o < ow; ++o)
                        for (int64_t j = 0; j < 3; ++j) {
                            const int64_t iw = o * stride - pad + j * dil;
                            if (iw < 0 || iw >= 9) continue;
                            for (int64_t c = 0; c < 3; ++c)
                                for (int64_t k = 0; k < 4; ++k)
                                    ref[static_cast<std::size_t>((n * ow + o) * 4 + k)] +=
                                        xv[static_cast<std::size_t>((n * 9 + iw) * 3 + c)] *
                                        fv[static_cast<std::size_t>((j * 3 + c) * 4 + k)];
                        }
                check_close(values(y), ref);
                const auto conv = [=](const Tensors& in) {
                    return tf::nn::conv1d(in[0], in[1], stride, padding, "NWC", dil);
                };
                check_gradients(conv, {x, f});
                check_gradients(gradient_fn(conv, 0), {x, f});
                check_gradients(gradient_fn(conv, 1), {x, f});
                const tf::Tensor ncw =
                    tf::nn::conv1d(tf::transpose(x, {0, 2, 1}), f, stride, padding, "NCW", dil);
                check_close(values(tf::transpose(ncw, {0, 2, 1})), values(y));
            }
        }
    }
}

TEST_CASE("conv2d_transpose is conv2d's input gradient; gradients of two orders",
          "[nn][conv2d_transpose]") {
    const tf::Tensor f = random_f64({3, 2, 2, 3}, -1, 1, 3);  // [H, W, out = 2, in = 3]
    struct Case {
        const char* padding;
        int64_t stride, dilation;
        tf::Shape out;  // the transposed conv's output (the conv2d's input), NHWC
    };
    // Both 7 and 8 rows give 4 with SAME stride 2: output_shape picks one.
    for (const Case& k : {Case{"SAME", 2, 1, {2, 7, 8, 2}},
                          Case{"SAME", 2, 1, {2, 8, 7, 2}},
                          Case{"VALID", 2, 1, {2, 9, 8, 2}},
                          Case{"SAME", 1, 2, {2, 4, 5, 2}},
                          Case{"VALID", 1, 1, {2, 6, 5, 2}}}) {
        INFO(k.padding << " stride " << k.stride << " dilation " << k.dilation << " out "
                       << k.out.debug_string());
        const tf::Tensor probe = tf::zeros(k.out, tf::float64);
        const tf::Shape in_shape =
            tf::nn::conv2d(probe, f, k.stride, k.padding, "NHWC", k.dilation).shape();
        const tf::Tensor x = random_f64(in_shape, -1, 1, 4);
        const tf::Tensor y =
            tf::nn::conv2d_transpose(x, f, k.out, k.stride, k.padding, "NHWC", k.dilation);
        REQUIRE(y.shape() == k.out);
        // d/dz sum(conv2d(z, f) * x) at any z is the transposed convolution of x.
        tf::GradientTape tape;
        tape.watch(probe);
        const tf::Tensor loss =
            tf::reduce_sum(tf::nn::conv2d(probe, f, k.stride, k.padding, "NHWC", k.dilation) * x);
        check_close(values(y), values(tape.gradient(loss, probe).dense()));
        const auto conv_t = [=](const Tensors& in) {
            return tf::nn::conv2d_transpose(
                in[0], in[1], k.out, k.stride, k.padding, "NHWC", k.dilation);
        };
        check_gradients(conv_t, {x, f});
        check_gradients(gradient_fn(conv_t, 0), {x, f});
        check_gradients(gradient_fn(conv_t, 1), {x, f});
        const tf::Shape nchw_out{k.out[0], k.out[3], k.out[1], k.out[2]};
        const tf::Tensor nchw = tf::nn::conv2d_transpose(
            tf::transpose(x, {0, 3, 1, 2}), f, nchw_out, k.stride, k.padding, "NCHW", k.dilation);
        check_close(values(tf::transpose(nchw, {0, 2, 3, 1})), values(y));
    }
    SECTION("a direct scatter loop, SAME with the odd padding cell after") {
        // out 5 x 5, stride 2, kernel 3: conv2d output 3 x 3, total pad (3-1)*2+3-5 = 2 -> 1
        // before.
        const tf::Tensor x = random_f64({1, 3, 3, 3}, -1, 1, 5);
        const tf::Tensor y = tf::nn::conv2d_transpose(x, f, {1, 5, 5, 2}, 2);
        const auto xv = values(x), fv = values(f);
        std::vector<double> ref(50, 0.0);
        for (int64_t oh = 0; oh < 3; ++oh)
            for (int64_t ow = 0; ow < 3; ++ow)
                for (int64_t i = 0; i < 3; ++i)
                    for (int64_t j = 0; j < 2; ++j) {
                        const int64_t h = oh * 2 - 1 + i;
                        const int64_t w =
                            ow * 2 - 0 + j;  // kernel width 2: pad (3-1)*2+2-5 = 1 -> 0 before
                        if (h < 0 || h >= 5 || w < 0 || w >= 5) continue;
                        for (int64_t o = 0; o < 2; ++o)
                            for (int64_t c = 0; c < 3; ++c)
                                ref[static_cast<std::size_t>((h * 5 + w) * 2 + o)] +=
                                    xv[static_cast<std::size_t>((oh * 3 + ow) * 3 + c)] *
                                    fv[static_cast<std::size_t>(((i * 2 + j) * 2 + o) * 3 + c)];
                    }
        check_close(values(y), ref);
    }
}

TEST_CASE("depthwise_conv2d is conv2d with a block-diagonal filter; gradients of two orders",
          "[nn][depthwise]") {
    const tf::Tensor x = random_f64({2, 6, 5, 3}, -1, 1, 6);
    for (const int64_t mult : {1, 2}) {
        const tf::Tensor f = random_f64({3, 2, 3, mult}, -1, 1, 7);
        const tf::Tensor dense = block_diagonal(f);
        for (const char* padding : {"SAME", "VALID"}) {
            for (const int64_t stride : {1, 2}) {
                for (const int64_t dil : {1, 2}) {
                    INFO("multiplier " << mult << " " << padding << " stride " << stride
                                       << " dilation " << dil);
                    const auto dw = [=](const Tensors& in) {
                        return tf::nn::depthwise_conv2d(in[0], in[1], stride, padding, "NHWC", dil);
                    };
                    const tf::Tensor y = dw({x, f});
                    check_close(values(y),
                                values(tf::nn::conv2d(x, dense, stride, padding, "NHWC", dil)));
                    check_gradients(dw, {x, f});
                    check_gradients(gradient_fn(dw, 0), {x, f});
                    check_gradients(gradient_fn(dw, 1), {x, f});
                    const tf::Tensor nchw = tf::nn::depthwise_conv2d(
                        tf::transpose(x, {0, 3, 1, 2}), f, stride, padding, "NCHW", dil);
                    check_close(values(tf::transpose(nchw, {0, 2, 3, 1})), values(y));
                }
            }
        }
    }
    SECTION(
        "larger float32 inputs: forward and both gradients match conv2d's, on any thread count") {
        const tf::Tensor xb = random_f64({2, 33, 30, 70}, -1, 1, 8).cast(tf::float32);
        const tf::Tensor fb = random_f64({3, 3, 70, 2}, -1, 1, 9).cast(tf::float32);
        const tf::Tensor dense = block_diagonal(fb.cast(tf::float64)).cast(tf::float32);
        const auto run = [&](const tf::Tensor& filt, bool depthwise) {
            tf::GradientTape tape;
            tape.watch(xb);
            tape.watch(filt);
            const tf::Tensor y = depthwise ? tf::nn::depthwise_conv2d(xb, filt, 2, "SAME")
                                           : tf::nn::conv2d(xb, filt, 2, "SAME");
            const auto g =
                tape.gradient(tf::reduce_sum(y * tf::stop_gradient(tf::sin(y))), {xb, filt});
            return std::tuple{values(y), values(g[0].dense()), values(g[1].dense())};
        };
        const auto [y, dx, df] = run(fb, true);
        const auto [ry, rdx, rdf_dense] = run(dense, false);
        check_close(y, ry, 1e-4);
        check_close(dx, rdx, 1e-4);
        // The dense filter's gradient on the block diagonal is the depthwise filter's.
        std::vector<double> diag;
        for (int64_t t = 0; t < 9; ++t)
            for (int64_t c = 0; c < 70; ++c)
                for (int64_t m = 0; m < 2; ++m)
                    diag.push_back(
                        rdf_dense[static_cast<std::size_t>((t * 70 + c) * 140 + c * 2 + m)]);
        check_close(df, diag, 1e-3);
        const int saved = omp_get_max_threads();
        omp_set_num_threads(1);
        const auto [y1, dx1, df1] = run(fb, true);
        omp_set_num_threads(saved);
        CHECK(y1 == y);
        CHECK(dx1 == dx);
        CHECK(df1 == df);
    }
}

TEST_CASE("conv1d, conv2d_transpose and depthwise_conv2d errors", "[nn][conv][errors]") {
    const tf::Tensor x3 = random_f64({2, 9, 3});
    check_throws_with(
        [&] {
            tf::nn::conv1d(x3, random_f64({3, 4, 5}), 1, "SAME");
        },
        "3 vs 4",
        "[W, in, out]");
    check_throws_with([&] { tf::nn::conv1d(x3, random_f64({3, 3, 5}), 1, "SAME", "NHWC"); }, "NWC");
    check_throws_with(
        [&] {
            tf::nn::conv1d(random_f64({9, 3}), random_f64({3, 3, 5}), 1, "SAME");
        },
        "3-dimensional",
        "[9,3]");
    check_throws_with(
        [&] {
            tf::nn::conv1d(x3, random_f64({3, 3}), 1, "SAME");
        },
        "[W, in, out]",
        "[3,3]");
    const tf::Tensor x4 = random_f64({2, 4, 4, 3});
    const tf::Tensor ft = random_f64({3, 3, 2, 3});  // [H, W, out 2, in 3]
    check_throws_with(
        [&] {
            tf::nn::conv2d_transpose(x4, ft, {2, 8, 8, 5}, 2);
        },
        "out dimension",
        "[Op:Conv2DBackpropInput]");
    check_throws_with(
        [&] {
            tf::nn::conv2d_transpose(x4, random_f64({3, 3, 2, 4}), {2, 8, 8, 2}, 2);
        },
        "in dimension",
        "[H, W, out, in]");
    check_throws_with(
        [&] {
            tf::nn::conv2d_transpose(x4, ft, {2, 9, 9, 2}, 1);
        },
        "[9, 9]",
        "[4, 4]");
    check_throws_with([&] { tf::nn::conv2d_transpose(x4, ft, {3, 8, 8, 2}, 2); }, "batch");
    check_throws_with([&] { tf::nn::conv2d_transpose(x4, ft, {8, 8, 2}, 2); }, "4 dimensions");
    check_throws_with([&] { tf::nn::conv2d_transpose(x4, ft, {2, 8, 8, 2}, 2, "FULL"); }, "FULL");
    check_throws_with(
        [&] {
            tf::nn::depthwise_conv2d(x4, random_f64({3, 3, 2, 1}), 1, "SAME");
        },
        "3 vs 2",
        "[Op:DepthwiseConv2dNative]");
    check_throws_with(
        [&] {
            tf::nn::depthwise_conv2d(x4, random_f64({3, 3, 3}), 1, "SAME");
        },
        "[H, W, in, multiplier]");
    check_throws_with(
        [&] {
            tf::nn::depthwise_conv2d(
                x4.cast(tf::int32), random_f64({3, 3, 3, 1}).cast(tf::int32), 1, "SAME");
        },
        "int32");
}
