// tf::print: TensorFlow's tf.print — tensors summarized as TensorFlow prints them ("[1 2 3]",
// "[0 1 2 ... 7 8 9]"), strings as they are, separated by `sep` and ended with `end`. Inside a
// tf::function it prints at every call, with that call's values (a host statement would print
// while tracing only).
#pragma once

#include <cstdio>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include <fmt/format.h>

#include <tapeflow/core/export.hpp>
#include <tapeflow/core/tensor.hpp>

TAPEFLOW_API_BEGIN

namespace tapeflow {

struct PrintOptions {
    std::FILE* output_stream = stderr;  // TensorFlow's default, sys.stderr
    int64_t summarize = 3;              // elements shown per dimension at each end; -1: all
    std::string sep = " ";
    std::string end = "\n";
};

using PrintValue = std::variant<std::string, Tensor>;

/// tf.print(*inputs, output_stream, summarize, sep, end).
void print(const std::vector<PrintValue>& inputs, const PrintOptions& options);

/// What tf::print(a, b, ...) takes: Tensors, strings and numbers.
template <class T>
concept Printable = std::is_same_v<std::decay_t<T>, Tensor> ||
    std::is_convertible_v<const T&, std::string> || std::is_arithmetic_v<T>;

/// tf.print(a, b, ...) with the default options.
template <Printable... Args>
void print(const Args&... args) {
    std::vector<PrintValue> inputs;
    auto add = [&](const auto& a) {
        using T = std::decay_t<decltype(a)>;
        if constexpr (std::is_same_v<T, Tensor>) {
            inputs.emplace_back(a);
        } else if constexpr (std::is_convertible_v<T, std::string>) {
            inputs.emplace_back(std::string(a));
        } else {
            inputs.emplace_back(fmt::format("{}", a));
        }
    };
    (add(args), ...);
    print(inputs, PrintOptions{});
}

/// A tensor as tf.print shows it (TensorFlow's SummarizeValue with print_v2).
std::string print_string(const Tensor& t, int64_t summarize = 3);

}  // namespace tapeflow

TAPEFLOW_API_END
