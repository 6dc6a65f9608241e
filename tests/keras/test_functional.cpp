// The functional API: Input, layers called on KerasTensors, Functional models with several inputs
// and outputs, shared layers, nested models, summary()'s "Connected to", the std::vector forms of
// fit / evaluate / predict with per-output losses, and the errors for graphs that do not connect.
#include <catch2/catch.hpp>

#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;
namespace kl = tf::keras::layers;
namespace kk = tf::keras;

namespace {

// A two-input layer through the vector call path (as merge layers plug in): a + b.
struct AddTwo : kl::Layer {
    AddTwo() : kl::Layer("add_two") {}
    tf::Tensor call(const tf::Tensor& x, bool) override { return x; }
    std::vector<tf::Tensor> call_multi(const std::vector<tf::Tensor>& in, bool) override {
        REQUIRE(in.size() == 2);
        return {in[0] + in[1]};
    }
};

// A layer with two outputs: x and 2x.
struct Twice : kl::Layer {
    Twice() : kl::Layer("twice") {}
    tf::Tensor call(const tf::Tensor& x, bool) override { return x; }
    std::vector<tf::Tensor> call_multi(const std::vector<tf::Tensor>& in, bool) override {
        return {in[0], in[0] * tf::scalar_like(in[0], 2.0)};
    }
};

std::vector<double> values(const tf::Tensor& t) {
    return tf::cast(t, tf::float64).to_vector<double>();
}

}  // namespace

TEST_CASE("Input and a layer on a KerasTensor: shapes, weights built as in Keras",
          "[keras][functional]") {
    const kk::KerasTensor x = kk::Input({5}, tf::float64, "features");
    CHECK(x.shape() == tf::Shape{-1, 5});
    CHECK(x.dtype() == tf::float64);
    CHECK(x.layer().name() == "features");
    CHECK(x.layer().class_name() == "InputLayer");
    auto dense = std::make_shared<kl::Dense>(3);
    const kk::KerasTensor h = (*dense)(x);
    CHECK(dense->built());
    CHECK(dense->kernel().shape() == tf::Shape{5, 3});
    CHECK(dense->kernel().dtype() == tf::float64);
    CHECK(h.shape() == tf::Shape{-1, 3});
    CHECK(h.node_index() == 0);
    const kk::KerasTensor h2 = (*dense)(x);  // a second call: a second node
    CHECK(h2.node_index() == 1);
    CHECK(dense->inbound_node_count() == 2);
    CHECK(kk::Input({2, 3}).shape() == tf::Shape{-1, 2, 3});
}

TEST_CASE("Functional: two inputs, two outputs, a shared layer counted once",
          "[keras][functional]") {
    const auto a = kk::Input({3}, tf::float64, "a");
    const auto b = kk::Input({3}, tf::float64, "b");
    auto shared = std::make_shared<kl::Dense>(4, kl::DenseOptions{.activation = "tanh"});
    auto add = std::make_shared<AddTwo>();
    auto head1 = std::make_shared<kl::Dense>(1, kl::DenseOptions{.name = "head1"});
    auto head2 = std::make_shared<kl::Dense>(2, kl::DenseOptions{.name = "head2"});
    const auto ha = (*shared)(a);
    const auto hb = (*shared)(b);
    const auto sum = (*add)({ha, hb});
    kk::Functional model({a, b}, {(*head1)(sum), (*head2)(ha)}, "two_heads");
    CHECK(model.variables().size() == 6);
    CHECK(model.count_params() == (3 * 4 + 4) + (4 * 1 + 1) + (4 * 2 + 2));
    CHECK(model.output_names() == std::vector<std::string>{"head1", "head2"});
    const auto layers = model.layers();
    REQUIRE(layers.size() == 6);  // a, b, shared, add_two, head1, head2
    CHECK(layers[0]->name() == "a");
    CHECK(layers[1]->name() == "b");

    const tf::Tensor xa = tf::random::uniform({7, 3}, -1, 1, tf::float64, 1);
    const tf::Tensor xb = tf::random::uniform({7, 3}, -1, 1, tf::float64, 2);
    const std::vector<tf::Tensor> out = model.call_multi({xa, xb}, false);
    REQUIRE(out.size() == 2);
    // The same graph by hand, bit for bit.
    const tf::Tensor ta = (*shared)(xa), tb = (*shared)(xb);
    CHECK(values(out[0]) == values((*head1)(ta + tb)));
    CHECK(values(out[1]) == values((*head2)(ta)));
    const std::vector<tf::Tensor> predicted = model.predict({xa, xb}, 3);
    REQUIRE(predicted.size() == 2);
    CHECK(predicted[0].shape() == tf::Shape{7, 1});
    CHECK(values(predicted[1]) == values(out[1]));

    const std::string summary = model.summary();
    CHECK_THAT(summary, Catch::Contains("Connected to"));
    CHECK_THAT(summary, Catch::Contains(shared->name() + "[0][0], " + shared->name() + "[1][0]"));
    CHECK_THAT(summary, Catch::Contains("a (InputLayer)"));
    CHECK_THAT(summary, Catch::Contains("Total params: 31"));
}

