// Variables: naming and scopes, the registry, assignment and copy-on-write,
// scatter updates, TF1 get_variable / variable_scope, and every misuse error.
#include <map>
#include <random>
#include <set>

#include <catch2/catch.hpp>

#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;
using Catch::Contains;

namespace {
std::vector<double> vals(const tf::Tensor& t) {
    return t.to_vector<double>();
}
}  // namespace

TEST_CASE("variables have unique names, scoped by name_scope", "[variable]") {
    tf::Variable a(tf::constant(1.f), {.name = "w"});
    tf::Variable b(tf::constant(2.f), {.name = "w"});
    CHECK(a.name() == "w");
    CHECK(b.name() == "w_1");
    {
        auto outer = tf::name_scope("layer");
        auto inner = tf::name_scope("dense");
        tf::Variable c(tf::constant(3.f), {.name = "kernel"});
        CHECK(c.name() == "layer/dense/kernel");
        CHECK(tf::current_name_scope() == "layer/dense/");
    }
    CHECK(tf::current_name_scope().empty());
    tf::Variable d(tf::constant(3.f));
    CHECK(d.name().rfind("Variable", 0) == 0);
    CHECK(a.id() != b.id());
}

TEST_CASE("a freed variable frees its name", "[variable]") {
    { tf::Variable tmp(tf::constant(1.f), {.name = "scratch"}); }
    tf::Variable again(tf::constant(1.f), {.name = "scratch"});
    CHECK(again.name() == "scratch");
}

// NOTE [Variable names] keeps per-name counters; the names must stay the lowest free ones, as the
// probe over every live variable gave: a model of that rule checks a random create/free sequence
// whose explicit names collide with generated ones ("w_1" asked for while "w" counts up).
TEST_CASE("variable names are the lowest free suffix, also after frees and collisions",
          "[variable][naming]") {
    const std::vector<std::string> bases = {"nm", "nm_1", "nm_2", "nm_10", "nm_1_1", "other"};
    std::map<std::string, tf::Variable> live;
    std::set<std::string> model;
    auto expected = [&](const std::string& base) {
        if (!model.count(base)) return base;
        for (int k = 1;; ++k) {
            std::string name = base + "_" + std::to_string(k);
            if (!model.count(name)) return name;
        }
    };
    std::mt19937 rng(7);
    for (int step = 0; step < 3000; ++step) {
        if (!live.empty() && rng() % 3 == 0) {
            auto it = std::next(live.begin(), static_cast<long>(rng() % live.size()));
            model.erase(it->first);
            live.erase(it);
            continue;
        }
        const std::string& base = bases[rng() % bases.size()];
        const std::string want = expected(base);
        tf::Variable v(tf::constant(1.f), {.name = base});
        REQUIRE(v.name() == want);
        model.insert(want);
        live.emplace(want, v);
    }
}

TEST_CASE("many same-named variables get consecutive names", "[variable][naming]") {
    const tf::VariableOptions many{.name = "many"};
    std::vector<tf::Variable> vars;
    for (int i = 0; i < 5000; ++i)
        vars.emplace_back(tf::constant(1.f), many);
    CHECK(vars[0].name() == "many");
    CHECK(vars[4999].name() == "many_4999");
    vars.erase(vars.begin() + 17);  // frees "many_17": the next one gets it back
    tf::Variable again(tf::constant(1.f), {.name = "many"});
    CHECK(again.name() == "many_17");
    tf::Variable next(tf::constant(1.f), {.name = "many"});
    CHECK(next.name() == "many_5000");
}

TEST_CASE("the registry lists live variables in creation order", "[variable]") {
    const std::size_t before = tf::global_variables().size();
    tf::Variable x(tf::constant(1.f), {.name = "reg_x"});
    tf::Variable y(tf::constant(1.f), {.name = "reg_y", .trainable = false});
    auto all = tf::global_variables();
    REQUIRE(all.size() == before + 2);
    CHECK(all[before] == x);
    CHECK(all[before + 1] == y);
    auto trainable = tf::trainable_variables();
    CHECK(std::find(trainable.begin(), trainable.end(), x) != trainable.end());
    CHECK(std::find(trainable.begin(), trainable.end(), y) == trainable.end());
}

