// Keras' activations by name; gelu and silu are the fused element-wise tf::nn ops.
#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <tapeflow/core/error.hpp>
#include <tapeflow/keras/activations.hpp>
#include <tapeflow/ops/math.hpp>
#include <tapeflow/ops/nn.hpp>

namespace tapeflow::keras::activations {

Tensor gelu(const Tensor& x, bool approximate) {
    return nn::gelu(x, approximate);
}

Tensor silu(const Tensor& x) {
    return nn::silu(x);
}

namespace {

const std::map<std::string, Activation, std::less<>>& table() {
    static const std::map<std::string, Activation, std::less<>> t = {
        {"linear",
         [](const Tensor& x) {
             return x;
         }},
        {"relu",
         [](const Tensor& x) {
             return nn::relu(x);
         }},
        {"relu6",
         [](const Tensor& x) {
             return nn::relu6(x);
         }},
        {"elu",
         [](const Tensor& x) {
             return nn::elu(x);
         }},
        {"selu",
         [](const Tensor& x) {
             return nn::selu(x);
         }},
        {"leaky_relu",
         [](const Tensor& x) {
             return nn::leaky_relu(x, 0.2);
         }},
        {"sigmoid",
         [](const Tensor& x) {
             return sigmoid(x);
         }},
        {"hard_sigmoid",
         [](const Tensor& x) {
             return nn::relu6(x + 3.0) * (1.0 / 6.0);
         }},
        {"tanh",
         [](const Tensor& x) {
             return tanh(x);
         }},
        {"softmax",
         [](const Tensor& x) {
             return nn::softmax(x, -1);
         }},
        {"log_softmax",
         [](const Tensor& x) {
             return nn::log_softmax(x, -1);
         }},
        {"softplus",
         [](const Tensor& x) {
             return softplus(x);
         }},
        {"softsign",
         [](const Tensor& x) {
             return x / (1.0 + abs(x));
         }},
        {"exponential",
         [](const Tensor& x) {
             return exp(x);
         }},
        {"gelu",
         [](const Tensor& x) {
             return gelu(x);
         }},
        {"silu",
         [](const Tensor& x) {
             return silu(x);
         }},
        {"swish",
         [](const Tensor& x) {
             return silu(x);
         }},
        {"mish",
         [](const Tensor& x) {
             return x * tanh(softplus(x));
         }},
    };
    return t;
}

}  // namespace

std::vector<std::string> names() {
    std::vector<std::string> out;
    for (const auto& [name, fn] : table())
        out.push_back(name);
    return out;
}

Activation get(std::string_view name, std::string_view layer) {
    if (name.empty()) name = "linear";
    if (const auto it = table().find(name); it != table().end()) return it->second;
    throw errors::InvalidArgumentError(
        fmt::format("Unknown activation \"{}\"{}; use one of: {}",
                    name,
                    layer.empty() ? std::string() : fmt::format(" for layer \"{}\"", layer),
                    fmt::join(names(), ", ")));
}

}  // namespace tapeflow::keras::activations