TEST_CASE("Functional fit / evaluate with per-output losses and loss_weights",
          "[keras][functional][fit]") {
    tf::random::set_seed(5);
    const auto x = kk::Input({2});
    auto trunk = std::make_shared<kl::Dense>(16, kl::DenseOptions{.activation = "relu"});
    const auto h = (*trunk)(x);
    auto reg = std::make_shared<kl::Dense>(1, kl::DenseOptions{.name = "reg"});
    auto cls = std::make_shared<kl::Dense>(2, kl::DenseOptions{.name = "cls"});
    auto model = kk::functional({x}, {(*reg)(h), (*cls)(h)});
    auto mse = std::make_shared<tf::keras::losses::MeanSquaredError>();
    auto sce = std::make_shared<tf::keras::losses::SparseCategoricalCrossentropy>(
        tf::keras::losses::CrossentropyOptions{.from_logits = true});
    model->compile(
        std::make_shared<kk::optimizers::Adam>(kk::optimizers::AdamOptions{.learning_rate = 0.02}),
        {mse, sce},
        {0.5, 2.0});
    const tf::Tensor data = tf::random::uniform({256, 2}, -1, 1, tf::float32, 9);
    const tf::Tensor target = tf::reduce_sum(data, {1}, true);
    const tf::Tensor label =
        tf::cast(tf::greater(tf::reduce_prod(data, {1}), tf::zeros({256})), tf::int32);
    // The weighted sum, against the losses computed on their own.
    const std::vector<tf::Tensor> pred = model->call_multi({data}, false);
    const double expected =
        0.5 * (*mse)(target, pred[0]).item<double>() + 2.0 * (*sce)(label, pred[1]).item<double>();
    CHECK(model->evaluate({data}, {target, label}, 256).at("loss") ==
          Approx(expected).epsilon(1e-6));
    const auto history = model->fit({data}, {target, label}, {.epochs = 15, .verbose = 0});
    REQUIRE(history.history.at("loss").size() == 15);
    CHECK(history.history.at("loss").back() < 0.5 * history.history.at("loss").front());
    // The single-loss form applies the loss to every output.
    CHECK_THROWS_AS(model->fit(data, target, {.verbose = 0}), tf::errors::InvalidArgumentError);
    CHECK_THROWS_WITH(model->compile(std::make_shared<kk::optimizers::SGD>(), {mse}, {1.0, 2.0}),
                      Catch::Contains("2 loss_weights for 1 losses"));
}

TEST_CASE("Functional: one input and one output use the Tensor forms; a nested model",
          "[keras][functional]") {
    const auto x = kk::Input({4});
    auto d1 = std::make_shared<kl::Dense>(8, kl::DenseOptions{.activation = "relu"});
    auto d2 = std::make_shared<kl::Dense>(3);
    auto inner = std::make_shared<kk::Functional>(
        std::vector<kk::KerasTensor>{x}, std::vector<kk::KerasTensor>{(*d2)((*d1)(x))}, "inner");
    const std::string chain = inner->summary();
    CHECK_THAT(chain, !Catch::Contains("Connected to"));  // a chain: Keras' 3 columns

    const auto y = kk::Input({4});
    auto top = std::make_shared<kl::Dense>(1, kl::DenseOptions{.name = "top"});
    const auto z = (*inner)(y);
    CHECK(z.shape() == tf::Shape{-1, 3});
    kk::Functional outer({y}, {(*top)(z)}, "outer");
    CHECK(outer.variables().size() == 6);
    const tf::Tensor batch = tf::random::uniform({5, 4}, -1, 1, tf::float32, 3);
    CHECK(values(outer(batch)) == values((*top)((*inner)(batch))));
    CHECK(values(outer.predict(batch, 2)) == values(outer(batch)));
    const std::string summary = outer.summary();
    CHECK_THAT(summary, Catch::Contains("inner (Functional)"));
    outer.compile("sgd", "mse");
    const auto history = outer.fit(batch, tf::zeros({5, 1}), {.epochs = 2, .verbose = 0});
    CHECK(history.history.at("loss").size() == 2);
    // A layer with two outputs.
    auto twice = std::make_shared<Twice>();
    const auto both = twice->call_symbolic({y});
    REQUIRE(both.size() == 2);
    CHECK(both[1].tensor_index() == 1);
    CHECK_THROWS_WITH((*twice)(y), Catch::Contains("gives 2 outputs"));
    kk::Functional split({y}, both);
    const auto parts = split.call_multi({batch}, false);
    CHECK(values(parts[1]) == values(batch * tf::scalar_like(batch, 2.0)));
}