TEST_CASE("metadata, reads and implicit conversion", "[variable]") {
    tf::Variable w(tf::constant({{1.0, 2.0}, {3.0, 4.0}}), {.name = "m"});
    CHECK(w.shape() == tf::Shape{2, 2});
    CHECK(w.dtype() == tf::float64);
    CHECK(w.device() == tf::Device::cpu());
    CHECK(w.trainable());
    CHECK(vals(w.read_value()) == std::vector<double>{1, 2, 3, 4});
    auto y = tf::matmul(tf::constant({{1.0, 0.0}}), w);  // implicit read
    CHECK(vals(y) == std::vector<double>{1, 2});
    tf::Variable copy = w;  // a handle to the same variable
    copy.assign(tf::zeros({2, 2}, tf::float64));
    CHECK(vals(w.value()) == std::vector<double>(4, 0.0));
}

TEST_CASE("the initial value is copied", "[variable]") {
    auto init = tf::constant({1.f, 2.f});
    tf::Variable v(init);
    v.assign(tf::constant({5.f, 6.f}));
    CHECK(init.to_vector<float>() == std::vector<float>{1, 2});
}

TEST_CASE("assign writes in place; assign_add and assign_sub keep their result", "[variable]") {
    tf::Variable v(tf::constant({1.0, 2.0}));
    v.assign_add(tf::constant({10.0, 10.0}));
    CHECK(vals(v.value()) == std::vector<double>{11, 12});
    v.assign_sub(tf::constant(1.0));  // a broadcast delta
    CHECK(vals(v.value()) == std::vector<double>{10, 11});
    const void* before = v.value().raw_data();
    v.assign(tf::constant({0.0, 1.0}));
    CHECK(vals(v.value()) == std::vector<double>{0, 1});
    CHECK(v.value().raw_data() == before);  // no read was kept, so the buffer was reused
    // assign_add's sum becomes the value: nothing is written into the buffer a reader may have
    // just released on another thread (a race TSan found with the global step).
    v.assign_add(tf::constant({1.0, 1.0}));
    CHECK(vals(v.value()) == std::vector<double>{1, 2});
}

TEST_CASE("a tensor read earlier keeps its value (copy-on-write)", "[variable]") {
    tf::Variable v(tf::constant({1.0, 2.0}));
    tf::Tensor old = v.value();
    v.assign(tf::constant({7.0, 8.0}));
    CHECK(vals(old) == std::vector<double>{1, 2});
    CHECK(vals(v.value()) == std::vector<double>{7, 8});
    tf::Tensor old2 = v.value();
    v.scatter_update({tf::constant({9.0}), tf::constant({0}), {2}});
    CHECK(vals(old2) == std::vector<double>{7, 8});
}

TEST_CASE("assignments check shape and dtype", "[variable][errors]") {
    tf::Variable v(tf::constant({1.f, 2.f}), {.name = "checked"});
    CHECK_THROWS_AS(v.assign(tf::constant({1.f, 2.f, 3.f})), tf::errors::InvalidArgumentError);
    CHECK_THROWS_WITH(v.assign(tf::constant({1.0, 2.0})),
                      Contains("checked") && Contains("float32") && Contains("float64"));
    CHECK_THROWS_AS(v.assign_add(tf::constant({1, 2})), tf::errors::InvalidArgumentError);
    CHECK_THROWS_AS(v.assign_sub(tf::constant({{1.f, 2.f}, {3.f, 4.f}})),
                    tf::errors::InvalidArgumentError);
    CHECK_THROWS_AS(v.assign(tf::Tensor()), tf::errors::InvalidArgumentError);
    CHECK(vals(v.value()) == std::vector<double>{1, 2});  // failed updates change nothing
}

TEST_CASE("scatter updates touch only the named rows", "[variable]") {
    tf::Variable v(tf::constant({{1.0, 1.0}, {2.0, 2.0}, {3.0, 3.0}}));
    v.scatter_add({tf::constant({{10.0, 10.0}, {1.0, 1.0}}), tf::constant({2, 2}), {3, 2}});
    CHECK(vals(v.value()) == std::vector<double>{1, 1, 2, 2, 14, 14});  // duplicates add up
    v.scatter_sub({tf::constant({{1.0, 2.0}}), tf::constant({0}), {3, 2}});
    CHECK(vals(v.value()) == std::vector<double>{0, -1, 2, 2, 14, 14});
    v.scatter_update(
        {tf::constant({{5.0, 6.0}}), tf::constant(std::vector<int64_t>{1}, {1}), {3, 2}});
    CHECK(vals(v.value()) == std::vector<double>{0, -1, 5, 6, 14, 14});
}

