// Keras layers of issue 31 (reshaping, merging, more convolutions / pooling, group and unit
// normalization, preprocessing): values against float64 references written here from the
// formulas, parameter counts, option shapes, gradients by finite differences, bad inputs.
#include <cmath>
#include <vector>

#include <catch2/catch.hpp>

#include <tapeflow/tapeflow.hpp>

#include "keras/keras_support.hpp"

namespace tf = tapeflow;
namespace kl = tf::keras::layers;
using tf::testing::check_close;
using tf::testing::check_gradients;
using tf::testing::check_variable_gradients;
using tf::testing::random_f64;

namespace {

// Flat index of [d0, d1, ...] in a row-major shape.
int64_t at(const tf::Shape& s, std::initializer_list<int64_t> idx) {
    int64_t flat = 0, d = 0;
    for (int64_t i : idx)
        flat = flat * s[d++] + i;
    return flat;
}

}  // namespace

TEST_CASE("Reshape, Permute and RepeatVector", "[keras][layers][reshaping]") {
    const tf::Tensor x = random_f64({2, 3, 4});
    kl::Reshape r({4, -1});
    CHECK(r(x).shape() == tf::Shape{2, 4, 3});
    check_close(r(x), tf::reshape(x, {2, 4, 3}), 0, 0);
    CHECK(r.name() == "reshape");
    kl::Reshape bad({5}, {.name = "probe"});
    CHECK_THROWS_WITH(
        bad(x),
        Catch::Contains("\"probe\"") && Catch::Contains("(None, 3, 4)") && Catch::Contains("(5)"));
    CHECK_THROWS_AS(kl::Reshape({-1, -1}), tf::errors::InvalidArgumentError);

    kl::Permute p({2, 1});
    check_close(p(x), tf::transpose(x, {0, 2, 1}), 0, 0);
    CHECK_THROWS_WITH(kl::Permute({0, 1}), Catch::Contains("Invalid permutation"));
    CHECK_THROWS_WITH(p(random_f64({2, 3})), Catch::Contains("expected ndim=3"));

    kl::RepeatVector rv(3);
    const tf::Tensor v = random_f64({2, 5});
    const tf::Tensor y = rv(v);
    CHECK(y.shape() == tf::Shape{2, 3, 5});
    check_close(tf::slice(y, {0, 2, 0}, {2, 1, 5}), tf::expand_dims(v, 1), 0, 0);
    check_gradients([&](const std::vector<tf::Tensor>& in) { return rv(in[0]); }, {v});
}

TEST_CASE("ZeroPadding2D and Cropping2D: the three argument forms, data formats",
          "[keras][layers][reshaping]") {
    const tf::Tensor x = random_f64({2, 3, 4, 2});
    CHECK(kl::ZeroPadding2D()(x).shape() == tf::Shape{2, 5, 6, 2});
    CHECK(kl::ZeroPadding2D({.padding = {1, 2}})(x).shape() == tf::Shape{2, 5, 8, 2});
    kl::ZeroPadding2D asym({.padding = {{1, 0}, {0, 3}}});
    const tf::Tensor y = asym(x);
    CHECK(y.shape() == tf::Shape{2, 4, 7, 2});
    check_close(tf::slice(y, {0, 1, 0, 0}, {2, 3, 4, 2}), x, 0, 0);
    CHECK(tf::reduce_sum(tf::abs(tf::slice(y, {0, 0, 0, 0}, {2, 1, 7, 2}))).item<double>() == 0);
    kl::ZeroPadding2D first({.padding = {1, 2}, .data_format = "channels_first"});
    CHECK(first(x).shape() == tf::Shape{2, 3, 6, 6});
    CHECK_THROWS_WITH(kl::ZeroPadding2D({.padding = {1, 2, 3}}), Catch::Contains("padding"));
    CHECK_THROWS_WITH(kl::ZeroPadding2D({.padding = -1}), Catch::Contains("non-negative"));
    CHECK_THROWS_WITH(kl::ZeroPadding2D({.data_format = "nhwc"}), Catch::Contains("channels_last"));
    check_gradients([&](const std::vector<tf::Tensor>& in) { return asym(in[0]); }, {x});

    kl::Cropping2D crop({.cropping = {{1, 0}, {1, 2}}});
    const tf::Tensor c = crop(x);
    CHECK(c.shape() == tf::Shape{2, 2, 1, 2});
    check_close(c, tf::slice(x, {0, 1, 1, 0}, {2, 2, 1, 2}), 0, 0);
    CHECK(kl::Cropping2D({.cropping = {1, 0}, .data_format = "channels_first"})(x).shape() ==
          tf::Shape{2, 3, 2, 2});
    kl::Cropping2D too_much({.cropping = {2, 0}, .name = "crop"});
    CHECK_THROWS_WITH(too_much(x),
                      Catch::Contains("\"crop\"") && Catch::Contains("(None, 3, 4, 2)"));
    check_gradients([&](const std::vector<tf::Tensor>& in) { return crop(in[0]); }, {x});
}

