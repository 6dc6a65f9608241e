// The non-optimizer cases of tf-training.json: clipping, learning-rate schedules, moving averages
// and compute_gradients.
#include <catch2/catch.hpp>

#include "train/training_golden.hpp"

namespace tf = tapeflow;
using tf::testing::check_close_json;
using tf::testing::json_dtype;
using tf::testing::json_gradient;
using tf::testing::json_tensor;
using tf::testing::training_cases;

namespace {

double rtol_of(const nlohmann::json& c) {
    return c.at("tolerance").at("rtol");
}
double atol_of(const nlohmann::json& c) {
    return c.at("tolerance").at("atol");
}

// A bound: a number (as a scalar tensor of t's dtype) or a nested list.
tf::Tensor bound(const nlohmann::json& j, tf::DType dtype) {
    return j.is_number() ? tf::constant(j.get<double>(), dtype) : json_tensor(j, dtype);
}

void check_gradient(const tf::Gradient& actual,
                    const nlohmann::json& expected,
                    const nlohmann::json& c) {
    if (expected.is_object() && expected.contains("indexed_slices")) {
        REQUIRE(actual.is_sparse());
        const auto& s = expected["indexed_slices"];
        check_close_json(actual.sparse().values, s.at("values"), rtol_of(c), atol_of(c), "values");
        CHECK(actual.sparse().indices.to_vector<int64_t>() ==
              s.at("indices").get<std::vector<int64_t>>());
        if (s.contains("dense_shape")) {
            CHECK(actual.sparse().dense_shape.dims() ==
                  s["dense_shape"].get<std::vector<int64_t>>());
        }
        return;
    }
    check_close_json(actual.dense(), expected, rtol_of(c), atol_of(c), "clipped");
}

}  // namespace

TEST_CASE("golden: clipping", "[train][golden][clip]") {
    for (const auto& c : training_cases("clip/")) {
        const std::string api = c.at("api");
        const auto& a = c.at("args");
        const tf::DType dtype = json_dtype(c);
        INFO(c.at("id").get<std::string>());
        if (api == "tf.clip_by_value") {
            const tf::Gradient t = json_gradient(a.at("t"), dtype);
            tf::Gradient out;
            if (a.at("clip_value_min").is_number() && a.at("clip_value_max").is_number()) {
                out = tf::clip_by_value(
                    t, a["clip_value_min"].get<double>(), a["clip_value_max"].get<double>());
            } else {
                out = tf::clip_by_value(
                    t, bound(a["clip_value_min"], dtype), bound(a["clip_value_max"], dtype));
            }
            check_gradient(out, c.at("expected"), c);
        } else if (api == "tf.clip_by_norm") {
            const tf::Tensor t = json_tensor(a.at("t"), dtype);
            const tf::Axes axes =
                a.contains("axes") ? tf::Axes(a["axes"].get<std::vector<int64_t>>()) : tf::Axes();
            check_close_json(tf::clip_by_norm(t, a.at("clip_norm").get<double>(), axes),
                             c.at("expected"),
                             rtol_of(c),
                             atol_of(c),
                             "clip_by_norm");
        } else if (api == "tf.clip_by_average_norm") {
            const tf::Tensor t = json_tensor(a.at("t"), dtype);
            check_close_json(tf::clip_by_average_norm(t, a.at("clip_norm").get<double>()),
                             c.at("expected"),
                             rtol_of(c),
                             atol_of(c),
                             "clip_by_average_norm");
        } else {
            REQUIRE(api == "tf.clip_by_global_norm");
            std::vector<tf::Gradient> list;
            for (const auto& t : a.at("t_list"))
                list.push_back(json_gradient(t, dtype));
            const auto [clipped, norm] =
                tf::clip_by_global_norm(list, a.at("clip_norm").get<double>());
            check_close_json(
                norm, c.at("expected").at("global_norm"), rtol_of(c), atol_of(c), "global_norm");
            for (std::size_t i = 0; i < list.size(); ++i)
                check_gradient(clipped[i], c["expected"]["list_clipped"][i], c);
        }
    }
}

