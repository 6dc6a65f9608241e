// Loading tf-training.json and running its optimizer cases (see training_golden.hpp).
#include "train/training_golden.hpp"

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>

#include <catch2/catch.hpp>

namespace tapeflow::testing {
namespace {

const nlohmann::json& all_cases() {
    static const nlohmann::json cases = [] {
        const char* env = std::getenv("TAPEFLOW_GOLDEN_DIR");
        const std::string path =
            std::string(env != nullptr ? env : "../tests/golden") + "/tf-training.json";
        std::ifstream file(path);
        if (!file)
            throw std::runtime_error("cannot open golden file " + path +
                                     " (set TAPEFLOW_GOLDEN_DIR)");
        return nlohmann::json::parse(file).at("cases");
    }();
    return cases;
}

double number(const nlohmann::json& v) {
    if (v.is_string()) {
        const std::string s = v.get<std::string>();
        if (s == "inf") return INFINITY;
        if (s == "-inf") return -INFINITY;
        return NAN;
    }
    return v.get<double>();
}

void flatten(const nlohmann::json& v,
             std::vector<double>& out,
             std::vector<int64_t>& shape,
             std::size_t depth) {
    if (!v.is_array()) {
        out.push_back(number(v));
        return;
    }
    if (shape.size() == depth) shape.push_back(static_cast<int64_t>(v.size()));
    for (const auto& e : v)
        flatten(e, out, shape, depth + 1);
}

double hp(const nlohmann::json& h, const char* key, double fallback) {
    return h.contains(key) && h[key].is_number() ? h[key].get<double>() : fallback;
}

}  // namespace

std::vector<nlohmann::json> training_cases(std::string_view prefix) {
    std::vector<nlohmann::json> out;
    for (const auto& c : all_cases()) {
        if (c.at("id").get<std::string>().starts_with(prefix)) out.push_back(c);
    }
    REQUIRE_FALSE(out.empty());
    return out;
}

DType json_dtype(const nlohmann::json& c) {
    return c.value("dtype", std::string("float32")) == "float64" ? DType::float64 : DType::float32;
}

Tensor json_tensor(const nlohmann::json& j, DType dtype) {
    std::vector<double> values;
    std::vector<int64_t> shape;
    flatten(j, values, shape, 0);
    return constant(values, Shape(shape), dtype);
}

Gradient json_gradient(const nlohmann::json& j, DType dtype) {
    if (j.is_object() && j.contains("indexed_slices")) {
        const auto& s = j["indexed_slices"];
        const auto indices = s.at("indices").get<std::vector<int32_t>>();
        std::vector<int64_t> dense = s.value("dense_shape", std::vector<int64_t>{});
        return IndexedSlices{json_tensor(s.at("values"), dtype),
                             constant(indices, Shape{static_cast<int64_t>(indices.size())}),
                             Shape(dense)};
    }
    return json_tensor(j, dtype);
}

void check_close_json(const Tensor& actual,
                      const nlohmann::json& expected,
                      double rtol,
                      double atol,
                      const std::string& what) {
    const Tensor e = json_tensor(expected, DType::float64);
    INFO(what << ": actual " << actual.str() << " expected " << e.str());
    REQUIRE(actual.num_elements() == e.num_elements());
    const auto a = actual.to_vector<double>();
    const auto x = e.to_vector<double>();
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (!std::isfinite(x[i])) {
            CHECK((std::isnan(x[i]) ? std::isnan(a[i]) : a[i] == x[i]));
            continue;
        }
        INFO("element " << i);
        CHECK(std::abs(a[i] - x[i]) <= atol + rtol * std::abs(x[i]));
    }
}