TEST_CASE("UpSampling2D: nearest repeats, bilinear is tf.image.resize",
          "[keras][layers][reshaping]") {
    const tf::Tensor x = random_f64({2, 2, 3, 2});
    kl::UpSampling2D up({.size = {2, 3}});
    const tf::Tensor y = up(x);
    CHECK(y.shape() == tf::Shape{2, 4, 9, 2});
    const auto xv = x.to_vector<double>(), yv = y.to_vector<double>();
    for (int64_t n = 0; n < 2; ++n)
        for (int64_t i = 0; i < 4; ++i)
            for (int64_t j = 0; j < 9; ++j)
                for (int64_t c = 0; c < 2; ++c)
                    CHECK(yv[at(y.shape(), {n, i, j, c})] ==
                          xv[at(x.shape(), {n, i / 2, j / 3, c})]);
    kl::UpSampling2D bilinear({.interpolation = "bilinear"});
    check_close(bilinear(x), tf::image::resize(x, {4, 6}), 0, 0);
    CHECK(kl::UpSampling2D({.data_format = "channels_first"})(x).shape() == tf::Shape{2, 2, 6, 4});
    check_gradients([&](const std::vector<tf::Tensor>& in) { return up(in[0]); }, {x});
    check_gradients([&](const std::vector<tf::Tensor>& in) { return bilinear(in[0]); }, {x});
    CHECK_THROWS_WITH(kl::UpSampling2D({.interpolation = "cubic"}), Catch::Contains("cubic"));
}

TEST_CASE("Merge layers: values, broadcasting, gradients and shape errors",
          "[keras][layers][merging]") {
    const tf::Tensor a = random_f64({2, 3}, -1, 1, 1), b = random_f64({2, 3}, -1, 1, 2),
                     c = random_f64({2, 3}, -1, 1, 3);
    check_close(kl::Add()({a, b, c}), a + b + c, 1e-15, 1e-15);
    check_close(kl::Subtract()({a, b}), a - b, 0, 0);
    check_close(kl::Multiply()({a, b, c}), a * b * c, 1e-15, 1e-15);
    check_close(kl::Average()({a, b}), (a + b) / 2.0, 1e-15, 1e-15);
    check_close(kl::Maximum()({a, b, c}), tf::maximum(tf::maximum(a, b), c), 0, 0);
    check_close(kl::Minimum()({a, b}), tf::minimum(a, b), 0, 0);
    // A size-1 dimension broadcasts; a lower rank is expanded at axis 1.
    const tf::Tensor row = random_f64({2, 1}, -1, 1, 4);
    check_close(kl::Add()({a, row}), a + row, 0, 0);
    const tf::Tensor seq = random_f64({2, 4, 3}, -1, 1, 5);
    check_close(kl::Multiply()({seq, a}), seq * tf::expand_dims(a, 1), 0, 0);

    kl::Add add({.name = "sum"});
    try {
        add({a, random_f64({2, 4})});
        FAIL("no error");
    } catch (const tf::errors::InvalidArgumentError& e) {
        const std::string what = e.what();
        CHECK(what.find("\"sum\"") != std::string::npos);
        CHECK(what.find("(None, 3)") != std::string::npos);
        CHECK(what.find("(None, 4)") != std::string::npos);
    }
    CHECK_THROWS_WITH(kl::Subtract()({a, b, c}), Catch::Contains("exactly 2 inputs"));
    CHECK_THROWS_WITH(add(a), Catch::Contains("list of inputs"));
    CHECK_THROWS_AS(add(std::vector<tf::Tensor>{}), tf::errors::InvalidArgumentError);

    kl::Maximum mx;
    check_gradients([&](const std::vector<tf::Tensor>& in) { return mx({in[0], in[1]}); }, {a, b});
    kl::Average avg;
    check_gradients(
        [&](const std::vector<tf::Tensor>& in) {
            return avg({in[0], in[1], in[2]});
        },
        {a, b, c});

    kl::Concatenate cat;
    const tf::Tensor wide = random_f64({2, 5});
    check_close(cat({a, wide}), tf::concat({a, wide}, -1), 0, 0);
    kl::Concatenate cat0({.axis = 0});
    CHECK(cat0({a, b}).shape() == tf::Shape{4, 3});
    CHECK_THROWS_WITH(cat({a, random_f64({3, 3})}),
                      Catch::Contains("matching shapes") && Catch::Contains("(None, 3)"));
    check_gradients(
        [&](const std::vector<tf::Tensor>& in) {
            return cat({in[0], in[1]});
        },
        {a, wide});
}

