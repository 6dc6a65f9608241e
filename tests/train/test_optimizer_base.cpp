// The Optimizer base contract: var_list defaults, skipped and all-None
// gradients with TensorFlow's messages, slots and their names, global_step, learning-rate
// schedules, gate_gradients, and copy-on-write of in-place updates.
#include <catch2/catch.hpp>

#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;
namespace t = tapeflow::train;
using Catch::Contains;

namespace {

std::vector<float> values(const tf::Variable& v) {
    return v.value().to_vector<float>();
}

}  // namespace

TEST_CASE("apply_gradients: empty list and all-None gradients raise TensorFlow's messages",
          "[train][errors]") {
    tf::Variable a(tf::constant({1.f, 2.f}), {.name = "a"});
    tf::Variable b(tf::constant({3.f}), {.name = "b"});
    t::GradientDescentOptimizer opt(0.1);
    CHECK_THROWS_WITH(opt.apply_gradients({}), Contains("No variables provided."));
    CHECK_THROWS_AS(opt.apply_gradients({{tf::Gradient(), a}, {tf::Gradient(), b}}),
                    tf::errors::InvalidArgumentError);
    CHECK_THROWS_WITH(opt.apply_gradients({{tf::Gradient(), a}, {tf::Gradient(), b}}),
                      Contains("No gradients provided for any variable: ['" + a.name() + "', '" +
                               b.name() + "']"));
    CHECK(opt.iterations() == 0);
}

TEST_CASE("apply_gradients skips None gradients silently: no slot, variable untouched", "[train]") {
    tf::Variable a(tf::constant({1.f, 2.f}), {.name = "a"});
    tf::Variable b(tf::constant({3.f}), {.name = "b"});
    t::MomentumOptimizer opt(1.0, 0.0);  // momentum 0 still creates the slot
    opt.apply_gradients({{tf::constant({1.f, 1.f}), a}, {tf::Gradient(), b}});
    CHECK(values(a) == std::vector<float>{0.f, 1.f});
    CHECK(values(b) == std::vector<float>{3.f});
    CHECK(opt.get_slot(a, "momentum").has_value());
    CHECK_FALSE(opt.get_slot(b, "momentum").has_value());
    CHECK_FALSE(opt.get_slot(a, "nope").has_value());
    CHECK(opt.get_slot_names() == std::vector<std::string>{"momentum"});
    CHECK(opt.get_slot(a, "momentum")->name() == a.name() + "/" + opt.name() + "/momentum");
    CHECK_FALSE(opt.get_slot(a, "momentum")->trainable());
}

TEST_CASE("minimize: no gradient for any variable names the variables and the loss",
          "[train][errors]") {
    tf::Variable a(tf::constant({1.f}), {.name = "a"});
    t::GradientDescentOptimizer opt(0.1);
    auto loss_fn = [&] {
        return tf::stop_gradient(a.value()) * 2.f;
    };
    CHECK_THROWS_WITH(
        opt.minimize(loss_fn, std::vector<tf::Variable>{a}),
        Contains("No gradients provided for any variable, check your graph for ops that do not "
                 "support gradients, between variables ['" +
                 a.name() + "']"));
    CHECK_THROWS_AS(
        opt.minimize(loss_fn, std::vector<tf::Variable>{a}, {}, t::GateGradients::gate_none),
        tf::errors::InvalidArgumentError);
    CHECK(values(a) == std::vector<float>{1.f});
}

TEST_CASE("compute_gradients: default var_list is the trainable variables the loss read",
          "[train]") {
    tf::Variable w(tf::constant({2.f}), {.name = "w"});
    tf::Variable frozen(tf::constant({5.f}), {.name = "frozen", .trainable = false});
    tf::Variable unused(tf::constant({7.f}), {.name = "unused"});
    t::GradientDescentOptimizer opt(0.5);
    const auto pairs = opt.compute_gradients([&] { return tf::reduce_sum(w * frozen); });
    REQUIRE(pairs.size() == 1);
    CHECK(pairs[0].variable == w);
    CHECK(pairs[0].gradient.dense().to_vector<float>() == std::vector<float>{5.f});
    opt.minimize([&] { return tf::reduce_sum(w * frozen); });
    CHECK(values(w) == std::vector<float>{-0.5f});
    CHECK(values(frozen) == std::vector<float>{5.f});
    CHECK(values(unused) == std::vector<float>{7.f});
    CHECK_THROWS_WITH(opt.minimize([&] { return tf::constant(1.f); }),
                      Contains("No variables to optimize."));
    CHECK_THROWS_AS(opt.compute_gradients({}), tf::errors::RuntimeError);
    CHECK_THROWS_WITH(opt.compute_gradients([&] { return tf::cast(w.value(), tf::int32); }),
                      Contains("Invalid type int32 for loss"));
}

