// tf::image: resize against float64 references written here from TensorFlow's formulas (and
// TensorFlow's documented values), gradients by finite differences in float64, flips, crops,
// standardization, dtype conversion with TensorFlow's scaling, PNG round trips and bad inputs.
#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <tapeflow/tapeflow.hpp>

#include "keras/keras_support.hpp"

namespace tf = tapeflow;
using tf::testing::check_close;
using tf::testing::check_gradients;
using tf::testing::random_f64;

namespace {

// A [1, H, W, 1] float64 tensor from row-major values.
tf::Tensor image_of(const std::vector<double>& v, int64_t h, int64_t w) {
    return tf::constant(v, tf::Shape{1, h, w, 1}, tf::float64);
}

// One axis of a separable reference: out x in weights.
using Weights = std::vector<std::vector<double>>;

// The 2-D reference: out[i][j] = sum_{a, b} wy[i][a] wx[j][b] in[a][b], [1, H, W, 1] images.
std::vector<double> apply2d(const std::vector<double>& in,
                            int64_t w,
                            const Weights& wy,
                            const Weights& wx) {
    std::vector<double> out;
    for (const auto& ry : wy)
        for (const auto& rx : wx) {
            double s = 0;
            for (std::size_t a = 0; a < ry.size(); ++a)
                for (std::size_t b = 0; b < rx.size(); ++b)
                    s += ry[a] * rx[b] * in[a * static_cast<std::size_t>(w) + b];
            out.push_back(s);
        }
    return out;
}

// Half-pixel bilinear: x = (o + 0.5) in / out - 0.5, the two neighbours clamped to the image.
Weights bilinear_weights(int64_t in, int64_t out) {
    Weights wt(out, std::vector<double>(in, 0.0));
    for (int64_t o = 0; o < out; ++o) {
        const double x = (o + 0.5) * double(in) / double(out) - 0.5;
        const double f = std::floor(x);
        const int64_t lo = std::max<int64_t>(int64_t(f), 0);
        const int64_t hi = std::min<int64_t>(int64_t(std::ceil(x)), in - 1);
        wt[o][lo] += 1 - (x - f);
        wt[o][hi] += x - f;
    }
    return wt;
}

// Keys' cubic (a = -0.5) on the four neighbours, outside ones dropped and the rest renormalized;
// with `table`, the fraction rounded to TensorFlow's 1/1024 coefficient table.
Weights bicubic_weights(int64_t in, int64_t out, bool table = false) {
    auto keys = [](double t) {
        t = std::abs(t);
        if (t < 1) return 1.5 * t * t * t - 2.5 * t * t + 1;
        if (t < 2) return -0.5 * t * t * t + 2.5 * t * t - 4 * t + 2;
        return 0.0;
    };
    Weights wt(out, std::vector<double>(in, 0.0));
    for (int64_t o = 0; o < out; ++o) {
        const double x = (o + 0.5) * double(in) / double(out) - 0.5;
        const int64_t f = int64_t(std::floor(x));
        const double frac = table ? std::round((x - double(f)) * 1024) / 1024 : x - double(f);
        double sum = 0;
        for (int64_t s = f - 1; s <= f + 2; ++s)
            if (s >= 0 && s < in) sum += keys(double(f) + frac - double(s));
        for (int64_t s = f - 1; s <= f + 2; ++s)
            if (s >= 0 && s < in) wt[o][s] += keys(double(f) + frac - double(s)) / sum;
    }
    return wt;
}

// Area: the overlap of [o s, (o + 1) s) with each input cell, divided by s = in / out.
Weights area_weights(int64_t in, int64_t out) {
    const double s = double(in) / double(out);
    Weights wt(out, std::vector<double>(in, 0.0));
    for (int64_t o = 0; o < out; ++o)
        for (int64_t i = 0; i < in; ++i)
            wt[o][i] =
                std::max(0.0, std::min(double(i + 1), (o + 1) * s) - std::max(double(i), o * s)) /
                s;
    return wt;
}

// Antialiased triangle filter (ScaleAndTranslate): the kernel widened by in / out when
// downscaling, sampled at the source centres, normalized.
Weights triangle_weights(int64_t in, int64_t out) {
    const double inv = double(in) / double(out), ks = std::max(inv, 1.0);
    Weights wt(out, std::vector<double>(in, 0.0));
    for (int64_t o = 0; o < out; ++o) {
        const double sample = (o + 0.5) * inv;
        double sum = 0;
        for (int64_t i = 0; i < in; ++i) {
            wt[o][i] = std::max(0.0, 1 - std::abs((i + 0.5 - sample) / ks));
            sum += wt[o][i];
        }
        for (auto& v : wt[o])
            v /= sum;
    }
    return wt;
}

std::vector<double> ramp(int64_t n, double scale = 1) {
    std::vector<double> v(n);
    for (int64_t i = 0; i < n; ++i)
        v[i] = scale * std::sin(0.7 * double(i) + 0.3) + 0.1 * double(i);
    return v;
}

}  // namespace

