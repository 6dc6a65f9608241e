// The Keras 3 family beyond the golden cases: validation messages, clipping options, weight decay
// exclusion, EMA, None gradients, iterations and the learning rate at iterations().
#include <catch2/catch.hpp>

#include <tapeflow/tapeflow.hpp>

namespace tf = tapeflow;
namespace ko = tapeflow::keras::optimizers;
using Catch::Contains;

TEST_CASE("Keras options are validated with Keras' messages", "[train][keras][errors]") {
    CHECK_THROWS_WITH(ko::SGD({.momentum = 1.5}),
                      Contains("`momentum` must be a float between [0, 1]"));
    CHECK_THROWS_WITH(
        ko::Adam({.clipnorm = 1.0, .clipvalue = 1.0}),
        Contains("Only one of `clipnorm`, `clipvalue` and `global_clipnorm` can be set"));
    CHECK_THROWS_WITH(ko::AdamW({.weight_decay = std::nullopt}),
                      Contains("Argument `weight_decay` must be a float"));
    CHECK_THROWS_WITH(ko::Adam({.use_ema = true, .ema_momentum = 2.0}),
                      Contains("`ema_momentum` must be in the range [0, 1]"));
    CHECK_THROWS_WITH(ko::Ftrl({.learning_rate_power = 1.0}),
                      Contains("`learning_rate_power` needs to be negative or zero"));
    CHECK_THROWS_AS(ko::Adam({.beta_1 = 1.0}), tf::errors::InvalidArgumentError);
    CHECK(ko::Adam().name() == "adam");
}

TEST_CASE("Keras drops None gradients and raises only when all are None", "[train][keras]") {
    tf::Variable a(tf::constant({1.f}), {.name = "a"});
    tf::Variable b(tf::constant({1.f}), {.name = "b"});
    ko::SGD opt({.learning_rate = 0.5});
    opt.apply_gradients({{tf::constant({1.f}), a}, {tf::Gradient(), b}});
    CHECK(a.value().item<float>() == 0.5f);
    CHECK(b.value().item<float>() == 1.f);
    CHECK_THROWS_WITH(opt.apply_gradients({{tf::Gradient(), a}}),
                      Contains("No gradients provided for any variable."));
    CHECK(opt.iterations() == 1);
}

TEST_CASE("Keras clipping: clipnorm per tensor, clipvalue, global_clipnorm", "[train][keras]") {
    tf::Variable a(tf::constant({0.f, 0.f}), {.name = "a"});
    tf::Variable b(tf::constant({0.f}), {.name = "b"});
    ko::SGD by_norm({.learning_rate = 1.0, .clipnorm = 1.0});
    by_norm.apply_gradients({{tf::constant({3.f, 4.f}), a}});
    CHECK(a.value().to_vector<float>() == std::vector<float>{-0.6f, -0.8f});
    ko::SGD by_value({.learning_rate = 1.0, .clipvalue = 0.5});
    by_value.apply_gradients({{tf::constant({3.f, -0.25f}), a}});
    CHECK(a.value().to_vector<float>() == std::vector<float>{-1.1f, -0.55f});
    ko::SGD global({.learning_rate = 1.0, .global_clipnorm = 2.5});
    global.apply_gradients({{tf::constant({3.f, 0.f}), a}, {tf::constant({4.f}), b}});
    CHECK(b.value().item<float>() == Approx(-2.f));
    // gate_none with a global norm still computes every gradient first: same result.
    tf::Variable c(tf::constant({3.f}), {.name = "c"});
    ko::SGD streamed({.learning_rate = 1.0, .global_clipnorm = 1.0});
    streamed.minimize(
        [&] { return tf::reduce_sum(c * c); }, {}, {}, tf::train::GateGradients::gate_none);
    CHECK(c.value().item<float>() == Approx(2.f));
}

TEST_CASE("Keras weight decay: var -= var·wd·lr before the update, exclusions", "[train][keras]") {
    tf::Variable a(tf::constant(2.f), {.name = "decayed"});
    tf::Variable b(tf::constant(2.f), {.name = "skip_me"});
    tf::Variable c(tf::constant(2.f), {.name = "excluded"});
    ko::SGD opt({.learning_rate = 1.0, .weight_decay = 0.004});
    opt.exclude_from_weight_decay({c}, {"skip"});
    for (int i = 0; i < 3; ++i) {
        opt.apply_gradients(
            {{tf::constant(0.f), a}, {tf::constant(0.f), b}, {tf::constant(0.f), c}});
    }
    CHECK(a.value().item<float>() == Approx(1.9760959));
    CHECK(b.value().item<float>() == 2.f);
    CHECK(c.value().item<float>() == 2.f);
}

TEST_CASE("Keras EMA: averages start at the variable, overwrite every N steps", "[train][keras]") {
    tf::Variable v(tf::constant(0.f), {.name = "v"});
    ko::SGD opt(
        {.learning_rate = 1.0, .use_ema = true, .ema_momentum = 0.5, .ema_overwrite_frequency = 2});
    opt.apply_gradients({{tf::constant(-2.f), v}});  // v = 2, average = 2 (first step: m = 0)
    CHECK(opt.get_slot(v, "average")->value().item<float>() == 2.f);
    opt.apply_gradients({{tf::constant(-2.f), v}});  // v = 4, average = 3, then v <- average
    CHECK(opt.get_slot(v, "average")->value().item<float>() == 3.f);
    CHECK(v.value().item<float>() == 3.f);
}

TEST_CASE("Keras schedules are evaluated at iterations (0 on the first step)", "[train][keras]") {
    tf::Variable v(tf::constant(0.f), {.name = "v"});
    std::vector<int64_t> steps;
    ko::Adam opt({.learning_rate = [&](int64_t s) {
        steps.push_back(s);
        return 0.1;
    }});
    opt.apply_gradients({{tf::constant(1.f), v}});
    opt.apply_gradients({{tf::constant(1.f), v}});
    CHECK(steps == std::vector<int64_t>{0, 1});
    CHECK(opt.iterations() == 2);
    std::vector<std::string> slots = opt.get_slot_names();
    CHECK(slots == std::vector<std::string>{"momentum", "velocity"});
}
