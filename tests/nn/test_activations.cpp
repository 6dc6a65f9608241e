// tf::nn activations, softmax and the losses: float64 finite-difference gradients (first and
// second order), TensorFlow's values at the kinks, numerical stability, dtypes and the errors.
#include <cmath>
#include <limits>

#include <catch2/catch.hpp>

#include <tapeflow/tapeflow.hpp>

#include "nn/nn_testing.hpp"
#include "support/gradcheck.hpp"

namespace tf = tapeflow;
using tf::testing::check_gradients;
using tf::testing::random_f64;

namespace {

using Tensors = std::vector<tf::Tensor>;
using Unary = tf::Tensor (*)(const tf::Tensor&);
using nn_testing::check_throws_with;
using nn_testing::values;

tf::Tensor grad_of(const std::function<tf::Tensor(const tf::Tensor&)>& f, const tf::Tensor& x) {
    tf::GradientTape tape;
    tape.watch(x);
    const tf::Tensor y = f(x);
    return tape.gradient(y, x).dense();
}

// The gradient of sum(f(x) * w) as a function of x: checking it by finite differences checks
// the second derivative (the *Grad ops' own rows).
template <class F>
tf::testing::TensorFn gradient_fn(F f) {
    return nn_testing::gradient_fn([f](const Tensors& in) { return f(in[0]); });
}

}  // namespace

TEST_CASE("activation gradients match finite differences", "[nn][activations]") {
    const std::vector<std::pair<const char*, Unary>> ops = {
        {"relu", tf::nn::relu},
        {"relu6", tf::nn::relu6},
        {"elu", tf::nn::elu},
        {"selu", tf::nn::selu},
        {"softplus", tf::nn::softplus},
        {"sigmoid", tf::nn::sigmoid},
        {"tanh", tf::nn::tanh},
    };
    const tf::Tensor x = random_f64({3, 5}, -3, 8, 3);  // covers both relu6 bounds, away from kinks
    for (const auto& [name, f] : ops) {
        SECTION(name) {
            check_gradients([f = f](const Tensors& in) { return f(in[0]); }, {x});
            check_gradients(gradient_fn(f), {x});
        }
    }
    SECTION("leaky_relu") {
        check_gradients([](const Tensors& in) { return tf::nn::leaky_relu(in[0], 0.3); }, {x});
        check_gradients([](const Tensors& in) { return tf::nn::leaky_relu(in[0]); }, {x});
    }
}

TEST_CASE("activations follow TensorFlow at the kinks", "[nn][activations]") {
    const tf::Tensor x = tf::constant({-1.0, 0.0, 6.0, 7.0});
    CHECK(values(tf::nn::relu6(x)) == std::vector<double>{0, 0, 6, 6});
    CHECK(values(grad_of([](const tf::Tensor& t) { return tf::nn::relu(t); }, x)) ==
          std::vector<double>{0, 0, 1, 1});
    CHECK(values(grad_of([](const tf::Tensor& t) { return tf::nn::relu6(t); }, x)) ==
          std::vector<double>{0, 0, 0, 0});
    const auto selu_g = values(grad_of([](const tf::Tensor& t) { return tf::nn::selu(t); }, x));
    CHECK(selu_g[1] == Approx(1.0507009873554805));  // slope at 0 is scale, not scale * alpha
    const auto leaky =
        values(grad_of([](const tf::Tensor& t) { return tf::nn::leaky_relu(t); }, x));
    CHECK(leaky[1] == Approx(0.2));
    CHECK(values(tf::nn::leaky_relu(x, 0.5))[0] == -0.5);
    CHECK(values(tf::nn::elu(tf::constant({-1.0})))[0] == Approx(std::expm1(-1.0)));
    // Integers: relu and relu6 take them, as in TensorFlow.
    CHECK(tf::nn::relu(tf::constant({-2, 3})).to_vector<int32_t>() == std::vector<int32_t>{0, 3});
    CHECK(tf::nn::relu6(tf::constant({-2, 9})).to_vector<int32_t>() == std::vector<int32_t>{0, 6});
}