TEST_CASE("resize bilinear: TF2's half-pixel values", "[image][resize]") {
    // TensorFlow: [[1, 2], [3, 4]] to 4x4 gives rows [1, 1.25, 1.75, 2] ... [3, 3.25, 3.75, 4].
    const tf::Tensor x = tf::constant({{1.f, 2.f}, {3.f, 4.f}});
    const tf::Tensor y = tf::image::resize(tf::reshape(x, {2, 2, 1}), {4, 4});
    CHECK(y.dtype() == tf::float32);
    CHECK(y.shape() == tf::Shape{4, 4, 1});
    check_close(tf::reshape(y, {4, 4}),
                tf::constant({{1.0, 1.25, 1.75, 2.0},
                              {1.5, 1.75, 2.25, 2.5},
                              {2.5, 2.75, 3.25, 3.5},
                              {3.0, 3.25, 3.75, 4.0}}),
                1e-6,
                1e-6);
    // tf.image.resize's docstring: the 5x5 identity to 3x5.
    std::vector<double> eye(25, 0.0);
    for (int i = 0; i < 5; ++i)
        eye[i * 6] = 1;
    const tf::Tensor z = tf::image::resize(tf::cast(image_of(eye, 5, 5), tf::float32), {3, 5});
    check_close(tf::reshape(z, {3, 5}),
                tf::constant({{0.6666667, 0.3333333, 0.0, 0.0, 0.0},
                              {0.0, 0.0, 1.0, 0.0, 0.0},
                              {0.0, 0.0, 0.0, 0.3333335, 0.6666665}}),
                1e-5,
                1e-6);
    // Up and down, odd sizes: the 2-D reference (the op's coordinates are float32, as
    // TensorFlow's, so a float64 image matches to about 1e-7).
    for (const auto& [h, w, oh, ow] : std::vector<std::array<int64_t, 4>>{
             {3, 5, 7, 4}, {6, 4, 2, 9}, {5, 5, 5, 5}, {1, 3, 4, 1}}) {
        const std::vector<double> in = ramp(h * w);
        const tf::Tensor out = tf::image::resize(image_of(in, h, w), {oh, ow});
        CHECK(out.dtype() == tf::float64);
        check_close(out,
                    tf::constant(apply2d(in, w, bilinear_weights(h, oh), bilinear_weights(w, ow)),
                                 tf::Shape{1, oh, ow, 1}),
                    1e-6,
                    1e-7);
    }
    // Integer images compute in float32.
    const tf::Tensor u8 = tf::cast(tf::reshape(x, {2, 2, 1}), tf::uint8);
    CHECK(tf::image::resize(u8, {4, 4}).dtype() == tf::float32);
}