TEST_CASE("Dot is Keras' batch_dot", "[keras][layers][merging]") {
    const tf::Tensor a = random_f64({2, 3}, -1, 1, 1), b = random_f64({2, 3}, -1, 1, 2);
    const tf::Tensor d = kl::Dot(1)({a, b});
    CHECK(d.shape() == tf::Shape{2, 1});
    check_close(d, tf::reduce_sum(a * b, 1, true), 1e-14, 1e-14);
    // [B, N, D] . [B, M, D] over axis 2 -> [B, N, M].
    const tf::Tensor x = random_f64({2, 4, 3}, -1, 1, 3), y = random_f64({2, 5, 3}, -1, 1, 4);
    kl::Dot dot(2);
    const tf::Tensor z = dot({x, y});
    CHECK(z.shape() == tf::Shape{2, 4, 5});
    check_close(z, tf::matmul(x, y, false, true), 1e-14, 1e-14);
    // Axes per input, [B, D, N] . [B, M, D] with axes (1, 2) -> [B, N, M].
    const tf::Tensor xt = tf::transpose(x, {0, 2, 1});
    check_close(kl::Dot({1, 2})({xt, y}), z, 1e-14, 1e-14);
    check_close(kl::Dot({-2, -1})({xt, y}), z, 1e-14, 1e-14);
    // normalize: cosine similarity.
    const tf::Tensor cos = kl::Dot(1, {.normalize = true})({a, b});
    check_close(cos,
                tf::reduce_sum(a * b, 1, true) / (tf::sqrt(tf::reduce_sum(a * a, 1, true)) *
                                                  tf::sqrt(tf::reduce_sum(b * b, 1, true))),
                1e-12,
                1e-12);
    check_gradients([&](const std::vector<tf::Tensor>& in) { return dot({in[0], in[1]}); }, {x, y});
    CHECK_THROWS_WITH(
        dot({x, random_f64({2, 5, 4})}),
        Catch::Contains("Incompatible input shapes") && Catch::Contains("(None, 5, 4)"));
    CHECK_THROWS_WITH(dot(std::vector<tf::Tensor>{x}), Catch::Contains("2 inputs"));
    CHECK_THROWS_AS(kl::Dot(0)({a, b}), tf::errors::InvalidArgumentError);
}