TEST_CASE("optimizer names are unique; state is named after them; variables() is sorted",
          "[train]") {
    tf::Variable v(tf::constant({1.f, 2.f}), {.name = "v"});
    t::AdamOptimizer first(0.1);
    t::AdamOptimizer second(0.1);
    CHECK(first.name() == "Adam");
    CHECK(second.name() == "Adam_1");
    second.apply_gradients({{tf::constant({1.f, 1.f}), v}});
    std::vector<std::string> names;
    for (const auto& x : second.variables())
        names.push_back(x.name());
    CHECK(names == std::vector<std::string>{"Adam_1/beta1_power",
                                            "Adam_1/beta2_power",
                                            v.name() + "/Adam_1/m",
                                            v.name() + "/Adam_1/v"});
    t::GradientDescentOptimizer sgd(0.1);
    sgd.apply_gradients({{tf::constant({1.f, 1.f}), v}});
    CHECK(sgd.variables().empty());
    CHECK_THROWS_WITH(t::GradientDescentOptimizer(0.1, {.name = ""}),
                      Contains("Must specify the optimizer name"));
}

TEST_CASE("Adam's beta powers are shared and advance once per apply_gradients", "[train]") {
    tf::Variable a(tf::constant({1.f}), {.name = "a"});
    tf::Variable b(tf::constant({1.f}), {.name = "b"});
    t::AdamOptimizer opt(0.1);
    opt.apply_gradients({{tf::constant({1.f}), a}, {tf::constant({1.f}), b}});
    opt.apply_gradients({{tf::constant({1.f}), a}});
    for (const auto& x : opt.variables()) {
        if (x.name().ends_with("beta1_power"))
            CHECK(x.value().item<float>() == Approx(0.9 * 0.9 * 0.9));
    }
    // b joins at t = 3: its first step uses the global powers, unlike a fresh optimizer's t = 1.
    const float before = values(b)[0];
    opt.apply_gradients({{tf::constant({1.f}), b}});
    const double alpha = 0.1 * std::sqrt(1 - std::pow(0.999, 3)) / (1 - std::pow(0.9, 3));
    const double m = 0.9 * 0.1 + 0.1, v = 0.999 * 0.001 + 0.001;
    CHECK(values(b)[0] == Approx(before - alpha * m / (std::sqrt(v) + 1e-8)).epsilon(1e-5));
}

TEST_CASE("global_step: int64 or int32 scalar, incremented once per apply; schedules read it",
          "[train]") {
    tf::Variable v(tf::constant({0.f}), {.name = "v"});
    tf::Variable step(tf::constant(int64_t{10}), {.name = "step", .trainable = false});
    std::vector<int64_t> seen;
    t::GradientDescentOptimizer opt([&](int64_t s) {
        seen.push_back(s);
        return 1.0;
    });
    opt.apply_gradients({{tf::constant({1.f}), v}}, step);
    opt.apply_gradients({{tf::constant({1.f}), v}}, step);
    opt.apply_gradients({{tf::constant({1.f}), v}});
    CHECK(seen == std::vector<int64_t>{10, 11, 2});
    CHECK(t::global_step(step) == 12);
    CHECK(opt.iterations() == 3);
    tf::Variable small(tf::constant(0),
                       {.name = "int32_step", .trainable = false});  // tf.Variable(0)
    opt.apply_gradients({{tf::constant({1.f}), v}}, small);
    CHECK(small.dtype() == tf::int32);
    CHECK(small.value().item<int>() == 1);
    tf::Variable bad(tf::constant(0.0f), {.name = "bad_step"});
    CHECK_THROWS_WITH(opt.apply_gradients({{tf::constant({1.f}), v}}, bad),
                      Contains("global_step must be an int32 or int64 scalar variable"));
}