TEST_CASE("resize nearest, bicubic, area and antialias against the formulas", "[image][resize]") {
    // nearest: floor((o + 0.5) in / out), clamped; the dtype is kept.
    const tf::Tensor ints = tf::reshape(tf::range(0, 12), {1, 3, 4, 1});
    const tf::Tensor n = tf::image::resize(ints, {5, 3}, "nearest");
    CHECK(n.dtype() == tf::int32);
    std::vector<int32_t> expect;
    for (int o = 0; o < 5; ++o)
        for (int p = 0; p < 3; ++p) {
            const int r = std::min(2, int(std::floor((o + 0.5) * 3.0 / 5.0)));
            const int c = std::min(3, int(std::floor((p + 0.5) * 4.0 / 3.0)));
            expect.push_back(r * 4 + c);
        }
    CHECK(n.to_vector<int32_t>() == expect);

    // bicubic (sizes whose fractions are exact in TensorFlow's 1/1024 table).
    const std::vector<double> in = ramp(4 * 8, 2);
    check_close(tf::image::resize(image_of(in, 4, 8), {8, 16}, "bicubic"),
                tf::constant(apply2d(in, 8, bicubic_weights(4, 8), bicubic_weights(8, 16)),
                             tf::Shape{1, 8, 16, 1}),
                1e-9,
                1e-9);
    check_close(tf::image::resize(image_of(in, 4, 8), {2, 4}, "bicubic"),
                tf::constant(apply2d(in, 8, bicubic_weights(4, 2), bicubic_weights(8, 4)),
                             tf::Shape{1, 2, 4, 1}),
                1e-9,
                1e-9);

    // Fractions off the table (4 -> 7, 8 -> 5): TensorFlow rounds them to 1/1024 first.
    check_close(
        tf::image::resize(image_of(in, 4, 8), {7, 5}, "bicubic"),
        tf::constant(apply2d(in, 8, bicubic_weights(4, 7, true), bicubic_weights(8, 5, true)),
                     tf::Shape{1, 7, 5, 1}),
        1e-6,
        1e-7);

    // area: 4x8 -> 3x3 (fractional overlaps) and 2x4 (block means).
    for (const auto& [oh, ow] : std::vector<std::pair<int64_t, int64_t>>{{3, 3}, {2, 4}, {6, 11}})
        check_close(tf::image::resize(image_of(in, 4, 8), {oh, ow}, "area"),
                    tf::constant(apply2d(in, 8, area_weights(4, oh), area_weights(8, ow)),
                                 tf::Shape{1, oh, ow, 1}),
                    1e-6,
                    1e-6);

    // antialias: 4 -> 2 weights (3/7, 3/7, 1/7, 0) per the widened triangle; no effect upscaling.
    const Weights t = triangle_weights(4, 2);
    CHECK(t[0][0] == Approx(3.0 / 7.0));
    CHECK(t[0][2] == Approx(1.0 / 7.0));
    check_close(tf::image::resize(image_of(in, 4, 8), {2, 3}, "bilinear", false, true),
                tf::constant(apply2d(in, 8, triangle_weights(4, 2), triangle_weights(8, 3)),
                             tf::Shape{1, 2, 3, 1}),
                1e-6,
                1e-6);
    const tf::Tensor small = image_of(ramp(9), 3, 3);
    check_close(tf::image::resize(small, {5, 7}, "bilinear", false, true),
                tf::image::resize(small, {5, 7}),
                1e-6,
                1e-6);
    // The scale-and-translate kernels keep constant images constant.
    for (const char* m : {"lanczos3", "lanczos5", "gaussian", "mitchellcubic"})
        check_close(tf::image::resize(tf::ones({1, 6, 5, 2}, tf::float64), {4, 9}, m),
                    tf::ones({1, 4, 9, 2}, tf::float64),
                    1e-6,
                    1e-6);
}