TEST_CASE("1-D and global pooling", "[keras][layers][pooling]") {
    const tf::Tensor x = random_f64({2, 7, 3});
    const auto v = x.to_vector<double>();
    kl::MaxPooling1D mp(3, {.strides = 2});
    const tf::Tensor m = mp(x);
    CHECK(m.shape() == tf::Shape{2, 3, 3});
    kl::AveragePooling1D ap(2, {.padding = "same"});
    const tf::Tensor a = ap(x);
    CHECK(a.shape() == tf::Shape{2, 4, 3});
    const auto mv = m.to_vector<double>(), av = a.to_vector<double>();
    for (int64_t n = 0; n < 2; ++n)
        for (int64_t c = 0; c < 3; ++c) {
            for (int64_t o = 0; o < 3; ++o) {
                double best = -1e300;
                for (int64_t k = 0; k < 3; ++k)
                    best = std::max(best, v[at(x.shape(), {n, 2 * o + k, c})]);
                CHECK(mv[at(m.shape(), {n, o, c})] == best);
            }
            for (int64_t o = 0; o < 4; ++o) {
                double sum = 0;
                int count = 0;
                for (int64_t k = 2 * o; k < std::min<int64_t>(2 * o + 2, 7); ++k, ++count)
                    sum += v[at(x.shape(), {n, k, c})];
                CHECK(av[at(a.shape(), {n, o, c})] == Approx(sum / count).epsilon(1e-14));
            }
        }
    kl::MaxPooling1D first(2, {.data_format = "channels_first"});
    check_close(
        first(tf::transpose(x, {0, 2, 1})), tf::transpose(kl::MaxPooling1D(2)(x), {0, 2, 1}), 0, 0);
    check_gradients([&](const std::vector<tf::Tensor>& in) { return ap(in[0]); }, {x});

    const tf::Tensor img = random_f64({2, 3, 4, 5});
    check_close(kl::GlobalMaxPooling2D()(img), tf::reduce_max(img, {1, 2}), 0, 0);
    CHECK(kl::GlobalMaxPooling2D({.keepdims = true})(img).shape() == tf::Shape{2, 1, 1, 5});
    check_close(kl::GlobalAveragePooling1D()(x), tf::reduce_mean(x, 1), 0, 0);
    CHECK(kl::GlobalAveragePooling1D({.keepdims = true})(x).shape() == tf::Shape{2, 1, 3});
    CHECK(kl::GlobalAveragePooling1D({.data_format = "channels_first"})(x).shape() ==
          tf::Shape{2, 7});
    CHECK_THROWS_WITH(kl::MaxPooling1D(0), Catch::Contains("pool_size"));
}

TEST_CASE("Conv2DTranspose: the scatter formula, Keras' output sizes, gradients",
          "[keras][layers][conv]") {
    const tf::Tensor x = random_f64({2, 3, 4, 2});
    kl::Conv2DTranspose conv(3, {2, 3}, {.strides = {2, 1}});
    const tf::Tensor y = conv(x);
    // valid: in * stride + max(kernel - stride, 0).
    CHECK(y.shape() == tf::Shape{2, 6, 6, 3});
    CHECK(conv.kernel().shape() == tf::Shape{2, 3, 3, 2});
    CHECK(conv.count_params() == 2 * 3 * 3 * 2 + 3);
    // y[n, i s_h + a, j s_w + b, o] += x[n, i, j, c] k[a, b, o, c], plus bias.
    const auto xv = x.to_vector<double>(), kv = conv.kernel().value().to_vector<double>();
    std::vector<double> ref(static_cast<std::size_t>(y.shape().num_elements()), 0.0);
    for (int64_t n = 0; n < 2; ++n)
        for (int64_t i = 0; i < 3; ++i)
            for (int64_t j = 0; j < 4; ++j)
                for (int64_t c = 0; c < 2; ++c)
                    for (int64_t a = 0; a < 2; ++a)
                        for (int64_t b = 0; b < 3; ++b)
                            for (int64_t o = 0; o < 3; ++o)
                                ref[at(y.shape(), {n, 2 * i + a, j + b, o})] +=
                                    xv[at(x.shape(), {n, i, j, c})] *
                                    kv[at(conv.kernel().shape(), {a, b, o, c})];
    check_close(y, tf::constant(ref, y.shape()), 1e-12, 1e-12);
    CHECK(kl::Conv2DTranspose(3, 3, {.strides = 2, .padding = "same"})(x).shape() ==
          tf::Shape{2, 6, 8, 3});
    // output_padding: (in - 1) * stride + kernel - 2 * pad + output_padding.
    CHECK(kl::Conv2DTranspose(1, 3, {.strides = 2, .padding = "same", .output_padding = 1})(x)
              .shape() == tf::Shape{2, 6, 8, 1});
    CHECK(kl::Conv2DTranspose(1, 3, {.strides = 2, .output_padding = tf::Ints{0, 1}})(x).shape() ==
          tf::Shape{2, 7, 10, 1});
    CHECK_THROWS_WITH(kl::Conv2DTranspose(1, 3, {.strides = 2, .output_padding = 2}),
                      Catch::Contains("output_padding"));
    check_gradients([&](const std::vector<tf::Tensor>& in) { return conv(in[0]); }, {x});
    check_variable_gradients([&] { return conv(x); }, conv.variables());
}