TEST_CASE("TF1 decay functions of the global-step Variable decay as the step grows", "[train]") {
    // tf.compat.v1.train.exponential_decay(0.1, global_step, 1, 0.5) in TF2 eager: a callable read
    // at every apply. With an int32 tf.Variable(0) as in TF1 scripts.
    tf::Variable step(tf::constant(0), {.name = "decay_step", .trainable = false});
    tf::Variable v(tf::constant({0.f}), {.name = "decayed_v"});
    t::GradientDescentOptimizer opt(t::exponential_decay(0.1, step, 1, 0.5));
    std::vector<float> after;
    for (int i = 0; i < 3; ++i) {
        opt.apply_gradients({{tf::constant({1.f}), v}}, step);
        after.push_back(v.value().to_vector<float>()[0]);
    }
    CHECK(after[0] == Approx(-0.1));
    CHECK(after[1] == Approx(-0.15));
    CHECK(after[2] == Approx(-0.175));
    CHECK(step.value().item<int>() == 3);
    // each of the eight reads the variable at evaluation time (the step argument is ignored)
    tf::Variable s64(tf::constant(int64_t{5}), {.name = "decay_step64", .trainable = false});
    const std::vector<std::pair<t::LearningRate, double>> rates{
        {t::exponential_decay(1.0, s64, 10, 0.5, true),
         t::exponential_decay(1.0, 5, 10, 0.5, true)},
        {t::piecewise_constant(s64, {3, 8}, {1.0, 0.5, 0.1}), 0.5},
        {t::polynomial_decay(1.0, s64, 10), t::polynomial_decay(1.0, 5, 10)},
        {t::natural_exp_decay(1.0, s64, 10, 0.5), t::natural_exp_decay(1.0, 5, 10, 0.5)},
        {t::inverse_time_decay(1.0, s64, 10, 0.5), t::inverse_time_decay(1.0, 5, 10, 0.5)},
        {t::cosine_decay(1.0, s64, 10), t::cosine_decay(1.0, 5, 10)},
        {t::cosine_decay_restarts(1.0, s64, 4), t::cosine_decay_restarts(1.0, 5, 4)},
        {t::linear_cosine_decay(1.0, s64, 10), t::linear_cosine_decay(1.0, 5, 10)}};
    for (const auto& [rate, expected] : rates) {
        CHECK_FALSE(rate.is_constant());
        CHECK(rate(999) == expected);
    }
    s64.assign(tf::constant(int64_t{9}));
    CHECK(rates[1].first(0) == 0.1);
    CHECK(rates[0].first(0) == t::exponential_decay(1.0, 9, 10, 0.5, true));
    tf::Variable wrong(tf::constant(1.0f), {.name = "float_step"});
    CHECK_THROWS_WITH(t::cosine_decay(1.0, wrong, 10),
                      Contains("cosine_decay: global_step must be an int32"));
    CHECK_THROWS_AS(t::piecewise_constant(s64, {3}, {1.0}), tf::errors::InvalidArgumentError);
}

TEST_CASE("learning rates: double, schedule object or lambda; current_learning_rate", "[train]") {
    tf::Variable v(tf::constant({0.f}), {.name = "v"});
    t::GradientDescentOptimizer opt(t::ExponentialDecay{1.0, 1, 0.5});
    CHECK(opt.current_learning_rate() == 1.0);
    opt.apply_gradients({{tf::constant({1.f}), v}});
    opt.apply_gradients({{tf::constant({1.f}), v}});
    CHECK(opt.current_learning_rate() == 0.5);
    CHECK(values(v)[0] == Approx(-1.5));
    t::LearningRate lambda = [](int64_t s) {
        return 0.1 * static_cast<double>(s);
    };
    CHECK(lambda(3) == Approx(0.3));
    CHECK_THROWS_WITH(t::GradientDescentOptimizer(-0.1),
                      Contains("learning_rate must be a non-negative number"));
}