TEST_CASE("resize: preserve_aspect_ratio, shapes and bad arguments", "[image][resize][errors]") {
    const tf::Tensor x = tf::zeros({2, 4, 6, 3});
    CHECK(tf::image::resize(x, {10, 10}, "bilinear", true).shape() == tf::Shape{2, 7, 10, 3});
    CHECK(tf::image::resize(x, {2, 100}, "nearest", true).shape() == tf::Shape{2, 2, 3, 3});
    CHECK(tf::image::resize(tf::zeros({4, 6, 3}), {3, 5}).shape() == tf::Shape{3, 5, 3});
    CHECK_THROWS_WITH(tf::image::resize(tf::zeros({4, 6}), {2, 2}),
                      Catch::Contains("3 or 4 dimensions") && Catch::Contains("[4,6]"));
    CHECK_THROWS_WITH(tf::image::resize(x, {2, 0}), Catch::Contains("size"));
    CHECK_THROWS_WITH(tf::image::resize(x, {2}), Catch::Contains("2 positive integers"));
    CHECK_THROWS_WITH(tf::image::resize(x, {2, 2}, "cubic"),
                      Catch::Contains("not implemented") && Catch::Contains("cubic"));
    CHECK_THROWS_AS(tf::image::resize(tf::zeros({1, 0, 3, 1}), {2, 2}),
                    tf::errors::InvalidArgumentError);
}

TEST_CASE("resize gradients by finite differences", "[image][resize][grad]") {
    const tf::Tensor x = random_f64({2, 3, 4, 2});
    for (const char* method : {"bilinear", "nearest", "bicubic", "area", "lanczos3"})
        for (const auto& size : std::vector<tf::Ints>{{5, 7}, {2, 3}}) {
            INFO(method);
            check_gradients(
                [&](const std::vector<tf::Tensor>& in) {
                    return tf::image::resize(in[0], size, method);
                },
                {x});
        }
    check_gradients(
        [&](const std::vector<tf::Tensor>& in) {
            return tf::image::resize(in[0], {2, 2}, "bilinear", false, true);
        },
        {x});
}

TEST_CASE("flips, crops and their gradients", "[image][flip][crop]") {
    const tf::Tensor x = tf::reshape(tf::range(0, 24), {2, 3, 4});  // [H, W, C]
    const auto v = x.to_vector<int32_t>();
    const auto lr = tf::image::flip_left_right(x).to_vector<int32_t>();
    const auto ud = tf::image::flip_up_down(x).to_vector<int32_t>();
    for (int h = 0; h < 2; ++h)
        for (int w = 0; w < 3; ++w)
            for (int c = 0; c < 4; ++c) {
                CHECK(lr[(h * 3 + w) * 4 + c] == v[(h * 3 + (2 - w)) * 4 + c]);
                CHECK(ud[(h * 3 + w) * 4 + c] == v[((1 - h) * 3 + w) * 4 + c]);
            }
    const tf::Tensor b = random_f64({2, 3, 4, 2});
    check_close(tf::image::flip_left_right(b),
                tf::stack({tf::image::flip_left_right(tf::unstack(b)[0]),
                           tf::image::flip_left_right(tf::unstack(b)[1])}));
    for (auto op : {tf::image::flip_left_right, tf::image::flip_up_down})
        check_gradients([&](const std::vector<tf::Tensor>& in) { return op(in[0]); }, {b});
    CHECK_THROWS_WITH(tf::image::flip_left_right(tf::zeros({3, 4})),
                      Catch::Contains("flip_left_right") && Catch::Contains("3 or 4"));

    // central_crop: start int((n - n f) / 2), size n - 2 start.
    const tf::Tensor img = random_f64({5, 8, 1});
    const tf::Tensor c = tf::image::central_crop(img, 0.5);
    CHECK(c.shape() == tf::Shape{3, 4, 1});
    check_close(c, tf::slice(img, {1, 2, 0}, {3, 4, 1}), 0, 0);
    CHECK(tf::image::central_crop(img, 1.0).shape() == img.shape());
    check_gradients(
        [&](const std::vector<tf::Tensor>& in) { return tf::image::central_crop(in[0], 0.6); },
        {img});
    CHECK_THROWS_WITH(tf::image::central_crop(img, 0.0), Catch::Contains("(0, 1]"));

    // random_crop: a block of the value at a seeded offset.
    const tf::Tensor big = tf::reshape(tf::range(0.0, 60.0, 1.0, tf::float64), {6, 10, 1});
    const tf::Tensor r1 = tf::image::random_crop(big, {3, 4, 1}, 7);
    CHECK(r1.shape() == tf::Shape{3, 4, 1});
    const auto r = r1.to_vector<double>();
    const int64_t h0 = int64_t(r[0]) / 10, w0 = int64_t(r[0]) % 10;
    check_close(r1, tf::slice(big, {h0, w0, 0}, {3, 4, 1}), 0, 0);
    tf::random::set_seed(3);
    const auto a = tf::image::random_crop(big, {2, 2, 1}, 5).to_vector<double>();
    tf::random::set_seed(3);
    CHECK(tf::image::random_crop(big, {2, 2, 1}, 5).to_vector<double>() == a);
    check_gradients(
        [&](const std::vector<tf::Tensor>& in) {
            tf::random::set_seed(11);
            return tf::image::random_crop(in[0], {2, 3, 1}, 1);
        },
        {random_f64({4, 5, 1})});
    CHECK_THROWS_WITH(tf::image::random_crop(big, {7, 2, 1}),
                      Catch::Contains("value.shape >= size") && Catch::Contains("[6,10,1]"));
    CHECK_THROWS_AS(tf::image::random_crop(big, {2, 2}), tf::errors::InvalidArgumentError);
}