TEST_CASE("DepthwiseConv2D and SeparableConv2D against their formulas", "[keras][layers][conv]") {
    const tf::Tensor x = random_f64({2, 4, 5, 3});
    kl::DepthwiseConv2D dw(
        {2, 3},
        {.depth_multiplier = 2, .bias_initializer = tf::keras::initializers::constant(0.5)});
    const tf::Tensor y = dw(x);
    CHECK(y.shape() == tf::Shape{2, 3, 3, 6});
    CHECK(dw.kernel().shape() == tf::Shape{2, 3, 3, 2});
    CHECK(dw.count_params() == 2 * 3 * 3 * 2 + 6);
    const auto xv = x.to_vector<double>(), kv = dw.kernel().value().to_vector<double>();
    const auto yv = y.to_vector<double>();
    for (int64_t n = 0; n < 2; ++n)
        for (int64_t i = 0; i < 3; ++i)
            for (int64_t j = 0; j < 3; ++j)
                for (int64_t c = 0; c < 3; ++c)
                    for (int64_t m = 0; m < 2; ++m) {
                        double s = 0.5;
                        for (int64_t a = 0; a < 2; ++a)
                            for (int64_t b = 0; b < 3; ++b)
                                s += xv[at(x.shape(), {n, i + a, j + b, c})] *
                                     kv[at(dw.kernel().shape(), {a, b, c, m})];
                        CHECK(yv[at(y.shape(), {n, i, j, c * 2 + m})] == Approx(s).epsilon(1e-12));
                    }
    check_gradients([&](const std::vector<tf::Tensor>& in) { return dw(in[0]); }, {x});
    check_variable_gradients([&] { return dw(x); }, dw.variables());

    kl::SeparableConv2D sep(4, 3, {.padding = "same", .depth_multiplier = 2});
    const tf::Tensor s = sep(x);
    CHECK(s.shape() == tf::Shape{2, 4, 5, 4});
    CHECK(sep.depthwise_kernel().shape() == tf::Shape{3, 3, 3, 2});
    CHECK(sep.pointwise_kernel().shape() == tf::Shape{1, 1, 6, 4});
    CHECK(sep.count_params() == 3 * 3 * 3 * 2 + 6 * 4 + 4);
    const tf::Tensor depthwise =
        tf::nn::depthwise_conv2d(x, sep.depthwise_kernel().value(), 1, "SAME");
    const tf::Tensor ref =
        tf::reshape(tf::matmul(tf::reshape(depthwise, {-1, 6}),
                               tf::reshape(sep.pointwise_kernel().value(), {6, 4})),
                    {2, 4, 5, 4});
    check_close(s, ref + sep.bias().value(), 1e-12, 1e-12);
    check_variable_gradients([&] { return sep(x); }, sep.variables());
    CHECK_THROWS_AS(kl::DepthwiseConv2D(3, {.depth_multiplier = 0}),
                    tf::errors::InvalidArgumentError);
    CHECK_THROWS_WITH(kl::DepthwiseConv2D(3)(random_f64({2, 4, 5})), Catch::Contains("rank 4"));
    CHECK_THROWS_WITH(dw(random_f64({2, 4, 5})), Catch::Contains("ndim=4"));
}

