// Loading ops.json and running its cases (see golden.hpp).
#include "support/golden.hpp"

#include <cmath>
#include <cstdlib>
#include <fstream>

#include <catch2/catch.hpp>

namespace tapeflow::testing {
namespace {

std::string golden_dir() {
    const char* env = std::getenv("TAPEFLOW_GOLDEN_DIR");
    return env != nullptr ? env : "../tests/golden";
}

double number(const nlohmann::json& v) {
    if (v.is_string()) {
        const std::string s = v.get<std::string>();
        if (s == "inf") return INFINITY;
        if (s == "-inf") return -INFINITY;
        return NAN;
    }
    if (v.is_boolean()) return v.get<bool>() ? 1.0 : 0.0;
    return v.get<double>();
}

void flatten(const nlohmann::json& v, std::vector<double>& out) {
    if (v.is_array()) {
        for (const auto& e : v)
            flatten(e, out);
    } else {
        out.push_back(number(v));
    }
}

GoldenArray parse_array(const nlohmann::json& j) {
    GoldenArray a;
    a.dtype = parse_dtype(j.at("dtype").get<std::string>());
    a.shape = Shape(j.at("shape").get<std::vector<int64_t>>());
    flatten(j.at("data"), a.values);
    return a;
}

std::vector<GoldenCase> load() {
    const std::string path = golden_dir() + "/ops.json";
    std::ifstream file(path);
    if (!file)
        throw std::runtime_error("cannot open golden file " + path + " (set TAPEFLOW_GOLDEN_DIR)");
    const nlohmann::json doc = nlohmann::json::parse(file);
    std::vector<GoldenCase> cases;
    for (const auto& j : doc) {
        GoldenCase c;
        c.id = j.at("id").get<std::string>();
        c.op = j.at("op").get<std::string>();
        c.dtype = j.at("dtype").get<std::string>();
        for (const auto& in : j.at("inputs")) {
            c.input_names.push_back(in.at("name").get<std::string>());
            c.inputs.push_back(parse_array(in));
        }
        c.args = j.at("args");
        for (const auto& o : j.at("outputs"))
            c.outputs.push_back(parse_array(o));
        for (const auto& u : j.at("upstream")) {
            c.upstream.push_back(u.is_null() ? std::nullopt : std::optional(parse_array(u)));
        }
        for (const auto& g : j.at("grads")) {
            c.grads.push_back(g.is_string() ? std::nullopt : std::optional(parse_array(g)));
        }
        c.rtol = j.at("tolerance").at("rtol").get<double>();
        c.atol = j.at("tolerance").at("atol").get<double>();
        if (j.contains("hvp")) {
            c.has_hvp = true;
            c.hvp_wrt = j.at("hvp").at("wrt_index").get<int>();
            c.hvp_v = parse_array(j.at("hvp").at("v"));
            c.hvp_result = parse_array(j.at("hvp").at("result"));
        }
        cases.push_back(std::move(c));
    }
    return cases;
}

// The float outputs as targets, each weighted by the case's upstream gradient.
void weighted_targets(const GoldenCase& c,
                      const std::vector<Tensor>& outs,
                      std::vector<Tensor>& targets,
                      GradientOptions& options) {
    for (std::size_t k = 0; k < outs.size(); ++k) {
        if (!c.upstream[k]) continue;
        targets.push_back(outs[k]);
        options.output_gradients.push_back(c.upstream[k]->tensor());
    }
}

}  // namespace

Tensor GoldenArray::tensor() const {
    return constant(values, shape, dtype);
}

const std::vector<GoldenCase>& all_golden_cases() {
    static const std::vector<GoldenCase> cases = load();
    return cases;
}

std::vector<GoldenCase> golden_cases(std::string_view tf_op) {
    std::vector<GoldenCase> out;
    for (const GoldenCase& c : all_golden_cases()) {
        if (c.op == tf_op) out.push_back(c);
    }
    INFO("golden op " << tf_op);
    REQUIRE_FALSE(out.empty());
    return out;
}

void check_close(const Tensor& actual,
                 const GoldenArray& expected,
                 double rtol,
                 double atol,
                 const std::string& what) {
    INFO(what);
    REQUIRE(actual.defined());
    CHECK(actual.shape() == expected.shape);
    if (actual.shape() != expected.shape) return;
    const std::vector<double> got = actual.to_vector<double>();
    const bool exact = !is_floating(expected.dtype);
    for (std::size_t i = 0; i < got.size(); ++i) {
        const double e = expected.values[i];
        const double a = got[i];
        bool ok = false;
        if (std::isnan(e)) {
            ok = std::isnan(a);
        } else if (std::isinf(e) || exact) {
            ok = a == e;
        } else {
            ok = std::abs(a - e) <= atol + rtol * std::abs(e);
        }
        if (!ok) {
            FAIL_CHECK(what << ": element " << i << " is " << a << ", expected " << e);
            return;
        }
    }
}

void run_golden_case(const GoldenCase& c, const GoldenFn& f) {
    INFO("golden case " << c.id);
    std::vector<Tensor> inputs;
    for (const GoldenArray& a : c.inputs)
        inputs.push_back(a.tensor());

    const std::vector<Tensor> outputs = f(inputs, c.args);
    REQUIRE(outputs.size() == c.outputs.size());
    for (std::size_t k = 0; k < outputs.size(); ++k) {
        check_close(
            outputs[k], c.outputs[k], c.rtol, c.atol, c.id + ": output " + std::to_string(k));
    }

    // Gradients of sum_k <outputs[k], upstream[k]> w.r.t. every input.
    std::vector<Tensor> float_inputs;
    for (const Tensor& t : inputs) {
        if (is_floating(t.dtype())) float_inputs.push_back(t);
    }
    {
        GradientTape tape;
        tape.watch(float_inputs);
        std::vector<Tensor> targets;
        GradientOptions options;
        weighted_targets(c, f(inputs, c.args), targets, options);
        if (!targets.empty()) {
            const std::vector<Gradient> grads = tape.gradient(targets, inputs, options);
            for (std::size_t i = 0; i < inputs.size(); ++i) {
                const std::string what = c.id + ": gradient of input " + c.input_names[i];
                if (!c.grads[i]) {
                    INFO(what);
                    CHECK_FALSE(grads[i].defined());
                } else {
                    INFO(what);
                    REQUIRE(grads[i].defined());
                    check_close(grads[i].dense(), *c.grads[i], c.rtol, c.atol, what);
                }
            }
        }
    }

    if (c.has_hvp) {
        const Tensor& x = inputs[static_cast<std::size_t>(c.hvp_wrt)];
        GradientTape outer;
        outer.watch(x);
        Tensor g;
        {
            GradientTape inner;
            inner.watch(float_inputs);
            std::vector<Tensor> targets;
            GradientOptions options;
            weighted_targets(c, f(inputs, c.args), targets, options);
            g = inner.gradient(targets, std::vector<Tensor>{x}, options)[0].dense();
        }
        Tensor hvp;
        if (g.defined()) {
            GradientOptions options;
            options.output_gradients = {c.hvp_v.tensor()};
            options.unconnected_gradients = UnconnectedGradients::zero;
            hvp = outer.gradient(g, x, options).dense();
        } else {
            hvp = zeros_like(x);
        }
        check_close(hvp, c.hvp_result, c.rtol, c.atol, c.id + ": Hessian-vector product");
    }
}

}  // namespace tapeflow::testing
