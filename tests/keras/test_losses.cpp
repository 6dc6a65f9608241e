// Keras 3 losses and TF1 tf.losses against their formulas: from_logits, label smoothing,
// reductions, sample weights, SUM_BY_NONZERO_WEIGHTS, gradients and mismatched shapes.
#include <cmath>

#include <catch2/catch.hpp>

#include <tapeflow/tapeflow.hpp>

#include "keras/keras_support.hpp"

namespace tf = tapeflow;
namespace kl = tf::keras::losses;
using tf::testing::check_close;
using tf::testing::check_gradients;
using tf::testing::random_f64;

namespace {

tf::Tensor logits3() {
    return tf::constant({{2.0, -1.0, 0.5}, {0.1, 0.2, 3.0}});
}
tf::Tensor onehot3() {
    return tf::constant({{1.0, 0.0, 0.0}, {0.0, 1.0, 0.0}});
}
tf::Tensor ids3() {
    return tf::constant({0, 1});
}

double item(const tf::Tensor& t) {
    return t.item<double>();
}

}  // namespace

TEST_CASE("Crossentropies: from_logits, probabilities, smoothing, reductions", "[keras][losses]") {
    const tf::Tensor per_sample = -tf::reduce_sum(onehot3() * tf::nn::log_softmax(logits3()), -1);
    const double mean = item(tf::reduce_mean(per_sample));
    CHECK(item(kl::CategoricalCrossentropy({.from_logits = true})(onehot3(), logits3())) ==
          Approx(mean));
    CHECK(item(kl::SparseCategoricalCrossentropy({.from_logits = true})(ids3(), logits3())) ==
          Approx(mean));
    const tf::Tensor probs = tf::nn::softmax(logits3());
    CHECK(item(kl::CategoricalCrossentropy()(onehot3(), probs)) == Approx(mean));
    CHECK(item(kl::SparseCategoricalCrossentropy()(ids3(), probs)) == Approx(mean));
    CHECK(item(kl::SparseCategoricalCrossentropy()(tf::constant({{0.0}, {1.0}}), probs)) ==
          Approx(mean));
    // Reductions and sample weights.
    check_close(kl::CategoricalCrossentropy(
                    {.from_logits = true, .reduction = kl::Reduction::none})(onehot3(), logits3()),
                per_sample);
    CHECK(item(kl::CategoricalCrossentropy({.from_logits = true, .reduction = kl::Reduction::sum})(
              onehot3(), logits3())) == Approx(2 * mean));
    const tf::Tensor w = tf::constant({0.25, 2.0});
    CHECK(item(kl::SparseCategoricalCrossentropy({.from_logits = true})(ids3(), logits3(), w)) ==
          Approx(item(tf::reduce_sum(per_sample * w)) / 2));
    // Label smoothing 0.3 over 3 classes: labels * 0.7 + 0.1.
    const tf::Tensor smoothed = onehot3() * 0.7 + 0.1;
    CHECK(item(kl::CategoricalCrossentropy({.from_logits = true, .label_smoothing = 0.3})(
              onehot3(), logits3())) ==
          Approx(item(
              tf::reduce_mean(-tf::reduce_sum(smoothed * tf::nn::log_softmax(logits3()), -1)))));
    CHECK_THROWS_AS(kl::SparseCategoricalCrossentropy({.label_smoothing = 0.1}),
                    tf::errors::InvalidArgumentError);
    // Probabilities are clipped to [1e-7, 1 - 1e-7].
    CHECK(item(kl::CategoricalCrossentropy()(tf::constant({{0.0, 1.0}}),
                                             tf::constant({{1.0, 0.0}}))) ==
          Approx(-std::log(1e-7)).epsilon(1e-6));
}

TEST_CASE("BinaryCrossentropy", "[keras][losses]") {
    const tf::Tensor y = tf::constant({{1.0, 0.0}, {0.0, 1.0}});
    const tf::Tensor logits = tf::constant({{1.5, -0.3}, {2.0, 0.7}});
    const tf::Tensor p = tf::sigmoid(logits);
    const double expected = item(tf::reduce_mean(-(y * tf::log(p) + (1.0 - y) * tf::log(1.0 - p))));
    CHECK(item(kl::BinaryCrossentropy({.from_logits = true})(y, logits)) == Approx(expected));
    CHECK(item(kl::BinaryCrossentropy()(y, p)) == Approx(expected).epsilon(1e-6));
    const tf::Tensor ys = y * 0.8 + 0.1;  // smoothing 0.2
    CHECK(item(kl::BinaryCrossentropy({.from_logits = true, .label_smoothing = 0.2})(y, logits)) ==
          Approx(item(tf::reduce_mean(-(ys * tf::log(p) + (1.0 - ys) * tf::log(1.0 - p))))));
    // [B] labels against [B, 1] predictions.
    CHECK(item(kl::BinaryCrossentropy()(tf::constant({1.0, 0.0}), tf::constant({{0.8}, {0.4}}))) ==
          Approx(-(std::log(0.8) + std::log(0.6)) / 2).epsilon(1e-6));
}

