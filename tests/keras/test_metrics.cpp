// Keras 3 metrics: accumulation over updates, sample weights, reset, thresholds.
#include <catch2/catch.hpp>

#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;
namespace km = tf::keras::metrics;

namespace {
double item(const tf::Tensor& t) {
    return t.item<double>();
}
}  // namespace

TEST_CASE("Mean accumulates a weighted mean and resets", "[keras][metrics]") {
    km::Mean m;
    CHECK(m.name() == "mean");
    CHECK(item(m.result()) == 0);
    m.update_state(tf::constant({1.0f, 2.0f, 3.0f}));
    m.update_state(tf::constant({10.0f}), tf::constant({2.0f}));
    CHECK(item(m.result()) == Approx((1 + 2 + 3 + 20) / 5.0));
    m.update_state(tf::constant(4.0f));  // a scalar counts once
    CHECK(item(m.result()) == Approx(30 / 6.0));
    m.reset_state();
    CHECK(item(m.result()) == 0);
}

TEST_CASE("Accuracy family", "[keras][metrics]") {
    km::SparseCategoricalAccuracy sca;
    CHECK(sca.name() == "sparse_categorical_accuracy");
    const tf::Tensor probs = tf::constant({{0.1f, 0.9f}, {0.8f, 0.2f}, {0.3f, 0.7f}});
    sca.update_state(tf::constant({1, 1, 1}), probs);
    CHECK(item(sca.result()) == Approx(2 / 3.0));
    sca.update_state(tf::constant({{0}}), tf::constant({{0.6f, 0.4f}}));  // [B, 1] labels
    CHECK(item(sca.result()) == Approx(3 / 4.0));
    km::CategoricalAccuracy ca;
    ca.update_state(
        tf::constant({{0.f, 1.f}, {0.f, 1.f}, {1.f, 0.f}}), probs, tf::constant({1.f, 3.f, 0.f}));
    CHECK(item(ca.result()) == Approx(1 / 4.0));
    km::BinaryAccuracy ba(0.5);
    ba.update_state(tf::constant({1.f, 0.f, 1.f, 0.f}), tf::constant({0.7f, 0.2f, 0.4f, 0.6f}));
    CHECK(item(ba.result()) == Approx(0.5));
    km::Accuracy acc;
    acc.update_state(tf::constant({1, 2, 3, 4}), tf::constant({1, 2, 0, 4}));
    CHECK(item(acc.result()) == Approx(0.75));
    CHECK(acc.higher_is_better());
}

TEST_CASE("Precision and Recall at threshold 0.5", "[keras][metrics]") {
    const tf::Tensor y = tf::constant({1.f, 1.f, 0.f, 0.f, 1.f});
    const tf::Tensor p = tf::constant({0.9f, 0.3f, 0.8f, 0.1f, 0.6f});  // tp 2, fp 1, fn 1
    km::Precision precision;
    km::Recall recall;
    precision.update_state(y, p);
    recall.update_state(y, p);
    CHECK(item(precision.result()) == Approx(2 / 3.0));
    CHECK(item(recall.result()) == Approx(2 / 3.0));
    recall.update_state(tf::constant({1.f}), tf::constant({0.2f}));
    CHECK(item(recall.result()) == Approx(2 / 4.0));
    precision.reset_state();
    CHECK(item(precision.result()) == 0);
}
