// Golden cases from `tests/golden/ops.json` (schema in tests/golden/README.md): inputs, TF
// arguments, expected outputs, gradients for a given upstream, and Hessian-vector products.
// run_golden_case checks one case against a function that calls the tapeflow op.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include <tapeflow/tapeflow.hpp>

namespace tapeflow::testing {

/// An ARRAY of the golden schema: dtype, shape and the values flattened row-major (inf/nan kept).
struct GoldenArray {
    DType dtype = DType::float64;
    Shape shape;
    std::vector<double> values;
    Tensor tensor() const;  // in its own dtype
};

struct GoldenCase {
    std::string id;
    std::string op;
    std::string dtype;
    std::vector<std::string> input_names;
    std::vector<GoldenArray> inputs;
    nlohmann::json args;
    std::vector<GoldenArray> outputs;
    std::vector<std::optional<GoldenArray>> upstream;  // nullopt for int/bool outputs
    std::vector<std::optional<GoldenArray>> grads;     // nullopt: TensorFlow returns None
    double rtol = 0;
    double atol = 0;
    bool has_hvp = false;
    int hvp_wrt = 0;
    GoldenArray hvp_v;
    GoldenArray hvp_result;
};

/// Every case of ops.json whose "op" is `tf_op` (e.g. "tf.math.add"); REQUIREs at least one.
std::vector<GoldenCase> golden_cases(std::string_view tf_op);
/// Every case of ops.json.
const std::vector<GoldenCase>& all_golden_cases();

using GoldenFn = std::function<std::vector<Tensor>(const std::vector<Tensor>& inputs,
                                                   const nlohmann::json& args)>;

/// Checks forward outputs, the gradients (TF's tape.gradient(outputs, inputs, output_gradients =
/// upstream)) and, when present, the HVP through nested tapes, with the case's tolerances.
void run_golden_case(const GoldenCase& c, const GoldenFn& f);

/// CHECKs |actual - expected| <= atol + rtol |expected| element-wise (non-finite values must match,
/// integers and bools exactly), naming `what` and the first mismatching element.
void check_close(const Tensor& actual,
                 const GoldenArray& expected,
                 double rtol,
                 double atol,
                 const std::string& what);

}  // namespace tapeflow::testing