TEST_CASE("random_flip_left_right flips whole images with a seed", "[image][flip][random]") {
    const tf::Tensor x = random_f64({16, 2, 3, 1});
    tf::random::set_seed(1);
    const tf::Tensor y = tf::image::random_flip_left_right(x, 4);
    const tf::Tensor flipped = tf::image::flip_left_right(x);
    int flips = 0;
    for (int64_t i = 0; i < 16; ++i) {
        const auto yi = tf::slice(y, {i, 0, 0, 0}, {1, 2, 3, 1}).to_vector<double>();
        const bool same = yi == tf::slice(x, {i, 0, 0, 0}, {1, 2, 3, 1}).to_vector<double>();
        const bool flip = yi == tf::slice(flipped, {i, 0, 0, 0}, {1, 2, 3, 1}).to_vector<double>();
        CHECK((same || flip));
        flips += flip ? 1 : 0;
    }
    CHECK(flips > 0);
    CHECK(flips < 16);
    tf::random::set_seed(1);
    check_close(tf::image::random_flip_left_right(x, 4), y, 0, 0);
    const tf::Tensor one = tf::image::random_flip_up_down(random_f64({2, 3, 1}), 2);
    CHECK(one.shape() == tf::Shape{2, 3, 1});
}

TEST_CASE("per_image_standardization, brightness and contrast", "[image][adjust]") {
    const tf::Tensor x = random_f64({2, 3, 4, 2}, 0, 5);
    const tf::Tensor s = tf::image::per_image_standardization(x);
    const auto v = x.to_vector<double>(), sv = s.to_vector<double>();
    for (int i = 0; i < 2; ++i) {
        double mean = 0, var = 0;
        for (int j = 0; j < 24; ++j)
            mean += v[i * 24 + j] / 24;
        for (int j = 0; j < 24; ++j)
            var += (v[i * 24 + j] - mean) * (v[i * 24 + j] - mean) / 24;
        const double sd = std::max(std::sqrt(var), 1 / std::sqrt(24.0));
        for (int j = 0; j < 24; ++j)
            CHECK(sv[i * 24 + j] == Approx((v[i * 24 + j] - mean) / sd).epsilon(1e-12));
    }
    check_gradients(
        [&](const std::vector<tf::Tensor>& in) {
            return tf::image::per_image_standardization(in[0]);
        },
        {x});
    // A uniform image: stddev 0 is clamped to 1 / sqrt(pixels), the result 0 (no NaN).
    const tf::Tensor flat = tf::image::per_image_standardization(tf::fill({2, 2, 1}, 3.0));
    CHECK(flat.dtype() == tf::float32);
    check_close(flat, tf::zeros({2, 2, 1}));

    check_close(tf::image::adjust_brightness(x, 0.25), x + 0.25, 0, 1e-15);
    // uint8: through float32 and back, saturating: (100 / 255 + 0.1) * 255.5 truncated.
    const tf::Tensor u8 = tf::cast(tf::constant({100, 250, 0}), tf::uint8);
    const tf::Tensor b = tf::image::adjust_brightness(tf::reshape(u8, {1, 3, 1}), 0.1);
    CHECK(b.dtype() == tf::uint8);
    const float f100 = (100.0f * (1.0f / 255.0f) + 0.1f) * 255.5f;
    const float f0 = (0.0f + 0.1f) * 255.5f;
    CHECK(b.to_vector<uint8_t>() == std::vector<uint8_t>{uint8_t(f100), 255, uint8_t(f0)});

    const tf::Tensor c = tf::image::adjust_contrast(x, 1.5);
    const auto cv = c.to_vector<double>();
    for (int n = 0; n < 2; ++n)
        for (int ch = 0; ch < 2; ++ch) {
            double mean = 0;
            for (int p = 0; p < 12; ++p)
                mean += v[(n * 12 + p) * 2 + ch] / 12;
            for (int p = 0; p < 12; ++p) {
                const std::size_t k = (n * 12 + p) * 2 + ch;
                CHECK(cv[k] == Approx((v[k] - mean) * 1.5 + mean).epsilon(1e-12));
            }
        }
}

