// tf::nn layer ops other than conv and pooling: bias_add (both data formats), moments,
// batch_normalization, dropout and embedding_lookup: values, gradients and errors.
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
using nn_testing::values;

}  // namespace

TEST_CASE("bias_add", "[nn][bias_add]") {
    const tf::Tensor b = random_f64({3}, -1, 1, 2);
    SECTION("NHWC of any rank >= 2 and NCHW") {
        for (const tf::Shape& s : {tf::Shape{4, 3}, tf::Shape{2, 2, 2, 3}}) {
            const tf::Tensor x = random_f64(s, -1, 1, 1);
            check_gradients([](const Tensors& in) { return tf::nn::bias_add(in[0], in[1]); },
                            {x, b});
            const auto got = values(tf::nn::bias_add(x, b));
            const auto ref = values(x + b);
            CHECK(got == ref);
        }
        const tf::Tensor x = random_f64({2, 3, 2, 5}, -1, 1, 1);
        check_gradients([](const Tensors& in) { return tf::nn::bias_add(in[0], in[1], "NCHW"); },
                        {x, b});
        CHECK(values(tf::nn::bias_add(x, b, "NCHW")) == values(x + tf::reshape(b, {3, 1, 1})));
        const tf::Tensor big = random_f64({8, 64, 9, 9}, -1, 1, 3).cast(tf::float32);
        const tf::Tensor bb = random_f64({64}, -1, 1, 4).cast(tf::float32);
        CHECK(values(tf::nn::bias_add(big, bb, "NCHW")) ==
              values(big + tf::reshape(bb, {64, 1, 1})));
    }
    SECTION("errors") {
        check_throws_with(
            [&] {
                tf::nn::bias_add(random_f64({4, 2}), b);
            },
            "[3] vs. [4,2]",
            "[Op:BiasAdd]");
        check_throws_with([&] { tf::nn::bias_add(random_f64({3}), b); }, "at least 2D");
        check_throws_with(
            [&] {
                tf::nn::bias_add(random_f64({4, 3}), random_f64({1, 3}));
            },
            "Biases must be 1D");
        check_throws_with([&] { tf::nn::bias_add(random_f64({4, 3}), b, "NWHC"); }, "NWHC");
        check_throws_with(
            [&] {
                tf::nn::bias_add(random_f64({4, 3}), b.cast(tf::float32));
            },
            "float64",
            "float32");
    }
}

TEST_CASE("moments and batch_normalization", "[nn][normalization]") {
    const tf::Tensor x = random_f64({4, 3, 2}, -2, 2, 5);
    SECTION("moments") {
        auto [m, v] = tf::nn::moments(x, {0, 1});
        CHECK(m.shape() == tf::Shape{2});
        CHECK(values(m) == values(tf::reduce_mean(x, {0, 1})));
        const auto rv = values(tf::reduce_variance(x, {0, 1}));
        for (std::size_t i = 0; i < rv.size(); ++i)
            CHECK(values(v)[i] == Approx(rv[i]));
        auto [mk, vk] = tf::nn::moments(x, {0, 1}, true);
        CHECK(mk.shape() == tf::Shape{1, 1, 2});
        CHECK(vk.shape() == tf::Shape{1, 1, 2});
        check_gradients([](const Tensors& in) { return tf::nn::moments(in[0], {0}).second; }, {x});
        check_gradients(
            [](const Tensors& in) {
                return tf::nn::moments(in[0], {1, 2}).first;
            },
            {x});
    }
    SECTION("batch_normalization with and without offset and scale") {
        const tf::Tensor mean = random_f64({2}, -1, 1, 6);
        const tf::Tensor var = random_f64({2}, 0.5, 2, 7);
        const tf::Tensor offset = random_f64({2}, -1, 1, 8);
        const tf::Tensor scale = random_f64({2}, 0.5, 2, 9);
        check_gradients(
            [](const Tensors& in) {
                return tf::nn::batch_normalization(in[0], in[1], in[2], in[3], in[4], 1e-3);
            },
            {x, mean, var, offset, scale});
        const auto plain = values(tf::nn::batch_normalization(x, mean, var, {}, {}, 1e-3));
        const auto ref = values((x - mean) / tf::sqrt(var + 1e-3));
        for (std::size_t i = 0; i < ref.size(); ++i)
            CHECK(plain[i] == Approx(ref[i]));
    }
}

TEST_CASE("dropout", "[nn][dropout]") {
    const tf::Tensor x = tf::ones({100, 100});
    SECTION("keeps about 1 - rate, scaled by 1 / (1 - rate), reproducibly with a seed") {
        // TensorFlow's seed rules: the same (global, op) seed pair restarts the same sequence.
        tf::random::set_seed(1);
        const auto a = values(tf::nn::dropout(x, 0.25, 7));
        tf::random::set_seed(1);
        const auto b = values(tf::nn::dropout(x, 0.25, 7));
        CHECK(a == b);
        int64_t kept = 0;
        for (double v : a) {
            CHECK((v == 0.0 || v == Approx(1 / 0.75)));
            kept += v != 0.0;
        }
        CHECK(kept > 7200);
        CHECK(kept < 7800);
        CHECK(values(tf::nn::dropout(x, 0.0)) == values(x));
    }
    SECTION("the gradient is the mask times the scale") {
        const tf::Tensor w = random_f64({10, 10}, -1, 1, 3);
        tf::GradientTape tape;
        tape.watch(w);
        const tf::Tensor y = tf::nn::dropout(w, 0.5, 11);
        const auto g = values(tape.gradient(tf::reduce_sum(y), w).dense());
        const auto yv = values(y);
        for (std::size_t i = 0; i < g.size(); ++i)
            CHECK(g[i] == (yv[i] == 0.0 ? 0.0 : 2.0));
    }
    SECTION("errors") {
        check_throws_with([&] { tf::nn::dropout(x, -0.1); }, "range [0, 1)", "-0.1");
        check_throws_with([&] { tf::nn::dropout(x, 1.0); }, "range [0, 1)");
        check_throws_with([] { tf::nn::dropout(tf::constant({1, 2}), 0.5); }, "floating point");
    }
}

TEST_CASE("embedding_lookup gives params an IndexedSlices gradient", "[nn][embedding]") {
    const tf::Tensor params = random_f64({5, 3}, -1, 1, 1);
    const tf::Tensor ids = tf::constant({4, 0, 4});
    const tf::Tensor rows = tf::nn::embedding_lookup(params, ids);
    CHECK(rows.shape() == tf::Shape{3, 3});
    tf::GradientTape tape;
    tape.watch(params);
    const tf::Tensor y = tf::reduce_sum(tf::nn::embedding_lookup(params, ids));
    const tf::Gradient g = tape.gradient(y, params);
    REQUIRE(g.is_sparse());
    CHECK(g.sparse().indices.to_vector<int64_t>() == std::vector<int64_t>{4, 0, 4});
    check_gradients([ids](const Tensors& in) { return tf::nn::embedding_lookup(in[0], ids); },
                    {params});
}