std::unique_ptr<train::Optimizer> make_optimizer(const nlohmann::json& c) {
    namespace t = tapeflow::train;
    const std::string api = c.at("api");
    const auto& h = c.at("hyperparameters");
    const double lr = hp(h, "learning_rate", 0.001);
    if (api == "tf.compat.v1.train.GradientDescentOptimizer")
        return std::make_unique<t::GradientDescentOptimizer>(lr);
    if (api == "tf.compat.v1.train.MomentumOptimizer") {
        return std::make_unique<t::MomentumOptimizer>(
            lr,
            hp(h, "momentum", 0.0),
            t::MomentumOptimizerOptions{.use_nesterov = h.value("use_nesterov", false)});
    }
    if (api == "tf.compat.v1.train.AdagradOptimizer") {
        return std::make_unique<t::AdagradOptimizer>(
            lr,
            t::AdagradOptimizerOptions{.initial_accumulator_value =
                                           hp(h, "initial_accumulator_value", 0.1)});
    }
    if (api == "tf.compat.v1.train.AdadeltaOptimizer") {
        return std::make_unique<t::AdadeltaOptimizer>(
            lr,
            t::AdadeltaOptimizerOptions{.rho = hp(h, "rho", 0.95),
                                        .epsilon = hp(h, "epsilon", 1e-8)});
    }
    if (api == "tf.compat.v1.train.AdamOptimizer") {
        return std::make_unique<t::AdamOptimizer>(
            lr,
            t::AdamOptimizerOptions{.beta1 = hp(h, "beta1", 0.9),
                                    .beta2 = hp(h, "beta2", 0.999),
                                    .epsilon = hp(h, "epsilon", 1e-8)});
    }
    if (api == "tf.compat.v1.train.FtrlOptimizer") {
        return std::make_unique<t::FtrlOptimizer>(
            lr,
            t::FtrlOptimizerOptions{
                .learning_rate_power = hp(h, "learning_rate_power", -0.5),
                .initial_accumulator_value = hp(h, "initial_accumulator_value", 0.1),
                .l1_regularization_strength = hp(h, "l1_regularization_strength", 0.0),
                .l2_regularization_strength = hp(h, "l2_regularization_strength", 0.0),
                .l2_shrinkage_regularization_strength =
                    hp(h, "l2_shrinkage_regularization_strength", 0.0),
                .beta = hp(h, "beta", 0.0)});
    }
    if (api == "tf.compat.v1.train.RMSPropOptimizer") {
        return std::make_unique<t::RMSPropOptimizer>(
            lr,
            t::RMSPropOptimizerOptions{.decay = hp(h, "decay", 0.9),
                                       .momentum = hp(h, "momentum", 0.0),
                                       .epsilon = hp(h, "epsilon", 1e-10),
                                       .centered = h.value("centered", false)});
    }
    if (api == "tf.compat.v1.train.ProximalAdagradOptimizer") {
        return std::make_unique<t::ProximalAdagradOptimizer>(
            lr,
            t::ProximalAdagradOptimizerOptions{
                .initial_accumulator_value = hp(h, "initial_accumulator_value", 0.1),
                .l1_regularization_strength = hp(h, "l1_regularization_strength", 0.0),
                .l2_regularization_strength = hp(h, "l2_regularization_strength", 0.0)});
    }
    if (api == "tf.compat.v1.train.ProximalGradientDescentOptimizer") {
        return std::make_unique<t::ProximalGradientDescentOptimizer>(
            lr,
            t::ProximalGradientDescentOptimizerOptions{
                .l1_regularization_strength = hp(h, "l1_regularization_strength", 0.0),
                .l2_regularization_strength = hp(h, "l2_regularization_strength", 0.0)});
    }
    return make_keras_optimizer(c);
}

void run_optimizer_case(const nlohmann::json& c) {
    const std::string id = c.at("id");
    INFO("case " << id);
    const DType dtype = json_dtype(c);
    const double rtol = c.at("tolerance").at("rtol");
    const double atol = c.at("tolerance").at("atol");
    auto opt = make_optimizer(c);
    REQUIRE(opt != nullptr);
    std::vector<Variable> vars;
    std::map<std::string, Variable> by_name;
    for (const auto& v : c.at("variables")) {
        vars.emplace_back(json_tensor(v.at("init"), dtype), VariableOptions{.name = v.at("name")});
        by_name[v.at("name")] = vars.back();
    }
    const int steps = c.at("steps");
    for (int step = 0; step < steps; ++step) {
        std::vector<train::GradAndVar> pairs;
        for (std::size_t i = 0; i < vars.size(); ++i) {
            const auto& v = c.at("variables")[i];
            const auto& g = v.contains("grads_per_step")
                                ? v["grads_per_step"][static_cast<std::size_t>(step)]
                                : v.at("grad");
            pairs.push_back({json_gradient(g, dtype), vars[i]});
        }
        opt->apply_gradients(pairs);
        const nlohmann::json checkpoints = c.value("checkpoints", nlohmann::json::array());
        for (const auto& cp : checkpoints) {
            if (cp.at("after_step").get<int>() != step + 1) continue;
            const nlohmann::json cp_vars = cp.value("variables", nlohmann::json::object());
            const nlohmann::json cp_slots = cp.value("slots", nlohmann::json::object());
            const nlohmann::json cp_scalars = cp.value("scalars", nlohmann::json::object());
            for (const auto& [name, value] : cp_vars.items()) {
                check_close_json(by_name.at(name).value(),
                                 value,
                                 rtol,
                                 atol,
                                 fmt::format("{} after step {}", name, step + 1));
            }
            for (const auto& [name, slots] : cp_slots.items()) {
                for (const auto& [slot, value] : slots.items()) {
                    auto s = opt->get_slot(by_name.at(name), slot);
                    REQUIRE(s.has_value());
                    check_close_json(
                        s->value(),
                        value,
                        rtol,
                        atol,
                        fmt::format("slot {} of {} after step {}", slot, name, step + 1));
                }
            }
            for (const auto& [name, value] : cp_scalars.items()) {
                bool found = false;
                for (const Variable& v : opt->variables()) {
                    if (!v.name().ends_with("/" + name)) continue;
                    found = true;
                    check_close_json(v.value(),
                                     value,
                                     rtol,
                                     atol,
                                     fmt::format("{} after step {}", name, step + 1));
                }
                CHECK(found);
            }
        }
    }
    for (std::size_t i = 0; i < vars.size(); ++i) {
        const auto& v = c.at("variables")[i];
        if (v.contains("expected"))
            check_close_json(vars[i].value(), v["expected"], rtol, atol, v.at("name"));
        const nlohmann::json expected_slots = v.value("expected_slots", nlohmann::json::object());
        for (const auto& [slot, value] : expected_slots.items()) {
            auto s = opt->get_slot(vars[i], slot);
            REQUIRE(s.has_value());
            check_close_json(
                s->value(), value, rtol, atol, fmt::format("slot {} of {}", slot, vars[i].name()));
        }
    }
}

}  // namespace tapeflow::testing