TEST_CASE("golden: learning-rate decay", "[train][golden][lr]") {
    namespace t = tf::train;
    for (const auto& c : training_cases("lr/")) {
        const std::string api = c.at("api");
        const auto& a = c.at("args");
        INFO(c.at("id").get<std::string>());
        for (const auto& point : c.at("points")) {
            const auto step = point[0].get<int64_t>();
            const double expected = point[1].get<double>();
            double value = 0;
            double schedule = NAN;  // the schedule object, where there is one
            if (api.ends_with(".exponential_decay")) {
                value = t::exponential_decay(a["learning_rate"],
                                             step,
                                             a["decay_steps"],
                                             a["decay_rate"],
                                             a.value("staircase", false));
                schedule = t::ExponentialDecay{a["learning_rate"],
                                               a["decay_steps"],
                                               a["decay_rate"],
                                               a.value("staircase", false)}(step);
            } else if (api.ends_with(".piecewise_constant")) {
                value = t::piecewise_constant(step, a["boundaries"], a["values"]);
                schedule = t::PiecewiseConstantDecay{a["boundaries"], a["values"]}(step);
            } else if (api.ends_with(".polynomial_decay")) {
                value = t::polynomial_decay(a["learning_rate"],
                                            step,
                                            a["decay_steps"],
                                            a.value("end_learning_rate", 0.0001),
                                            a.value("power", 1.0),
                                            a.value("cycle", false));
                schedule = t::PolynomialDecay{a["learning_rate"],
                                              a["decay_steps"],
                                              a.value("end_learning_rate", 0.0001),
                                              a.value("power", 1.0),
                                              a.value("cycle", false)}(step);
            } else if (api.ends_with(".natural_exp_decay")) {
                value = t::natural_exp_decay(
                    a["learning_rate"], step, a["decay_steps"], a["decay_rate"]);
                schedule =
                    t::NaturalExpDecay{a["learning_rate"], a["decay_steps"], a["decay_rate"]}(step);
            } else if (api.ends_with(".inverse_time_decay")) {
                value = t::inverse_time_decay(
                    a["learning_rate"], step, a["decay_steps"], a["decay_rate"]);
                schedule = t::InverseTimeDecay{
                    a["learning_rate"], a["decay_steps"], a["decay_rate"]}(step);
            } else if (api.ends_with(".cosine_decay")) {
                value = t::cosine_decay(
                    a["learning_rate"], step, a["decay_steps"], a.value("alpha", 0.0));
                schedule = t::CosineDecay{
                    a["learning_rate"], a["decay_steps"], a.value("alpha", 0.0)}(step);
            } else if (api.ends_with(".cosine_decay_restarts")) {
                value = t::cosine_decay_restarts(a["learning_rate"],
                                                 step,
                                                 a["first_decay_steps"],
                                                 a["t_mul"],
                                                 a["m_mul"],
                                                 a["alpha"]);
                schedule = t::CosineDecayRestarts{a["learning_rate"],
                                                  a["first_decay_steps"],
                                                  a["t_mul"],
                                                  a["m_mul"],
                                                  a["alpha"]}(step);
            } else {
                REQUIRE(api.ends_with(".linear_cosine_decay"));
                value = t::linear_cosine_decay(a["learning_rate"],
                                               step,
                                               a["decay_steps"],
                                               a["num_periods"],
                                               a["alpha"],
                                               a["beta"]);
            }
            INFO("step " << step);
            CHECK(std::abs(value - expected) <= atol_of(c) + rtol_of(c) * std::abs(expected));
            if (!std::isnan(schedule)) CHECK(schedule == value);
        }
    }
}