TEST_CASE("float32 activations agree with float64", "[nn][activations]") {
    const tf::Tensor x64 = random_f64({1000}, -5, 5, 11);  // long enough for the SIMD loops
    const tf::Tensor x32 = x64.cast(tf::float32);
    for (Unary f : {tf::nn::relu, tf::nn::relu6, tf::nn::elu, tf::nn::selu}) {
        const auto a = values(f(x64));
        const auto b = values(f(x32));
        for (std::size_t i = 0; i < a.size(); ++i)
            CHECK(b[i] == Approx(a[i]).epsilon(1e-6).margin(1e-6));
    }
}

TEST_CASE("softmax and log_softmax", "[nn][softmax]") {
    SECTION("gradients along every axis") {
        const tf::Tensor x = random_f64({3, 4, 2}, -2, 2, 5);
        for (int64_t axis : {0, 1, 2, -1}) {
            check_gradients([axis](const Tensors& in) { return tf::nn::softmax(in[0], axis); },
                            {x});
            check_gradients([axis](const Tensors& in) { return tf::nn::log_softmax(in[0], axis); },
                            {x});
        }
        check_gradients(gradient_fn([](const tf::Tensor& t) { return tf::nn::softmax(t); }), {x});
        check_gradients(gradient_fn([](const tf::Tensor& t) { return tf::nn::log_softmax(t); }),
                        {x});
    }
    SECTION("stable for large logits") {
        const tf::Tensor x = tf::constant({{1000.0, 1001.0, 1002.0}, {-1000.0, 0.0, 1000.0}});
        const auto s = values(tf::nn::softmax(x));
        const auto l = values(tf::nn::log_softmax(x));
        for (double v : s)
            CHECK(std::isfinite(v));
        CHECK(s[2] == Approx(0.6652409557748219));
        CHECK(l[0] == Approx(-2.4076059644443806));
        CHECK(l[3] == Approx(-2000.0));
        const auto f = values(tf::nn::softmax(x.cast(tf::float32)));
        CHECK(f[2] == Approx(0.6652409557748219).epsilon(1e-6));
    }
    SECTION("long rows and float32") {
        const tf::Tensor x = random_f64({4, 1037}, -10, 10, 9);
        const auto s64 = values(tf::nn::softmax(x));
        const auto s32 = values(tf::nn::softmax(x.cast(tf::float32)));
        const auto sums = values(tf::reduce_sum(tf::nn::softmax(x), -1));
        for (double v : sums)
            CHECK(v == Approx(1.0));
        for (std::size_t i = 0; i < s64.size(); ++i)
            CHECK(s32[i] == Approx(s64[i]).epsilon(1e-5).margin(1e-9));
    }
    SECTION("errors") {
        check_throws_with([] { tf::nn::softmax(tf::constant({1, 2})); }, "int32", "[Op:Softmax]");
        check_throws_with([] { tf::nn::softmax(tf::constant(1.0)); }, ">= 1 dimension");
        check_throws_with([] { tf::nn::log_softmax(tf::constant({1.0}), 2); }, "LogSoftmax");
    }
}