TEST_CASE("Functional: bad graphs and bad calls raise typed errors",
          "[keras][functional][errors]") {
    const auto a = kk::Input({3}, tf::float32, "in_a");
    const auto b = kk::Input({3}, tf::float32, "in_b");
    auto add = std::make_shared<AddTwo>();
    const auto sum = (*add)({a, b});
    CHECK_THROWS_AS(kk::Functional({a}, {sum}), tf::errors::InvalidArgumentError);
    CHECK_THROWS_WITH(kk::Functional({a}, {sum}),
                      Catch::Contains("graph disconnected") && Catch::Contains("in_b"));
    auto dense = std::make_shared<kl::Dense>(2);
    const auto h = (*dense)(a);
    CHECK_THROWS_WITH(kk::Functional({h}, {h}), Catch::Contains("must come from tf::keras::Input"));
    CHECK_THROWS_WITH(kk::Functional({}, {h}), Catch::Contains("at least one input"));
    CHECK_THROWS_WITH(kk::Functional({a, a}, {h}), Catch::Contains("given twice"));
    kl::Dense on_stack(2);
    CHECK_THROWS_WITH(on_stack(a), Catch::Contains("std::shared_ptr"));
    kk::Functional model({a}, {h});
    CHECK_THROWS_WITH(model.call_multi({tf::ones({2, 3}), tf::ones({2, 3})}, false),
                      Catch::Contains("expects 1 inputs"));
    CHECK_THROWS_WITH(model(tf::ones({2, 4})), Catch::Contains("expects shape [-1,3]"));
    CHECK_THROWS_WITH(kk::Input({-1, 3}), Catch::Contains("must be known"));
    CHECK_THROWS_AS(kk::KerasTensor().shape(), tf::errors::InvalidArgumentError);
    kk::Functional two({a, b}, {sum});
    CHECK_THROWS_WITH(two(tf::ones({2, 3})), Catch::Contains("2 inputs"));
}

namespace {
std::vector<std::string> warnings;
void capture(tf::logging::Level level, std::string_view message) {
    if (level == tf::logging::WARN) warnings.emplace_back(message);
}

// Calls a Dense it never tracked (the bug the warning is for), and one it did.
struct Forgetful : kl::Layer {
    Forgetful() : kl::Layer("forgetful") {}
    std::shared_ptr<kl::Dense> lost = std::make_shared<kl::Dense>(2);
    std::shared_ptr<kl::Dense> kept = track(std::make_shared<kl::Dense>(2));
    tf::Tensor call(const tf::Tensor& x, bool t) override { return (*kept)((*lost)(x, t), t); }
};
}  // namespace

TEST_CASE("A layer that calls a layer it does not track gets one warning per class",
          "[keras][functional][tracking]") {
    warnings.clear();
    tf::logging::set_sink(capture);
    Forgetful a, b;
    a(tf::ones({1, 3}));
    a(tf::ones({1, 3}));
    b(tf::ones({1, 3}));
    tf::logging::set_sink(nullptr);
    REQUIRE(warnings.size() == 1);
    CHECK_THAT(warnings[0],
               Catch::Contains("does not track it") && Catch::Contains(a.lost->name()) &&
                   Catch::Contains("Forgetful"));
    CHECK(a.variables().size() == 2);  // only the tracked Dense's
}

TEST_CASE("Merge layers plug into the functional API through call_multi",
          "[keras][functional][merging]") {
    const auto a = kk::Input({3}, tf::float64, "ma");
    const auto b = kk::Input({2}, tf::float64, "mb");
    auto concat = std::make_shared<kl::Concatenate>();
    const auto joined = (*concat)({a, b});
    CHECK(joined.shape() == tf::Shape{-1, 5});
    auto dense = std::make_shared<kl::Dense>(2);
    const auto h = (*dense)(joined);
    auto add = std::make_shared<kl::Add>();
    kk::Functional model({a, b}, {(*add)({h, h})});
    const tf::Tensor xa = tf::random::uniform({4, 3}, -1, 1, tf::float64, 1);
    const tf::Tensor xb = tf::random::uniform({4, 2}, -1, 1, tf::float64, 2);
    const tf::Tensor want = (*dense)(tf::concat({xa, xb}, 1));
    CHECK(values(model.call_multi({xa, xb}, false)[0]) == values(want + want));
    CHECK_THAT(model.summary(), Catch::Contains("ma[0][0], mb[0][0]"));
}