TEST_CASE("GroupNormalization and UnitNormalization", "[keras][layers][normalization]") {
    const tf::Tensor x = random_f64({2, 3, 2, 6}, -2, 3);
    kl::GroupNormalization gn({.groups = 3, .epsilon = 1e-3});
    const tf::Tensor y = gn(x);
    CHECK(gn.gamma().shape() == tf::Shape{6});
    CHECK(gn.count_params() == 12);
    const auto xv = x.to_vector<double>(), yv = y.to_vector<double>();
    for (int64_t n = 0; n < 2; ++n)
        for (int64_t g = 0; g < 3; ++g) {
            double mean = 0, var = 0;
            for (int64_t p = 0; p < 6; ++p)
                for (int64_t c = 2 * g; c < 2 * g + 2; ++c)
                    mean += xv[n * 36 + p * 6 + c] / 12;
            for (int64_t p = 0; p < 6; ++p)
                for (int64_t c = 2 * g; c < 2 * g + 2; ++c)
                    var += std::pow(xv[n * 36 + p * 6 + c] - mean, 2) / 12;
            for (int64_t p = 0; p < 6; ++p)
                for (int64_t c = 2 * g; c < 2 * g + 2; ++c)
                    CHECK(yv[n * 36 + p * 6 + c] ==
                          Approx((xv[n * 36 + p * 6 + c] - mean) / std::sqrt(var + 1e-3))
                              .epsilon(1e-12));
        }
    gn.gamma().assign(random_f64({6}, 0.5, 1.5, 3));
    gn.beta().assign(random_f64({6}, -1, 1, 4));
    check_gradients([&](const std::vector<tf::Tensor>& in) { return gn(in[0]); }, {x});
    check_variable_gradients([&] { return gn(x); }, gn.variables());
    // groups = -1: instance normalization (each channel alone), channels on axis 1.
    kl::GroupNormalization inst({.groups = -1, .axis = 1});
    const tf::Tensor xi = random_f64({2, 3, 5});
    const auto [m, v] = tf::nn::moments(xi, {2}, true);
    check_close(inst(xi), (xi - m) / tf::sqrt(v + 1e-3), 1e-12, 1e-12);
    kl::GroupNormalization bad({.groups = 4, .name = "gn4"});
    CHECK_THROWS_WITH(
        bad(x), Catch::Contains("\"gn4\"") && Catch::Contains("(4)") && Catch::Contains("(6)"));
    CHECK_THROWS_AS(kl::GroupNormalization({.groups = 0}), tf::errors::InvalidArgumentError);

    kl::UnitNormalization un;
    const tf::Tensor u = un(x);
    check_close(tf::reduce_sum(u * u, -1), tf::ones({2, 3, 2}, tf::float64), 1e-12, 1e-12);
    check_close(u, x / tf::sqrt(tf::reduce_sum(x * x, -1, true)), 1e-12, 1e-12);
    check_close(kl::UnitNormalization({.axis = {1, 2}})(x),
                x / tf::sqrt(tf::reduce_sum(x * x, {1, 2}, true)),
                1e-12,
                1e-12);
    CHECK(tf::reduce_sum(tf::abs(un(tf::zeros({1, 3}, tf::float64)))).item<double>() == 0);
    check_gradients([&](const std::vector<tf::Tensor>& in) { return un(in[0]); }, {x});
}

TEST_CASE("Rescaling and Normalization (adapt, given statistics, invert)",
          "[keras][layers][preprocessing]") {
    const tf::Tensor u8 = tf::cast(tf::constant({{0, 51, 255}}), tf::uint8);
    const tf::Tensor r = kl::Rescaling(1.0 / 255)(u8);
    CHECK(r.dtype() == tf::float32);
    check_close(r, tf::constant({{0.0, 0.2, 1.0}}), 1e-6, 1e-7);
    const tf::Tensor f = random_f64({2, 2});
    check_close(kl::Rescaling(2, {.offset = -1})(f), f * 2.0 - 1.0, 0, 1e-15);

    const tf::Tensor data = random_f64({20, 3}, -3, 5);
    kl::Normalization norm;
    norm.adapt(data);
    const tf::Tensor z = norm(data);
    check_close(tf::reduce_mean(z, 0), tf::zeros({3}, tf::float64), 0, 1e-12);
    check_close(tf::reduce_variance(z, 0), tf::ones({3}, tf::float64), 1e-10, 1e-10);
    CHECK(norm.variables().size() == 3);  // mean, variance, count
    CHECK(norm.trainable_variables().empty());
    // Adapting on batches gives the statistics of the whole.
    kl::Normalization batched;
    batched.adapt(
        std::vector<tf::Tensor>{tf::slice(data, {0, 0}, {7, 3}), tf::slice(data, {7, 0}, {13, 3})});
    check_close(batched.mean(), norm.mean(), 1e-12, 1e-12);
    check_close(batched.variance(), norm.variance(), 1e-12, 1e-12);
    // Given statistics; axis = None (one mean and variance); invert.
    kl::Normalization given(
        {.mean = std::vector<double>{1, 2, 3}, .variance = std::vector<double>{4, 1, 0.25}});
    check_close(given(data),
                (data - tf::constant({1.0, 2.0, 3.0})) / tf::constant({2.0, 1.0, 0.5}),
                1e-14,
                1e-14);
    kl::Normalization inverse({.mean = std::vector<double>{1, 2, 3},
                               .variance = std::vector<double>{4, 1, 0.25},
                               .invert = true});
    check_close(inverse(given(data)), data, 1e-12, 1e-12);
    kl::Normalization scalar({.axis = {}});
    scalar.adapt(data);
    check_close(scalar.mean(), tf::reshape(tf::reduce_mean(data), {1, 1}), 1e-12, 1e-12);
    CHECK_THROWS_WITH(kl::Normalization({.mean = std::vector<double>{1}}),
                      Catch::Contains("both `mean` and `variance`"));
    CHECK_THROWS_WITH(norm(random_f64({2, 4})), Catch::Contains("axis 1"));
}

