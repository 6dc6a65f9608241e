// check_gradients: the tape's gradient of f against central finite differences in float64
// (flashlight's jacobianTestImpl idea). The output is contracted with a fixed random direction w,
// so one backward pass checks the whole vector-Jacobian product.
#pragma once

#include <functional>
#include <vector>

#include <tapeflow/tapeflow.hpp>

namespace tapeflow::testing {

using TensorFn = std::function<Tensor(const std::vector<Tensor>& inputs)>;

/// For every float64 input, compares d(sum(f(inputs) * w))/d(input) from the tape with central
/// differences (step `eps`), element by element, with CHECKs that name the input and element.
void check_gradients(const TensorFn& f,
                     const std::vector<Tensor>& inputs,
                     double rtol = 1e-6,
                     double atol = 1e-8,
                     double eps = 1e-6);

/// A float64 tensor of `shape` with values uniform in [lo, hi) from a fixed seed.
Tensor random_f64(const Shape& shape, double lo = -1, double hi = 1, uint64_t seed = 1);

}  // namespace tapeflow::testing