TEST_CASE("golden: moving averages", "[train][golden][ema]") {
    namespace t = tf::train;
    for (const auto& c : training_cases("ema/")) {
        const std::string id = c.at("id");
        const auto& a = c.at("args");
        INFO(id);
        if (id.starts_with("ema/assign_moving_average")) {
            tf::Variable v(json_tensor(a.at("variable"), tf::float32));
            t::assign_moving_average(v,
                                     json_tensor(a.at("value"), tf::float32),
                                     a.at("decay"),
                                     id == "ema/assign_moving_average_debias");
            check_close_json(v.value(), c.at("expected"), rtol_of(c), atol_of(c), "variable");
        } else if (id == "ema/weighted_moving_average") {
            t::WeightedMovingAverage wma(a.at("decay"), tf::Shape{});
            std::size_t k = 0;
            for (const auto& s : a.at("sequence")) {
                const tf::Tensor r = wma.update(tf::constant(s.at("value").get<float>()),
                                                tf::constant(s.at("weight").get<float>()));
                check_close_json(r, c.at("expected")[k++], rtol_of(c), atol_of(c), "ratio");
            }
        } else if (id == "ema/control_deps_value") {
            tf::Variable v(tf::constant(a.at("shadow_init").get<float>()), {.name = "v"});
            t::ExponentialMovingAverage ema(a.at("decay"));
            ema.apply({v});  // creates the shadow from 10 and moves it towards 10
            v.assign(tf::constant(a.at("variable_value_at_apply").get<float>()));
            ema.apply({v});
            check_close_json(
                ema.average(v)->value(), c.at("expected"), rtol_of(c), atol_of(c), "shadow");
        } else {
            // Variables' shadows (plain tensors, the "add" entries, are refused in eager mode).
            std::optional<tf::Variable> num_updates;
            if (a.at("num_updates").is_number())
                num_updates = tf::Variable(tf::constant(a["num_updates"].get<int64_t>()));
            t::ExponentialMovingAverage ema(
                a.at("decay"), {.num_updates = num_updates, .zero_debias = a.at("zero_debias")});
            tf::Variable v0(tf::constant(a.at("var0_init").get<float>()), {.name = "v0"});
            tf::Variable v1(tf::constant(a.at("var1_init").get<float>()), {.name = "v1"});
            CHECK(ema.average_name(v0) == v0.name() + "/ExponentialMovingAverage");
            for (const char* when : {"after_apply_1", "after_apply_2"}) {
                ema.apply({v0, v1});
                const auto& e = c.at("expected").at(when);
                check_close_json(ema.average(v0)->value(),
                                 e.at("v0/ExponentialMovingAverage"),
                                 rtol_of(c),
                                 atol_of(c),
                                 "v0");
                check_close_json(ema.average(v1)->value(),
                                 e.at("v1/ExponentialMovingAverage"),
                                 rtol_of(c),
                                 atol_of(c),
                                 "v1");
            }
            CHECK(ema.average(v0)->name() == v0.name() + "/ExponentialMovingAverage");
        }
    }
}

TEST_CASE("golden: compute_gradients", "[train][golden]") {
    for (const auto& c : training_cases("gradient/")) {
        const auto& a = c.at("args");
        tf::Variable var0(json_tensor(a.at("var0"), tf::float32), {.name = "var0"});
        tf::Variable var1(json_tensor(a.at("var1"), tf::float32), {.name = "var1"});
        tf::train::GradientDescentOptimizer opt(1.0);
        const auto pairs = opt.compute_gradients([&] { return var0 + var1; },
                                                 std::vector<tf::Variable>{var0, var1});
        REQUIRE(pairs.size() == 2);
        check_close_json(
            pairs[0].gradient.dense(), c.at("expected").at("var0"), rtol_of(c), atol_of(c), "var0");
        check_close_json(
            pairs[1].gradient.dense(), c.at("expected").at("var1"), rtol_of(c), atol_of(c), "var1");
        CHECK(pairs[0].variable == var0);
    }
}