TEST_CASE("convert_image_dtype scales as TensorFlow", "[image][dtype]") {
    const tf::Tensor u8 = tf::cast(tf::constant({0, 51, 255}), tf::uint8);
    const tf::Tensor f = tf::image::convert_image_dtype(u8, tf::float32);
    CHECK(f.dtype() == tf::float32);
    check_close(f, tf::constant({0.0f, 51.0f / 255.0f, 1.0f}), 1e-7, 1e-7);
    // float -> uint8: times 255.5, truncated; saturate clips first.
    const tf::Tensor g = tf::constant({0.0f, 0.5f, 1.0f, 0.999f});
    CHECK(tf::image::convert_image_dtype(g, tf::uint8).to_vector<uint8_t>() ==
          std::vector<uint8_t>{0, 127, 255, 255});
    CHECK(tf::image::convert_image_dtype(tf::constant({-0.5f, 2.0f}), tf::uint8, true)
              .to_vector<uint8_t>() == std::vector<uint8_t>{0, 255});
    // int -> int: uint8 -> int32 times 2^23, int32 -> uint8 floor-divided by 2^23.
    const tf::Tensor i32 = tf::image::convert_image_dtype(u8, tf::int32);
    CHECK(i32.to_vector<int32_t>() == std::vector<int32_t>{0, 51 << 23, 255 << 23});
    CHECK(tf::image::convert_image_dtype(i32, tf::uint8).to_vector<uint8_t>() ==
          std::vector<uint8_t>{0, 51, 255});
    CHECK(tf::image::convert_image_dtype(tf::constant({int64_t{1} << 40}), tf::int32)
              .to_vector<int32_t>() == std::vector<int32_t>{1 << 8});
    // float -> float: a cast; same dtype: unchanged.
    CHECK(tf::image::convert_image_dtype(g, tf::float64).dtype() == tf::float64);
    CHECK(tf::image::convert_image_dtype(g, tf::float32).to_vector<float>() ==
          g.to_vector<float>());
    // int32 saturation from float32 stays inside int32.
    CHECK(tf::image::convert_image_dtype(tf::constant({2.0f}), tf::int32, true)
              .to_vector<int32_t>()[0] > 2147483000);
    CHECK_THROWS_WITH(tf::image::convert_image_dtype(tf::constant({true}), tf::float32),
                      Catch::Contains("floating point or integer"));
}

