// tf::print (include/tapeflow/ops/print.hpp): TensorFlow's PrintV2 layout — nested brackets, "..."
// after `summarize` elements at each end of a dimension, rows of a matrix on their own lines
// indented by one space per level — and its number format (integers as is, floats with 9 / 17
// significant digits, TensorFlow's LegacyPrecision, trailing zeros dropped).
#include <cmath>
#include <optional>

#include <tapeflow/core/error.hpp>
#include <tapeflow/ops/print.hpp>

#include "function/trace_hooks.hpp"

namespace tapeflow {
namespace {

std::string element(const Tensor& flat, int64_t i) {
    switch (flat.dtype()) {
        case DType::float32:
            return fmt::format("{:.9g}", flat.data<float>()[i]);
        case DType::float64:
            return fmt::format("{:.17g}", flat.data<double>()[i]);
        case DType::float16:
        case DType::bfloat16:
            return fmt::format("{:.4g}", flat.cast(DType::float32).data<float>()[i]);
        case DType::int32:
            return fmt::format("{}", flat.data<int32_t>()[i]);
        case DType::int64:
            return fmt::format("{}", flat.data<int64_t>()[i]);
        case DType::uint8:
            return fmt::format("{}", static_cast<int>(flat.data<uint8_t>()[i]));
        case DType::bool_:
            return flat.data<bool>()[i] ? "1" : "0";
    }
    return "?";
}

void summarize_dim(const Tensor& flat,
                   const std::vector<int64_t>& dims,
                   std::size_t d,
                   int64_t offset,
                   int64_t summarize,
                   std::string& out) {
    if (d == dims.size()) {
        out += element(flat, offset);
        return;
    }
    int64_t stride = 1;
    for (std::size_t k = d + 1; k < dims.size(); ++k)
        stride *= dims[k];
    const int64_t n = dims[d];
    out += '[';
    const bool cut = summarize >= 0 && n > 2 * summarize;
    bool first = true;
    for (int64_t i = 0; i < n; ++i) {
        if (cut && i == summarize) {
            out += d + 1 == dims.size() ? " ..." : "\n" + std::string(d + 1, ' ') + "...";
            i = n - summarize - 1;
            continue;
        }
        if (!first) out += d + 1 == dims.size() ? " " : "\n" + std::string(d + 1, ' ');
        first = false;
        summarize_dim(flat, dims, d + 1, offset + i * stride, summarize, out);
    }
    out += ']';
}

}  // namespace

std::string print_string(const Tensor& t, int64_t summarize) {
    if (!t.defined()) return "None";
    const Tensor host = t.cpu();
    std::string out;
    summarize_dim(host, host.shape().dims(), 0, 0, summarize, out);
    return out;
}

void print(const std::vector<PrintValue>& inputs, const PrintOptions& options) {
    std::vector<Tensor> tensors;
    std::vector<std::optional<std::string>> texts;  // nullopt: the next tensor
    for (const PrintValue& v : inputs) {
        if (const Tensor* t = std::get_if<Tensor>(&v)) {
            tensors.push_back(*t);
            texts.emplace_back();
        } else {
            texts.emplace_back(std::get<std::string>(v));
        }
    }
    // Inside a tf::function: a host step, printing each call's values.
    function_detail::host_step("PrintV2", tensors, [texts, options](std::span<const Tensor> in) {
        std::string line;
        std::size_t next = 0;
        for (std::size_t i = 0; i < texts.size(); ++i) {
            if (i > 0) line += options.sep;
            if (texts[i]) {
                line += *texts[i];
            } else {
                line += print_string(in[next++], options.summarize);
            }
        }
        line += options.end;
        std::fputs(line.c_str(), options.output_stream);
        std::fflush(options.output_stream);
    });
}

}  // namespace tapeflow
