// tf::keras::activations: Keras' activation functions by name ("relu", "gelu", "softmax", ...),
// as used by the layers' `activation` option and by layers::Activation.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <tapeflow/core/export.hpp>
#include <tapeflow/core/tensor.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow::keras::activations {

using Activation = std::function<Tensor(const Tensor&)>;

/// The activation called `name`: "" and "linear" (identity), "relu", "relu6", "elu", "selu",
/// "leaky_relu" (negative slope 0.2), "sigmoid", "hard_sigmoid" (relu6(x + 3) / 6), "tanh",
/// "softmax" and "log_softmax" (last axis), "softplus", "softsign", "exponential", "gelu" (exact,
/// erf-based, Keras' default), "silu" and its alias "swish", "mish". An unknown name raises
/// InvalidArgumentError listing the known ones; `layer` (when given) is named in the message.
Activation get(std::string_view name, std::string_view layer = "");
/// The names get() knows, sorted.
std::vector<std::string> names();

/// x * Phi(x) = 0.5 x (1 + erf(x / sqrt 2)) (approximate: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715
/// x^3)))), Keras' gelu.
Tensor gelu(const Tensor& x, bool approximate = false);
/// x * sigmoid(x), Keras' silu (also called swish).
Tensor silu(const Tensor& x);

}  // namespace tapeflow::keras::activations

TAPEFLOW_API_END