TEST_CASE("cross-entropy losses", "[nn][losses]") {
    const tf::Tensor logits = random_f64({4, 5}, -3, 3, 21);
    const tf::Tensor p = tf::nn::softmax(random_f64({4, 5}, -1, 1, 22));  // rows are distributions
    SECTION("softmax_cross_entropy_with_logits") {
        for (int64_t axis : {-1, 0}) {
            // Label distributions along the class axis: TensorFlow's gradient assumes it.
            const tf::Tensor labels = tf::nn::softmax(random_f64({4, 5}, -1, 1, 24), axis);
            check_gradients(
                [axis](const Tensors& in) {
                    return tf::nn::softmax_cross_entropy_with_logits(in[0], in[1], axis);
                },
                {labels, logits});
        }
        const auto loss = values(tf::nn::softmax_cross_entropy_with_logits(p, logits));
        const auto ref = values(-tf::reduce_sum(p * tf::nn::log_softmax(logits), -1));
        for (std::size_t i = 0; i < loss.size(); ++i)
            CHECK(loss[i] == Approx(ref[i]));
    }
    SECTION("sparse_softmax_cross_entropy_with_logits") {
        for (tf::DType dt : {tf::int32, tf::int64}) {
            const tf::Tensor labels = tf::constant({0, 4, 2, 2}).cast(dt);
            check_gradients(
                [labels](const Tensors& in) {
                    return tf::nn::sparse_softmax_cross_entropy_with_logits(labels, in[0]);
                },
                {logits});
            check_gradients(gradient_fn([](const tf::Tensor& t) {
                                return tf::nn::sparse_softmax_cross_entropy_with_logits(
                                    tf::constant({1, 0, 3, 2}), t);
                            }),
                            {logits});
            const auto loss =
                values(tf::nn::sparse_softmax_cross_entropy_with_logits(labels, logits));
            const auto dense = values(tf::nn::softmax_cross_entropy_with_logits(
                tf::one_hot(labels, 5, 1, 0, -1, tf::float64), logits));
            for (std::size_t i = 0; i < loss.size(); ++i)
                CHECK(loss[i] == Approx(dense[i]));
        }
        // Rank 3 logits: the labels keep the leading dimensions.
        const tf::Tensor l3 = random_f64({2, 3, 4}, -1, 1, 4);
        const tf::Tensor lab3 = tf::constant({{0, 1, 3}, {2, 2, 0}});
        CHECK(tf::nn::sparse_softmax_cross_entropy_with_logits(lab3, l3).shape() ==
              tf::Shape{2, 3});
        // Huge logits stay finite.
        const auto big = values(tf::nn::sparse_softmax_cross_entropy_with_logits(
            tf::constant({0}), tf::constant({{1e4, 0.0}}).cast(tf::float32)));
        CHECK(big[0] == 0.0);
    }
    SECTION("sigmoid_cross_entropy_with_logits") {
        const tf::Tensor z = random_f64({4, 5}, 0, 1, 23);
        check_gradients(
            [](const Tensors& in) {
                return tf::nn::sigmoid_cross_entropy_with_logits(in[0], in[1]);
            },
            {z, logits});
        const auto big = values(tf::nn::sigmoid_cross_entropy_with_logits(
            tf::constant({1.0, 0.0}), tf::constant({-800.0, 800.0})));
        CHECK(big[0] == Approx(800.0));
        CHECK(big[1] == Approx(800.0));
    }
    SECTION("l2_loss and mean_squared_error") {
        check_gradients([](const Tensors& in) { return tf::nn::l2_loss(in[0]); }, {logits});
        CHECK(tf::nn::l2_loss(tf::constant({1.0, 2.0})).item<double>() == 2.5);
        check_gradients(
            [](const Tensors& in) { return tf::losses::mean_squared_error(in[0], in[1]); },
            {p, logits});
        CHECK(tf::losses::mean_squared_error(tf::constant({1.0, 2.0}), tf::constant({2.0, 4.0}))
                  .item<double>() == 2.5);
    }
    SECTION("errors") {
        check_throws_with(
            [&] {
                tf::nn::sparse_softmax_cross_entropy_with_logits(tf::constant({0, 5, 1, 2}),
                                                                 logits);
            },
            "Received a label value of 5 which is outside the valid range of [0, 5)",
            "[Op:SparseSoftmaxCrossEntropyWithLogits]");
        check_throws_with(
            [&] {
                tf::nn::sparse_softmax_cross_entropy_with_logits(tf::constant({0, -1, 1, 2}),
                                                                 logits);
            },
            "label value of -1");
        check_throws_with(
            [&] {
                tf::nn::sparse_softmax_cross_entropy_with_logits(tf::constant({0, 1}), logits);
            },
            "[2]",
            "[4,5]");
        check_throws_with(
            [&] {
                tf::nn::sparse_softmax_cross_entropy_with_logits(tf::constant({0.0, 1.0, 1.0, 2.0}),
                                                                 logits);
            },
            "int32 or int64");
        check_throws_with(
            [&] {
                tf::nn::softmax_cross_entropy_with_logits(random_f64({4, 3}), logits);
            },
            "logits_size=[4,5] labels_size=[4,3]",
            "[Op:SoftmaxCrossEntropyWithLogits]");
        check_throws_with(
            [&] {
                tf::nn::sigmoid_cross_entropy_with_logits(random_f64({4, 3}), logits);
            },
            "same shape");
        check_throws_with([] { tf::nn::leaky_relu(tf::constant({1, 2})); }, "int32", "LeakyRelu");
    }
}