TEST_CASE("RandomFlip and RandomCrop act only when training", "[keras][layers][preprocessing]") {
    const tf::Tensor x = random_f64({12, 3, 4, 1});
    kl::RandomFlip flip({.mode = "horizontal", .seed = 5});
    check_close(flip(x), x, 0, 0);
    tf::random::set_seed(2);
    const tf::Tensor y = flip(x, true);
    const tf::Tensor lr = tf::image::flip_left_right(x);
    int flipped = 0;
    for (int64_t i = 0; i < 12; ++i) {
        const auto yi = tf::slice(y, {i, 0, 0, 0}, {1, 3, 4, 1}).to_vector<double>();
        const bool same = yi == tf::slice(x, {i, 0, 0, 0}, {1, 3, 4, 1}).to_vector<double>();
        const bool flip_i = yi == tf::slice(lr, {i, 0, 0, 0}, {1, 3, 4, 1}).to_vector<double>();
        CHECK((same || flip_i));
        flipped += flip_i ? 1 : 0;
    }
    CHECK(flipped > 0);
    CHECK(flipped < 12);
    // The same seed replays the same flips (after set_seed restarts the seeded streams).
    kl::RandomFlip again({.mode = "horizontal", .seed = 5});
    tf::random::set_seed(2);
    check_close(again(x, true), y, 0, 0);
    CHECK(kl::RandomFlip({.mode = "vertical", .seed = 1})(x, true).shape() == x.shape());
    CHECK_THROWS_WITH(kl::RandomFlip({.mode = "diagonal"}), Catch::Contains("diagonal"));

    kl::RandomCrop crop(2, 3, {.seed = 3});
    const tf::Tensor big = tf::reshape(tf::range(0.0, 2 * 5 * 6, 1.0, tf::float64), {2, 5, 6, 1});
    check_close(crop(big), big, 0, 0);
    const tf::Tensor c = crop(big, true);
    CHECK(c.shape() == tf::Shape{2, 2, 3, 1});
    const auto cv = c.to_vector<double>();
    const int64_t h0 = int64_t(cv[0]) / 6, w0 = int64_t(cv[0]) % 6;
    check_close(c, tf::slice(big, {0, h0, w0, 0}, {2, 2, 3, 1}), 0, 0);
    // Smaller than the target: the central crop of its aspect ratio, resized.
    kl::RandomCrop up(6, 6);
    const tf::Tensor small = random_f64({1, 4, 5, 2});
    check_close(up(small, true),
                tf::image::resize(tf::slice(small, {0, 0, 0, 0}, {1, 4, 4, 2}), {6, 6}),
                1e-12,
                1e-12);
    check_gradients([&](const std::vector<tf::Tensor>& in) { return up(in[0], true); }, {small});
}

TEST_CASE("Resizing: tf.image.resize, aspect-ratio crop / pad, integer images",
          "[keras][layers][preprocessing]") {
    const tf::Tensor x = random_f64({2, 4, 6, 3});
    kl::Resizing resize(3, 5);
    check_close(resize(x), tf::image::resize(x, {3, 5}), 0, 0);
    kl::Resizing crop(2, 2, {.crop_to_aspect_ratio = true});
    check_close(crop(x), tf::image::resize(tf::slice(x, {0, 0, 1, 0}, {2, 4, 4, 3}), {2, 2}), 0, 0);
    kl::Resizing padded(6, 6, {.pad_to_aspect_ratio = true, .fill_value = 0.5});
    check_close(
        padded(x),
        tf::image::resize(tf::pad(x, {{0, 0}, {1, 1}, {0, 0}, {0, 0}}, "CONSTANT", 0.5), {6, 6}),
        0,
        0);
    const tf::Tensor u8 = tf::cast(tf::reshape(tf::range(0, 16) * 16, {1, 4, 4, 1}), tf::uint8);
    const tf::Tensor r = kl::Resizing(2, 2, {.interpolation = "area"})(u8);
    CHECK(r.dtype() == tf::uint8);
    CHECK(r.to_vector<uint8_t>() == std::vector<uint8_t>{40, 72, 168, 200});
    kl::Resizing nearest(8, 12, {.interpolation = "nearest"});
    check_close(nearest(x), kl::UpSampling2D()(x), 0, 0);
    check_gradients([&](const std::vector<tf::Tensor>& in) { return resize(in[0]); }, {x});
    CHECK_THROWS_WITH(
        kl::Resizing(2, 2, {.crop_to_aspect_ratio = true, .pad_to_aspect_ratio = true}),
        Catch::Contains("Only one of"));
    CHECK_THROWS_WITH(resize(random_f64({4, 6})), Catch::Contains("Resizing"));
}