TEST_CASE("Regression losses", "[keras][losses]") {
    const tf::Tensor y = tf::constant({{0.0, 1.0}, {2.0, -1.0}});
    const tf::Tensor p = tf::constant({{0.5, 1.0}, {-0.5, 1.0}});
    CHECK(item(kl::MeanSquaredError()(y, p)) == Approx((0.25 + 0 + 6.25 + 4) / 4));
    CHECK(item(kl::MeanAbsoluteError()(y, p)) == Approx((0.5 + 0 + 2.5 + 2) / 4));
    // Huber, delta 1: 0.125, 0, 2.5 - 0.5, 2 - 0.5.
    CHECK(item(kl::Huber()(y, p)) == Approx((0.125 + 0 + 2.0 + 1.5) / 4));
    check_close(kl::MeanSquaredError(kl::Reduction::none)(y, p), tf::constant({0.125, 5.125}));
    check_gradients([](const std::vector<tf::Tensor>& in) { return kl::Huber(0.7)(in[0], in[1]); },
                    {random_f64({3, 4}), random_f64({3, 4}, -2, 2, 5)});
    check_gradients(
        [](const std::vector<tf::Tensor>& in) {
            return kl::CategoricalCrossentropy({.from_logits = true, .label_smoothing = 0.1})(
                onehot3(), in[0]);
        },
        {logits3()});
}

TEST_CASE("Losses reject mismatched shapes with both shapes in the message",
          "[keras][losses][errors]") {
    CHECK_THROWS_WITH(kl::MeanSquaredError()(tf::ones({4, 3}), tf::ones({4, 2})),
                      Catch::Contains("mean_squared_error") && Catch::Contains("[4,3]") &&
                          Catch::Contains("[4,2]"));
    CHECK_THROWS_WITH(kl::CategoricalCrossentropy()(ids3(), logits3()), Catch::Contains("sparse"));
    CHECK_THROWS_WITH(kl::SparseCategoricalCrossentropy()(onehot3(), logits3()),
                      Catch::Contains("CategoricalCrossentropy"));
}

TEST_CASE("TF1 tf.losses with SUM_BY_NONZERO_WEIGHTS", "[keras][losses][tf1]") {
    const tf::Tensor per_sample = tf::nn::softmax_cross_entropy_with_logits(onehot3(), logits3());
    const tf::Tensor w = tf::constant({0.0, 3.0});
    // The weighted sum over the number of nonzero weights (1 here).
    CHECK(item(tf::losses::softmax_cross_entropy(onehot3(), logits3(), w)) ==
          Approx(3 * item(tf::slice(per_sample, {1}, {1}))));
    CHECK(item(tf::losses::sparse_softmax_cross_entropy(ids3(), logits3())) ==
          Approx(item(tf::reduce_mean(per_sample))));
    CHECK(item(tf::losses::softmax_cross_entropy(onehot3(), logits3(), 0.0)) == 0);
    const tf::Tensor y = tf::constant({{1.0, 0.0}, {0.0, 1.0}});
    const tf::Tensor x = tf::constant({{0.5, -1.0}, {2.0, 0.0}});
    CHECK(
        item(tf::losses::sigmoid_cross_entropy(y, x, 1.0, 0.2)) ==
        Approx(item(tf::reduce_mean(tf::nn::sigmoid_cross_entropy_with_logits(y * 0.8 + 0.1, x)))));
    CHECK(item(tf::losses::absolute_difference(y, x)) == Approx((0.5 + 1 + 2 + 1) / 4.0));
    CHECK(item(tf::losses::huber_loss(y, x, 1.0, 1.0)) == Approx((0.125 + 0.5 + 1.5 + 0.5) / 4));
    CHECK(item(tf::losses::hinge_loss(y, x)) == Approx((0.5 + 0 + 3 + 1) / 4.0));
    const tf::Tensor p = tf::constant({{0.9, 0.2}, {0.3, 0.6}});
    CHECK(item(tf::losses::log_loss(y, p)) ==
          Approx(-(std::log(0.9 + 1e-7) + std::log(0.8 + 1e-7) + std::log(0.7 + 1e-7) +
                   std::log(0.6 + 1e-7)) /
                 4));
    // Per-element weights [2, 1] broadcast over columns: the nonzero count is 2.
    CHECK(item(tf::losses::mean_squared_error(y, x, tf::constant({{2.0}, {0.0}}))) ==
          Approx(2 * (0.25 + 1) / 2));
    CHECK(item(tf::losses::compute_weighted_loss(
              tf::constant({1.0, 3.0}), 1.0, tf::losses::Reduction::sum)) == 4);
    CHECK_THROWS_AS(tf::losses::absolute_difference(tf::ones({2}), tf::ones({3})),
                    tf::errors::InvalidArgumentError);
}
