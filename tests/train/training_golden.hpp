// Golden cases from `tests/golden/tf-training.json` (schema in its README): optimizers (dense and
// IndexedSlices), clipping, learning-rate schedules and moving averages, as TensorFlow's and Keras'
// own unit tests assert them.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include <tapeflow/tapeflow.hpp>

namespace tapeflow::testing {

/// Every case of tf-training.json whose id starts with `prefix` ("" = all).
std::vector<nlohmann::json> training_cases(std::string_view prefix = "");

/// A (nested) JSON list as a tensor: the shape follows the nesting; "nan"/"inf" strings allowed.
Tensor json_tensor(const nlohmann::json& j, DType dtype);
/// A dense gradient (nested list) or {"indexed_slices": {...}} (int32 indices).
Gradient json_gradient(const nlohmann::json& j, DType dtype);
DType json_dtype(const nlohmann::json& c);

/// CHECKs |actual - expected| <= atol + rtol |expected| element-wise.
void check_close_json(const Tensor& actual,
                      const nlohmann::json& expected,
                      double rtol,
                      double atol,
                      const std::string& what);

/// The optimizer of an optimizer case (its "api" and "hyperparameters"); nullptr when unknown.
std::unique_ptr<train::Optimizer> make_optimizer(const nlohmann::json& c);

/// The Keras-family optimizer of a case ("keras3/..." and "keras_v2/..."); nullptr when unknown.
std::unique_ptr<train::Optimizer> make_keras_optimizer(const nlohmann::json& c);

/// Runs an optimizer case: variables, `steps` apply_gradients calls, checkpoints, final values and
/// slots, with the case's tolerance.
void run_optimizer_case(const nlohmann::json& c);

}  // namespace tapeflow::testing