TEST_CASE("scatter updates reject bad slices", "[variable][errors]") {
    tf::Variable v(tf::constant({{1.0}, {2.0}}), {.name = "s"});
    CHECK_THROWS_AS(v.scatter_add({tf::constant({{1.0}}), tf::constant({2}), {2, 1}}),
                    tf::errors::InvalidArgumentError);
    CHECK_THROWS_WITH(v.scatter_add({tf::constant({{1.0}}), tf::constant({-1}), {2, 1}}),
                      Contains("index -1 is not in [0, 2)"));
    CHECK_THROWS_AS(v.scatter_add({tf::constant({{1.f}}), tf::constant({0}), {2, 1}}),
                    tf::errors::InvalidArgumentError);
    CHECK_THROWS_AS(v.scatter_add({tf::constant({{1.0, 2.0}}), tf::constant({0}), {2, 1}}),
                    tf::errors::InvalidArgumentError);
    CHECK(vals(v.value()) == std::vector<double>{1, 2});
}

TEST_CASE("an empty handle raises instead of crashing", "[variable][errors]") {
    tf::Variable empty;
    CHECK_FALSE(empty.defined());
    CHECK_THROWS_AS(empty.name(), tf::errors::FailedPreconditionError);
    CHECK_THROWS_AS(empty.value(), tf::errors::FailedPreconditionError);
    CHECK_THROWS_AS(tf::Variable(tf::Tensor()), tf::errors::InvalidArgumentError);
}

TEST_CASE("get_variable and variable_scope follow TF1", "[variable][tf1]") {
    tf::Variable w;
    {
        auto scope = tf::variable_scope("tf1_layer");
        w = tf::get_variable("w", {.shape = tf::Shape{3, 4}});
        CHECK(w.name() == "tf1_layer/w");
        CHECK(w.shape() == tf::Shape{3, 4});
        auto values = vals(w.value());
        const double limit = std::sqrt(6.0 / 7.0);  // glorot_uniform
        for (double x : values)
            CHECK(std::abs(x) <= limit);
        CHECK_THROWS_WITH(tf::get_variable("w", {.shape = tf::Shape{3, 4}}),
                          Contains("Variable tf1_layer/w already exists"));
    }
    {
        auto scope = tf::variable_scope("tf1_layer", true);
        auto again = tf::get_variable("w");
        CHECK(again == w);
        CHECK_THROWS_AS(tf::get_variable("w", {.shape = tf::Shape{2}}),
                        tf::errors::InvalidArgumentError);
        CHECK_THROWS_WITH(tf::get_variable("missing", {.shape = tf::Shape{1}}),
                          Contains("does not exist"));
        auto nested = tf::variable_scope("inner");  // reuse is inherited
        CHECK_THROWS_AS(tf::get_variable("x", {.shape = tf::Shape{1}}),
                        tf::errors::InvalidArgumentError);
    }
    {
        auto scope = tf::variable_scope("tf1_init");
        auto from_tensor = tf::get_variable("t", {.initializer = tf::constant({1.f, 2.f})});
        CHECK(from_tensor.shape() == tf::Shape{2});
        auto from_fn = tf::get_variable(
            "f",
            {.shape = tf::Shape{2}, .dtype = tf::float64, .initializer = [](const tf::Shape& s) {
                 return tf::ones(s, tf::float64);
             }});
        CHECK(vals(from_fn.value()) == std::vector<double>{1, 1});
        auto frozen = tf::get_variable("n", {.shape = tf::Shape{1}, .trainable = false});
        CHECK_FALSE(frozen.trainable());
        CHECK_THROWS_AS(tf::get_variable("noshape"), tf::errors::InvalidArgumentError);
        // TensorFlow: get_variable("i", initializer=tf.constant(2)) is an int32 variable
        auto from_int = tf::get_variable("i", {.initializer = tf::constant(2)});
        CHECK(from_int.dtype() == tf::int32);
        CHECK(from_int.value().item<int>() == 2);
        CHECK(tf::get_variable("d", {.dtype = tf::float64, .initializer = tf::constant(2.0)})
                  .dtype() == tf::float64);
        CHECK_THROWS_WITH(
            tf::get_variable("bad", {.dtype = tf::float64, .initializer = tf::constant(2)}),
            Contains("Initializer type 'int32' and explicit dtype 'float64' don't match"));
    }
}