TEST_CASE("hyper-parameter validation raises InvalidArgumentError with TensorFlow's wording",
          "[train][errors]") {
    using E = tf::errors::InvalidArgumentError;
    CHECK_THROWS_AS(t::AdagradOptimizer(0.1, {.initial_accumulator_value = 0.0}), E);
    CHECK_THROWS_WITH(t::AdagradOptimizer(0.1, {.initial_accumulator_value = -1.0}),
                      Contains("initial_accumulator_value must be positive"));
    CHECK_THROWS_WITH(t::ProximalAdagradOptimizer(0.1, {.initial_accumulator_value = 0.0}),
                      Contains("initial_accumulator_value must be positive"));
    CHECK_THROWS_WITH(t::FtrlOptimizer(0.1, {.learning_rate_power = 0.5}),
                      Contains("learning_rate_power 0.5 needs to be negative or zero"));
    CHECK_THROWS_WITH(t::FtrlOptimizer(0.1, {.initial_accumulator_value = -0.1}),
                      Contains("needs to be positive or zero"));
    CHECK_THROWS_WITH(t::FtrlOptimizer(0.1, {.l1_regularization_strength = -1}),
                      Contains("l1_regularization_strength"));
    CHECK_THROWS_WITH(t::FtrlOptimizer(0.1, {.l2_regularization_strength = -1}),
                      Contains("l2_regularization_strength"));
    CHECK_THROWS_WITH(t::FtrlOptimizer(0.1, {.l2_shrinkage_regularization_strength = -1}),
                      Contains("l2_shrinkage_regularization_strength"));
    CHECK_NOTHROW(t::FtrlOptimizer(0.1, {.initial_accumulator_value = 0.0}));
    CHECK_THROWS_WITH(t::AdamOptimizer(0.1, {.beta1 = 1.0}), Contains("beta1 must be in [0, 1)"));
    CHECK_THROWS_WITH(t::AdamOptimizer(0.1, {.beta2 = -0.1}), Contains("beta2 must be in [0, 1)"));
    CHECK_THROWS_AS(t::ProximalGradientDescentOptimizer(0.1, {.l1_regularization_strength = -1}),
                    E);
}

TEST_CASE("updates check the gradient's shape, dtype and indices", "[train][errors]") {
    tf::Variable v(tf::constant({1.f, 2.f}), {.name = "v"});
    t::GradientDescentOptimizer opt(0.1);
    CHECK_THROWS_WITH(opt.apply_gradients({{tf::constant({1.f, 2.f, 3.f}), v}}),
                      Contains("var and grad do not have the same shape[2] [3]") &&
                          Contains("[Op:ResourceApplyGradientDescent]"));
    CHECK_THROWS_WITH(opt.apply_gradients({{tf::constant({1.0, 2.0}), v}}), Contains("float64"));
    const tf::IndexedSlices out_of_range{tf::constant({1.f}), tf::constant({5}), tf::Shape{2}};
    t::MomentumOptimizer mom(0.1, 0.9);
    CHECK_THROWS_WITH(mom.apply_gradients({{out_of_range, v}}),
                      Contains("Index 5 at offset 0 in indices is out of range") &&
                          Contains("[Op:ResourceSparseApplyMomentum]"));
    CHECK(values(v) == std::vector<float>{1.f, 2.f});
}

TEST_CASE("sparse updates sum duplicate indices and touch only listed rows (lazy)", "[train]") {
    tf::Variable v(tf::constant({1.f, 1.f, 1.f}), {.name = "v"});
    t::MomentumOptimizer opt(1.0, 0.5);
    opt.apply_gradients(
        {{tf::IndexedSlices{tf::constant({1.f, 2.f}), tf::constant({0, 0}), tf::Shape{3}}, v}});
    CHECK(values(v) == std::vector<float>{-2.f, 1.f, 1.f});
    opt.apply_gradients(
        {{tf::IndexedSlices{tf::constant({1.f}), tf::constant({2}), tf::Shape{3}}, v}});
    // Row 0's accumulator (3) is not decayed or applied: lazy.
    CHECK(values(v) == std::vector<float>{-2.f, 1.f, 0.f});
    CHECK(opt.get_slot(v, "momentum")->value().to_vector<float>() ==
          std::vector<float>{3.f, 0.f, 1.f});
}

TEST_CASE("minimize through embedding lookups gives IndexedSlices and the sparse rule", "[train]") {
    tf::Variable table(tf::constant(std::vector<float>{1, 1, 2, 2, 3, 3}, tf::Shape{3, 2}),
                       {.name = "table"});
    t::AdagradOptimizer opt(1.0, {.initial_accumulator_value = 1.0});
    opt.minimize([&] { return tf::reduce_sum(tf::gather(table.value(), tf::constant({2, 2}))); });
    const auto acc = opt.get_slot(table, "accumulator")->value().to_vector<float>();
    CHECK(acc == std::vector<float>{1, 1, 1, 1, 5, 5});  // (1 + 1)² added once: duplicates summed
    CHECK(values(table)[0] == 1.f);
    CHECK(values(table)[4] == Approx(3.0 - 2.0 / std::sqrt(5.0)));
}