TEST_CASE("PNG encode and decode round trip, with channel conversions", "[image][png]") {
    for (int64_t channels = 1; channels <= 4; ++channels) {
        std::vector<int32_t> values;
        for (int64_t i = 0; i < 5 * 7 * channels; ++i)
            values.push_back(int32_t(i * 7 % 256));
        const tf::Tensor img = tf::cast(tf::constant(values, tf::Shape{5, 7, channels}), tf::uint8);
        const std::string png = tf::image::encode_png(img);
        CHECK(png.substr(1, 3) == "PNG");
        const tf::Tensor back = tf::image::decode_png(png);
        CHECK(back.dtype() == tf::uint8);
        CHECK(back.shape() == img.shape());
        CHECK(back.to_vector<uint8_t>() == img.to_vector<uint8_t>());
    }
    // Gray -> RGB repeats the value; RGB -> RGBA adds an opaque alpha.
    const tf::Tensor gray = tf::cast(tf::reshape(tf::range(0, 12) * 20, {3, 4, 1}), tf::uint8);
    const tf::Tensor rgb = tf::image::decode_png(tf::image::encode_png(gray), 3);
    CHECK(rgb.shape() == tf::Shape{3, 4, 3});
    check_close(tf::cast(rgb, tf::float64), tf::cast(tf::tile(gray, {1, 1, 3}), tf::float64), 0, 0);
    const tf::Tensor rgba = tf::image::decode_png(tf::image::encode_png(rgb), 4);
    CHECK(rgba.shape() == tf::Shape{3, 4, 4});
    CHECK(tf::reduce_min(tf::cast(tf::slice(rgba, {0, 0, 3}, {3, 4, 1}), tf::int32))
              .item<int32_t>() == 255);
    const tf::Tensor back_gray = tf::image::decode_png(tf::image::encode_png(rgb), 1);
    check_close(tf::cast(back_gray, tf::float64), tf::cast(gray, tf::float64), 0, 1);

    CHECK_THROWS_WITH(tf::image::decode_png("not a png"), Catch::Contains("not a PNG"));
    std::string truncated = tf::image::encode_png(gray);
    truncated.resize(truncated.size() / 2);
    CHECK_THROWS_WITH(tf::image::decode_png(truncated), Catch::Contains("invalid PNG data"));
    CHECK_THROWS_WITH(tf::image::decode_png(tf::image::encode_png(gray), 2),
                      Catch::Contains("0, 1, 3, or 4"));
    CHECK_THROWS_WITH(tf::image::encode_png(tf::zeros({2, 2, 3})),
                      Catch::Contains("uint8") && Catch::Contains("float32"));
    CHECK_THROWS_AS(tf::image::encode_png(tf::cast(tf::zeros({2, 2, 5}), tf::uint8)),
                    tf::errors::InvalidArgumentError);
}

TEST_CASE("tf::image runs on the GPU and matches the CPU", "[image][gpu]") {
    if (!tf::cuda::is_available()) {
        WARN("no usable GPU: the image ops' GPU check is skipped");
        return;
    }
    const tf::Device gpu = tf::Device::cuda(0);
    const tf::Tensor x = tf::random::uniform({2, 5, 6, 3});
    for (const char* m : {"bilinear", "nearest", "bicubic", "area"}) {
        INFO(m);
        const tf::Tensor on_gpu = tf::image::resize(x.to(gpu), {7, 4}, m);
        REQUIRE(on_gpu.device() == gpu);
        check_close(on_gpu.cpu(), tf::image::resize(x, {7, 4}, m), 1e-5, 1e-6);
    }
    check_close(tf::image::flip_left_right(x.to(gpu)).cpu(), tf::image::flip_left_right(x), 0, 0);
    CHECK(tf::image::random_flip_up_down(x.to(gpu), 3).device() == gpu);
    check_close(tf::image::per_image_standardization(x.to(gpu)).cpu(),
                tf::image::per_image_standardization(x),
                1e-5,
                1e-6);
    tf::GradientTape tape;
    const tf::Tensor xg = x.to(gpu);
    tape.watch(xg);
    const tf::Tensor loss = tf::reduce_sum(tf::square(tf::image::resize(xg, {9, 9})));
    CHECK(tape.gradient(loss, xg).dense().device() == gpu);
}
