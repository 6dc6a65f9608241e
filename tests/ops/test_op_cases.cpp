// The generic suites over the op-case table (op_cases.cpp): every row runs on the CPU in each of
// its dtypes, its 16/32-bit float results agree with the float64 run on the same (rounded) inputs,
// and every row with `grad` passes the float64 finite-difference check of its gradients.
#include <algorithm>
#include <string>

#include <catch2/catch.hpp>

#include "ops/op_cases.hpp"
#include "support/gradcheck.hpp"

namespace tf = tapeflow;
using tf::Tensor;
using namespace tf::op_cases;

namespace {

bool runs_in(const Case& c, tf::DType d) {
    return std::find(c.dtypes.begin(), c.dtypes.end(), d) != c.dtypes.end();
}

// How far one op's result in `d` may be from the float64 result (relative to max(1, |y|)):
// a few units of the dtype's last place, more for results summed over many elements.
double precision(tf::DType d) {
    switch (d) {
        case tf::DType::float32:
            return 1e-4;
        case tf::DType::float16:
            return 1e-2;
        case tf::DType::bfloat16:
            return 6e-2;
        default:
            return 0;
    }
}

// sum_k sum(y_k * w_k) over the float64 outputs, with fixed weights (a cosine ramp) so that every
// output element gets its own upstream value; undefined when no output is float64. With
// `magnitude`, sum |y_k * w_k| instead: the scale of the contraction's rounding errors.
Tensor contract(const std::vector<Tensor>& ys, bool magnitude = false) {
    Tensor total;
    for (const Tensor& y : ys) {
        if (y.dtype() != tf::float64) continue;
        const double n = static_cast<double>(y.num_elements());
        const Tensor w = tf::reshape(tf::cos(tf::range(1, 1 + n, 1, tf::float64)), y.shape());
        const Tensor term = tf::reduce_sum(magnitude ? tf::abs(y * w) : y * w);
        total = total.defined() ? total + term : term;
    }
    return total;
}

}  // namespace

TEST_CASE("every op-case row runs on the CPU; its low-precision floats agree with float64",
          "[op_cases]") {
    std::string failures;
    int ran = 0;
    for (const Case& c : all_cases()) {
        for (tf::DType d : c.dtypes) {
            const std::string name = c.name + "/" + std::string(tf::dtype_name(d));
            try {
                const std::vector<Tensor> x = make_inputs(c, d);
                const std::vector<Tensor> y = c.f(x);
                ++ran;
                for (const Tensor& t : y) {
                    if (!t.defined() || !t.device().is_cpu())
                        failures += "\n  " + name + ": bad output";
                }
                if (!is_float(d) || d == tf::float64 || !runs_in(c, tf::float64)) continue;
                std::vector<Tensor> x64;
                for (const Tensor& t : x)
                    x64.push_back(t.dtype() == d ? t.cast(tf::float64) : t);
                const std::vector<Tensor> ref = c.f(x64);
                if (ref.size() != y.size()) {
                    failures += "\n  " + name + ": output count differs from float64";
                    continue;
                }
                for (std::size_t i = 0; i < y.size(); ++i) {
                    if (!is_float(y[i].dtype())) continue;
                    // The float64 result rounded to the output's dtype: overflows to inf alike.
                    const Tensor expected = ref[i].cast(y[i].dtype()).cast(tf::float64);
                    const std::string diff =
                        first_difference(expected, y[i].cast(tf::float64), precision(d));
                    if (!diff.empty()) {
                        failures += "\n  " + name + ": output " + std::to_string(i) + ": " + diff;
                    }
                }
            } catch (const std::exception& e) {
                failures += "\n  " + name + ": threw " + e.what();
            }
        }
    }
    INFO("op-case rows that fail on the CPU:" << failures);
    CHECK(failures.empty());
    CHECK(ran > 500);
}

TEST_CASE("every differentiable op-case row passes the float64 finite-difference check",
          "[op_cases][gradcheck]") {
    for (const Case& c : all_cases()) {
        if (!c.grad || !runs_in(c, tf::float64)) continue;
        const std::vector<Tensor> x = make_inputs(c, tf::float64);
        std::vector<std::size_t> at;  // the float64 inputs: the sources
        std::vector<Tensor> sources;
        for (std::size_t i = 0; i < x.size(); ++i) {
            if (x[i].dtype() != tf::float64) continue;
            at.push_back(i);
            sources.push_back(x[i]);
        }
        const Tensor scale = contract(c.f(x), true);
        if (sources.empty() || !scale.defined()) continue;
        // Central differences lose about 1e-10 of the contraction's scale to rounding (steps of
        // 1e-6); rows with large outputs (products) get an absolute tolerance to match.
        const double atol = 1e-7 + 1e-8 * scale.item<double>();
        INFO("op-case row " << c.name);
        tf::testing::check_gradients(
            [&](const std::vector<Tensor>& s) {
                std::vector<Tensor> all = x;
                for (std::size_t k = 0; k < at.size(); ++k)
                    all[at[k]] = s[k];
                return contract(c.f(all));
            },
            sources,
            1e-5,
            atol);
    }
}