TEST_CASE("The issue-31 layers run on the GPU and match the CPU", "[keras][layers][gpu]") {
    if (!tf::cuda::is_available()) {
        WARN("no usable GPU: the layers' GPU check is skipped");
        return;
    }
    const tf::Device gpu = tf::Device::cuda(0);
    auto both = [&](auto make, const tf::Tensor& x, bool training) {
        auto cpu_layer = make();
        auto gpu_layer = make();
        const tf::Tensor on_cpu = (*cpu_layer)(x, training);
        const tf::Tensor on_gpu = (*gpu_layer)(x.to(gpu), training);
        REQUIRE(on_gpu.device() == gpu);
        const auto cv = cpu_layer->variables();
        auto gv = gpu_layer->variables();
        for (std::size_t i = 0; i < cv.size(); ++i) {
            CHECK(gv[i].device() == gpu);
            gv[i].assign(cv[i].value().to(gpu));
        }
        check_close((*gpu_layer)(x.to(gpu), training).cpu(), (*cpu_layer)(x, training), 1e-4, 1e-5);
    };
    const tf::Tensor img = tf::random::uniform({2, 6, 6, 4});
    both(
        [] {
            return std::make_shared<kl::UpSampling2D>(
                kl::UpSampling2DOptions{.interpolation = "bilinear"});
        },
        img,
        false);
    both(
        [] {
            return std::make_shared<kl::Conv2DTranspose>(
                3, 3, kl::Conv2DTransposeOptions{.strides = 2, .padding = "same"});
        },
        img,
        false);
    both([] { return std::make_shared<kl::DepthwiseConv2D>(3); }, img, false);
    both([] { return std::make_shared<kl::SeparableConv2D>(5, 3); }, img, false);
    both(
        [] {
            return std::make_shared<kl::GroupNormalization>(
                kl::GroupNormalizationOptions{.groups = 2});
        },
        img,
        false);
    both([] { return std::make_shared<kl::Resizing>(3, 5); }, img, false);
    both([] { return std::make_shared<kl::ZeroPadding2D>(); }, img, false);
    both([] { return std::make_shared<kl::MaxPooling1D>(2); },
         tf::random::uniform({2, 6, 3}),
         false);
    kl::RandomFlip flip({.seed = 1});
    CHECK(flip(img.to(gpu), true).device() == gpu);
    kl::Add add;
    CHECK(add({img.to(gpu), img.to(gpu)}).device() == gpu);
}

TEST_CASE("RandomFlip and RandomCrop replay in a tf::function as eagerly",
          "[keras][layers][preprocessing][function]") {
    const tf::Tensor x = random_f64({6, 5, 7, 2});
    auto eager_run = [&](auto& flip, auto& crop) {
        std::vector<tf::Tensor> out;
        for (int i = 0; i < 3; ++i)
            out.push_back(crop(flip(x, true), true));
        return out;
    };
    kl::RandomFlip flip_a({.seed = 3});
    kl::RandomCrop crop_a(3, 4, {.seed = 4});
    tf::random::set_seed(8);
    const std::vector<tf::Tensor> eager = eager_run(flip_a, crop_a);
    kl::RandomFlip flip_b({.seed = 3});
    kl::RandomCrop crop_b(3, 4, {.seed = 4});
    tf::random::set_seed(8);
    auto step = tf::function([&](const tf::Tensor& in) { return crop_b(flip_b(in, true), true); });
    for (int i = 0; i < 3; ++i)
        check_close(step(x), eager[static_cast<std::size_t>(i)], 0, 0);
    CHECK(step.experimental_get_tracing_count() == 1);
    CHECK(tf::image::random_crop(x, {2, 5, 7, 2}, 1).shape() == tf::Shape{2, 5, 7, 2});
}