TEST_CASE("gate_none updates during the backward walk and matches gate_op", "[train]") {
    auto run = [](t::GateGradients gate) {
        tf::random::set_seed(7);
        tf::Variable w1(tf::random::normal({4, 8}), {.name = "w1"});
        tf::Variable w2(tf::random::normal({8, 1}), {.name = "w2"});
        tf::Tensor x = tf::random::normal({16, 4});
        t::AdamOptimizer opt(0.01);
        for (int i = 0; i < 3; ++i) {
            opt.minimize(
                [&] {
                    return tf::reduce_mean(tf::square(tf::matmul(tf::tanh(tf::matmul(x, w1)), w2)));
                },
                {},
                {},
                gate);
        }
        auto out = w1.value().to_vector<float>();
        const auto b = w2.value().to_vector<float>();
        out.insert(out.end(), b.begin(), b.end());
        return out;
    };
    const auto op = run(t::GateGradients::gate_op);
    const auto none = run(t::GateGradients::gate_none);
    const auto graph = run(t::GateGradients::gate_graph);
    CHECK(op == none);
    CHECK(op == graph);
}

TEST_CASE("in-place updates keep earlier reads (copy-on-write)", "[train]") {
    tf::Variable v(tf::constant({1.f, 2.f}), {.name = "v"});
    const tf::Tensor before = v.value();
    t::GradientDescentOptimizer opt(1.0);
    opt.apply_gradients({{tf::constant({1.f, 1.f}), v}});
    CHECK(before.to_vector<float>() == std::vector<float>{1.f, 2.f});
    CHECK(values(v) == std::vector<float>{0.f, 1.f});
}

TEST_CASE("RMSProp's mean-square slot starts at 1 (TF1) and Keras' at 0", "[train]") {
    tf::Variable v(tf::constant({1.f}), {.name = "v"});
    t::RMSPropOptimizer tf1(0.1);
    tf1.apply_gradients({{tf::constant({0.f}), v}});
    CHECK(tf1.get_slot(v, "rms")->value().item<float>() == Approx(0.9));
    tf::keras::optimizers::RMSprop keras;
    keras.apply_gradients({{tf::constant({0.f}), v}});
    CHECK(keras.get_slot(v, "velocity")->value().item<float>() == 0.f);
    CHECK_FALSE(keras.get_slot(v, "momentum").has_value());
}

TEST_CASE("global step helpers", "[train]") {
    CHECK_FALSE(t::get_global_step().has_value());
    tf::Variable step = t::get_or_create_global_step();
    CHECK(step.name() == "global_step");
    CHECK(step.dtype() == tf::int64);
    CHECK_FALSE(step.trainable());
    CHECK(t::get_or_create_global_step() == step);
    CHECK(t::get_global_step().value() == step);
    CHECK_THROWS_WITH(t::create_global_step(), Contains("\"global_step\" already exists."));
    tf::Variable v(tf::constant({0.f}), {.name = "v"});
    t::GradientDescentOptimizer opt(0.1);
    opt.apply_gradients({{tf::constant({1.f}), v}}, step);
    CHECK(t::global_step(step) == 1);
}

TEST_CASE("ExponentialMovingAverage: dtype check, names, variables_to_restore", "[train][ema]") {
    tf::Variable w(tf::constant({1.f}), {.name = "w"});
    tf::Variable n(tf::constant(1), {.name = "n", .trainable = false});
    t::ExponentialMovingAverage ema(0.5, {.name = "foo"});
    CHECK_THROWS_WITH(ema.apply({n}), Contains("The variables must be half, float, or double"));
    CHECK(ema.average_name(w) == w.name() + "/foo");
    CHECK_FALSE(ema.average(w).has_value());
    ema.apply({w});
    w.assign(tf::constant({3.f}));
    ema.apply({w});
    CHECK(ema.average(w)->value().item<float>() == 2.f);
    const auto restore = ema.variables_to_restore();
    CHECK(restore.at(w.name() + "/foo") == w);
    CHECK(restore.at(n.name()) == n);
}
